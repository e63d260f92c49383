"""``judge-audit --recorded LOG --reply RULE``: the log's raw reply text read again
by a rule, as a live reply would be, through each record's order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from metaeval.cli import main
from tests.audit.conftest import judge_audit_json

PAIRS = [{"id": f"p{i}", "prompt": "q", "response_a": "x", "response_b": "y", "label": "a"}
         for i in range(3)]


def _files(tmp_path: Path, log: list[dict[str, object]]) -> tuple[Path, Path]:
    items, recorded = tmp_path / "items.ndjson", tmp_path / "log.jsonl"
    items.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    recorded.write_text("".join(json.dumps(r) + "\n" for r in log))
    return items, recorded


def _audit(items: Path, recorded: Path, *extra: str) -> dict[str, Any]:
    return judge_audit_json("--judge", "logged", "--items", str(items), "--recorded",
                            str(recorded), *extra)


def test_reply_rereads_the_raw_text_through_the_order_shown(tmp_path: Path) -> None:
    # Each pair: in "ab" the judge said B>>A (response_b), in "ba" A>B (shown first:
    # response_b again). The recorded verdicts say otherwise ("a"): --reply wins.
    log: list[dict[str, object]] = []
    for p in PAIRS:
        log += [{"id": p["id"], "order": "ab", "verdict": "a", "raw": "so: [[B>>A]]"},
                {"id": p["id"], "order": "ba", "verdict": "a", "raw": "so: [[A>B]]"}]
    items, recorded = _files(tmp_path, log)
    as_logged = _audit(items, recorded)
    reread = _audit(items, recorded, "--reply", "arena")
    as_rows = {k: o["correct"] for k, o in as_logged["agreement"]["pairwise"]["orders"].items()}
    re_rows = {k: o["correct"] for k, o in reread["agreement"]["pairwise"]["orders"].items()}
    assert as_rows == {"ab": 3, "ba": 3}
    assert re_rows == {"ab": 0, "ba": 0}  # b, consistently: no position flip
    assert reread["position"]["consistent"] == 3
    assert reread["judge"]["version"] != as_logged["judge"]["version"]
    unread = _audit(items, recorded, "--reply", "mt-bench")  # no [[A]]/[[B]]/[[C]] in it
    assert unread["agreement"]["unscored"] == 6


def test_reply_is_refused_without_a_log_and_for_a_judge_metaeval_builds(
        tmp_path: Path) -> None:
    items, recorded = _files(tmp_path, [{"id": "p0", "order": "ab", "verdict": "a"}])
    runner = CliRunner()
    live = runner.invoke(main, ["judge-audit", "--judge", "steady", "--items", str(items),
                                "--reply", "arena"])
    assert live.exit_code == 2 and "--reply: applies to --recorded only" in live.output
    built = runner.invoke(main, ["judge-audit", "--judge", "steady", "--items", str(items),
                                 "--recorded", str(recorded), "--reply", "arena"])
    assert built.exit_code == 2 and "--reply: judge 'steady' is one metaeval builds" \
        in built.output
    bad = runner.invoke(main, ["judge-audit", "--judge", "x", "--items", str(items),
                               "--recorded", str(recorded), "--reply", "(?P<nothing>x)"])
    assert bad.exit_code == 2 and "--reply: got '(?P<nothing>x)'" in bad.output
