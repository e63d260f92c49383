"""The judge-audit page's human side in headless Chromium, on the AltTest authors'
MT-Bench data (../shared/data/alttest): the annotators, the human ceiling and the
alternative annotator test per annotator are tables, not a terminal dump, and the
page fits a 1,280 px window.

Marked ``browser``: left out of the default run, run by ``.ci/run``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.audit.test_alt_test_real_data import MTBENCH
from tests.browser import Browser
from tests.label.serving import METAEVAL

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (MTBENCH / "human_annotations.json").is_file(),
                                 reason="../shared/data/alttest is not beside the repository")]
ROWS = ("[...document.querySelectorAll('#%s tr')].slice(1).map("
        "(r) => [...r.cells].map((c) => c.textContent))")


def test_the_human_side_is_tables_that_fit_a_1280_px_window(binary: str,
                                                            tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")
    for args in (["judge-import", "annotations", str(MTBENCH / "human_annotations.json"),
                  "--judge-labels", str(MTBENCH / "llm_annotations.json"), "--judge",
                  "gpt-4o", "--items", "mt.ndjson", "--recorded", "gpt4o.jsonl"],
                 ["judge-audit", "--judge", "gpt-4o", "--items", "mt.ndjson", "--recorded",
                  "gpt4o.jsonl", "--alt-epsilon", "0.2", "--no-cache", "--html", "audit.html",
                  "--format", "json"]):
        done = subprocess.run([METAEVAL, *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode in (0, 1), done.stderr
    alt = json.loads(done.stdout)["annotators"][0]["alt_test"]
    with Browser(binary, (tmp_path / "audit.html").as_uri(), width=1280) as browser:
        browser.wait_for("document.readyState === 'complete'")
        assert browser.evaluate("document.getElementById('annotators').tagName") == "SECTION"
        assert browser.evaluate("document.querySelectorAll('pre').length") == 0
        rows = browser.evaluate(ROWS % "alt-test-pairwise")
        # One row per annotator, with the figures of the JSON report.
        assert [r[0] for r in rows] == [a["annotator"] for a in alt["annotators"]]
        assert [r[6] for r in rows] == [f"{a['p_value']:.3g}" for a in alt["annotators"]]
        # The published result: the null rejected for no annotator.
        assert all(r[8] == "no: keep the annotator" for r in rows)
        ceiling = browser.evaluate(ROWS % "ceiling-pairwise")
        assert [r[0].split(" (")[0] for r in ceiling] == ["annotators with each other",
                                                          "the judge with the annotators"]
        # Nothing wider than the window: no horizontal scroll on the page.
        assert browser.evaluate("document.documentElement.scrollWidth") <= 1280
