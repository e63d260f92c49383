"""A third annotator on published data: the AltTest authors' MT-Bench items
(../shared/data/alttest/mtbench, with their texts from ``prompts.json``) are
imported, 10 of them labelled on the page by keyboard alone, and judge-audit
reads that file beside the other annotators: the alternative annotator test's
figures move exactly as a hand computation with the new labels says.

Marked ``browser``: left out of the default run, run by ``.ci/run``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.audit.hand_alt import alt_by_hand
from tests.audit.test_alt_test_real_data import MTBENCH
from tests.browser import Browser
from tests.label.serving import METAEVAL, start_label
from tests.label.test_label_browser import press

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (MTBENCH / "prompts.json").is_file(),
                                 reason="../shared/data/alttest is not beside the repository")]
SOURCE = {"a": "model_a", "b": "model_b", "tie": "tie"}
LABELLED = 10


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([METAEVAL, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def audit(project: Path, *extra: str) -> Any:
    done = run("judge-audit", "--judge", "gpt-4o", "--items", "mt.ndjson", "--recorded",
               "gpt4o.jsonl", "--alt-epsilon", "0.2", "--no-cache", "--format", "json", *extra,
               cwd=project)
    assert done.returncode == 1, done.stderr  # report only: the published result
    return json.loads(done.stdout)["annotators"][0]["alt_test"]


def test_ten_items_labelled_as_a_third_annotator_move_the_alt_test_as_by_hand(
        binary: str, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")
    imported = run("judge-import", "annotations", str(MTBENCH / "human_annotations.json"),
                   "--judge-labels", str(MTBENCH / "llm_annotations.json"), "--judge", "gpt-4o",
                   "--items", "mt.ndjson", "--recorded", "gpt4o.jsonl",
                   "--texts", str(MTBENCH / "prompts.json"), cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.splitlines()[0] == "120 items -> mt.ndjson"  # every one with text
    before = audit(tmp_path)

    process, url = start_label("mt.ndjson", "--labels", "me.jsonl", "--annotator", "me",
                               cwd=tmp_path)
    try:
        with Browser(binary, url) as browser:
            browser.wait_for("document.body.dataset.ready === '1'")
            shown: Any = browser.evaluate(
                f"state.shown.slice(0, {LABELLED}).map((e) => ({{id: e.id, shown: e.shown, "
                "left: e.left, right: e.right}))")
            # The texts the annotators judged are on the page, not the import's note.
            assert all(e["left"] and e["right"] and "no text" not in e["left"] for e in shown)
            for n in range(1, len(shown) + 1):
                press(browser, "1" if n % 3 else "t")  # left better, and now and then a tie
                browser.wait_for(f"document.body.dataset.saved === '{n}'")
    finally:
        process.kill()
        process.communicate(timeout=10)
    mine: dict[str, str | int] = {}
    for n, entry in enumerate(shown, start=1):
        left = "a" if entry["shown"] == "ab" else "b"
        mine[entry["id"]] = SOURCE[left if n % 3 else "tie"]
    rows = [json.loads(line) for line in (tmp_path / "me.jsonl").read_text().splitlines()]
    assert {r["item_id"]: SOURCE[r["label"]] for r in rows} == mine

    after = audit(tmp_path, "--labels", "me.jsonl")
    humans: dict[str, dict[str, str | int]] = json.loads(
        (MTBENCH / "human_annotations.json").read_text())
    judge = json.loads((MTBENCH / "llm_annotations.json").read_text())["gpt-4o"]
    # By hand, with the third annotator's 10 labels among each item's other labels. "me"
    # labelled fewer than the 30 items the test needs, so only the three are tested.
    ps, rejected, _ = alt_by_hand({**humans, "me": mine}, judge, 0.2, tested=list(humans))
    assert [a["annotator"] for a in after["annotators"]] == list(humans)
    assert [a["p_value"] for a in after["annotators"]] == pytest.approx(ps, abs=1e-12)
    assert [a["rejected"] for a in after["annotators"]] == rejected
    # And the labels did move them: the same computation without them gives the old ones.
    ps_before, _, _ = alt_by_hand(humans, judge, 0.2)
    assert [a["p_value"] for a in before["annotators"]] == pytest.approx(ps_before, abs=1e-12)
    assert ps != pytest.approx(ps_before, abs=1e-6)
