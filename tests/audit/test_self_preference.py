"""The sixth probe, self-preference: a registered unit that touches nothing but
its own module (issue 46), FOUND on a judge that favours its own family's responses
and clean on one that errs alike both ways, with its own mirrored control."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scipy.stats import fisher_exact

from metaeval.audit.probes import PROBES
from metaeval.audit.probes.self_preference import family
from tests.audit.conftest import judge_audit

PACKAGE = Path(__file__).resolve().parents[2] / "metaeval"


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _items(tmp_path: Path, n: int = 40) -> tuple[Path, list[dict[str, Any]]]:
    """``n`` pairs: the gpt side is ``a`` on even pairs and ``b`` on odd ones; people
    prefer the gpt side on every third pair."""
    rows = []
    for i in range(n):
        gpt_side = "a" if i % 2 == 0 else "b"
        other = "b" if gpt_side == "a" else "a"
        authors = {gpt_side: "gpt-4o-mini", other: "llama-3-8b"}
        rows.append({"id": f"p{i}", "prompt": f"q{i}", "response_a": f"A{i}",
                     "response_b": f"B{i}", "label": gpt_side if i % 3 == 0 else other,
                     "metadata": {"authors": authors}})
    return _write(tmp_path / "pairs.ndjson", rows), rows


def _log(path: Path, rows: list[dict[str, Any]], pick: Any) -> Path:
    return _write(path, [{"id": r["id"], "order": o, "verdict": pick(r, n)}
                         for n, r in enumerate(rows) for o in ("ab", "ba")])


def _gpt_side(row: dict[str, Any]) -> str:
    side: str = next(side for side, who in row["metadata"]["authors"].items()
                     if who.startswith("gpt"))
    return side


def _audit(items: Path, log: Path, judge: str = "gpt-4o") -> dict[str, Any]:
    result = judge_audit("--judge", judge, "--items", str(items), "--recorded", str(log),
                         "--format", "json")
    assert result.exit_code in (0, 1, 4), result.output  # measured, decided or not
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_a_judge_choosing_its_own_family_when_people_did_not_is_found(tmp_path: Path
                                                                         ) -> None:
    items, rows = _items(tmp_path)
    # Right on every pair but every fourth one where people preferred the other family:
    # there it picks its own.
    def pick(r: dict[str, Any], n: int) -> str:
        return _gpt_side(r) if r["label"] != _gpt_side(r) and n % 4 == 0 else r["label"]
    document = _audit(items, _log(tmp_path / "log.jsonl", rows, pick))
    probe = document["self_preference"]
    assert probe["status"] == "FOUND"
    assert probe["family"] == "gpt"
    # The counts, from the rows as written, and the p-value from scipy on them.
    own_better = sum(r["label"] == _gpt_side(r) for r in rows) * 2
    other_better = len(rows) * 2 - own_better
    for_own = sum(2 for n, r in enumerate(rows) if r["label"] != _gpt_side(r) and n % 4 == 0)
    assert (probe["own_better"], probe["against_own"], probe["other_better"],
            probe["for_own"]) == (own_better, 0, other_better, for_own)
    _, p = fisher_exact([[for_own, other_better - for_own], [0, own_better]],
                        alternative="greater")
    assert abs(probe["p_value"] - p) < 1e-12
    assert "self-preference bias FOUND" in document["reasons"]
    checks = {(c["judge"], c["probe"]): c["got"] for c in document["controls"]["checks"]}
    assert checks[("biased", "self-preference")] == "FOUND"
    assert checks[("steady", "self-preference")] == "clean"


def test_a_judge_that_errs_alike_both_ways_is_clean(tmp_path: Path) -> None:
    items, rows = _items(tmp_path)
    # Wrong on every fifth pair, whichever family people preferred.
    def pick(r: dict[str, Any], n: int) -> str:
        return ("b" if r["label"] == "a" else "a") if n % 5 == 0 else r["label"]
    probe = _audit(items, _log(tmp_path / "log.jsonl", rows, pick))["self_preference"]
    assert probe["status"] == "clean"
    assert probe["for_own"] > 0 and probe["against_own"] > 0


def test_another_family_judging_the_same_pairs_is_not_asked(tmp_path: Path) -> None:
    items, rows = _items(tmp_path)
    document = _audit(items, _log(tmp_path / "log.jsonl", rows, lambda r, n: _gpt_side(r)),
                      judge="claude-3-opus")
    assert document["self_preference"]["status"] == "not run"
    assert document["self_preference"]["family"] == "claude"
    assert not any(c["probe"] == "self-preference" for c in document["controls"]["checks"])


def test_items_with_no_authors_leave_every_other_line_as_it_was(tmp_path: Path) -> None:
    rows = [{"id": f"p{i}", "prompt": "q", "response_a": "A", "response_b": "B",
             "label": "a"} for i in range(6)]
    items = _write(tmp_path / "plain.ndjson", rows)
    log = _log(tmp_path / "log.jsonl", rows, lambda r, n: "a")
    result = judge_audit("--judge", "gpt-4o", "--items", str(items), "--recorded", str(log))
    assert "self-preference" not in result.output
    document = _audit(items, log)
    assert document["self_preference"]["status"] == "not run"
    assert not any("self-preference" in r for r in document["reasons"])


def test_a_family_is_the_leading_letters_of_a_model_name() -> None:
    assert [family(n) for n in ("gpt-4o-mini", "Claude-3", "llama3", "4o", "")] == [
        "gpt", "claude", "llama", "", ""]


def test_the_probe_is_one_unit_named_nowhere_else_in_the_package() -> None:
    unit = PROBES["self-preference"]
    assert unit.key == "self_preference"
    named = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                   if "self_preference" in p.read_text(encoding="utf-8")
                   or "self-preference" in p.read_text(encoding="utf-8"))
    assert named == ["audit/probes/__init__.py", "audit/probes/self_preference.py"]
