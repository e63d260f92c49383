"""The HTML reports in a real browser: headless Chromium opens each page from disk
with no network, lets its scripts run, and the rendered page is checked.

Marked ``browser`` and left out of the default run; ``.ci/run`` installs Chromium
and runs them with ``METAEVAL_REQUIRE_BROWSER=1``, so a missing browser fails
there instead of skipping.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import Browser
from tests.mutation.conftest import copy_shop

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
METAEVAL = str(Path(sys.executable).parent / "metaeval")
SURVIVOR = "shop/pricing.py::clamp_quantity::flip_comparison::0"


def metaeval(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([METAEVAL, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


CLICK_MUTANT = """
((id) => {
  let hit = null;
  const walk = (n) => {
    if (hit) return;
    if (n.nodeType === 1 && n.getAttribute("data-mutant-id") === id
        && n.classList.contains("mutant-dot")) { hit = n; return; }
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes) walk(c);
  };
  walk(document.body);
  if (!hit) return false;
  hit.dispatchEvent(new MouseEvent("click", {bubbles: true, composed: true}));
  return true;
})(%s)
"""

FIGURES = """
[...document.querySelectorAll("figure")].map(f => {
  const r = f.querySelector("svg").getBoundingClientRect();
  return [f.dataset.figure, r.width, r.height, f.querySelector("svg").textContent];
})
"""

NUMBERS = """
[...document.querySelectorAll("[data-metric]")].map(
  e => [e.dataset.metric, e.textContent, Number(e.dataset.value)])
"""

NOTHING_FETCHED = 'performance.getEntriesByType("resource").length === 0'


@pytest.fixture(scope="module")
def mutation_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = copy_shop(tmp_path_factory.mktemp("shop"))
    page = project.parent / "mutation.html"
    done = metaeval("mutate", "--jobs", "2", "--no-cache", "--html", str(page),
                    "--baseline", "findings.json", "--update-baseline", cwd=project)
    assert page.is_file(), done.stderr
    return page


def test_the_mutation_report_shows_the_survivor_inline_with_its_diff(
        binary: str, mutation_page: Path) -> None:
    with Browser(binary, f"{mutation_page.as_uri()}#mutant/shop/pricing.py") as page:
        page.wait_for(_deep_text_has("def clamp_quantity"))  # the viewer drew the source
        before = page.text()
        assert "pricing.py" in before and "Survived ( 2 )" in before
        assert "if quantity >= limit" not in before  # the diff shows once it is chosen
        assert page.evaluate(CLICK_MUTANT % json.dumps(SURVIVOR)) is True
        page.wait_for(_deep_text_has("if quantity >= limit"))
        after = page.text()
        assert "if quantity > limit" in after and "if quantity >= limit" in after
        assert "flip_comparison Survived ( 13 : 8 )" in after  # status, line and column
        assert page.evaluate(NOTHING_FETCHED) is True


def test_the_findings_page_shows_the_tracked_survivor_at_its_line(
        binary: str, mutation_page: Path) -> None:
    project = mutation_page.parent / "shop_project"
    findings = json.loads((project / "findings.json").read_text(encoding="utf-8"))
    (entry,) = [f for f in findings["findings"] if f["mutant_id"] == SURVIVOR]
    page_file = mutation_page.parent / "findings.html"
    done = metaeval("findings", "export", "--html", str(page_file), "--file", "findings.json",
                    cwd=project)
    assert done.returncode == 0, done.stderr
    # Every finding is in shop/, which the viewer strips as the common prefix.
    with Browser(binary, f"{page_file.as_uri()}#mutant/pricing.py") as page:
        page.wait_for(_deep_text_has("def clamp_quantity"))
        assert "if quantity >= limit" not in page.text()
        assert page.evaluate(CLICK_MUTANT % json.dumps(entry["fingerprint"][:12])) is True
        page.wait_for(_deep_text_has("if quantity >= limit"))
        assert "flip_comparison Survived ( 13 : 1 )" in page.text()
        assert page.evaluate(NOTHING_FETCHED) is True


def _deep_text_has(needle: str) -> str:
    from tests.browser import DEEP_TEXT

    return f"{DEEP_TEXT.strip()}.includes({json.dumps(needle)})"


@pytest.mark.parametrize("spec", ["biased", "steady"])
def test_judge_audit_figures_render_and_numbers_match_the_json(
        binary: str, tmp_path: Path, spec: str) -> None:
    page_file = tmp_path / f"{spec}.html"
    done = metaeval("judge-audit", "--judge", spec, "--no-cache", "--format", "json",
                    "--html", str(page_file))
    document = json.loads(done.stdout)
    with Browser(binary, page_file.as_uri()) as page:
        page.wait_for('document.readyState === "complete"')
        figures = {name: (width, height, text)
                   for name, width, height, text in page.evaluate(FIGURES)}
        assert {"position", "length", "injection", "pairwise"} <= set(figures)
        assert all(w > 100 and h > 50 for w, h, _ in figures.values()), figures
        found = "FOUND" if spec == "biased" else "clean"
        for probe in ("position", "length", "injection"):
            assert f"{found} (p=" in figures[probe][2], probe
            assert document[probe]["status"] == found
        shown = {m: (text, value) for m, text, value in page.evaluate(NUMBERS)}
        point = document["agreement"]["pointwise"]
        for metric in ("tpr", "tnr", "kappa"):
            value = point[metric]["value"]
            assert shown[f"pointwise.{metric}"] == (f"{value:.2f}", value)
        verdict = page.evaluate('document.getElementById("verdict").textContent')
        assert verdict == f"verdict: {document['verdict']}"
        assert page.evaluate(NOTHING_FETCHED) is True


def test_meta_eval_figures_render_and_numbers_match_the_json(
        binary: str, tmp_path: Path) -> None:
    page_file = tmp_path / "meta-eval.html"
    done = metaeval("meta-eval", "--resamples", "50", "--format", "json", "--html",
                    str(page_file))
    document = json.loads(done.stdout)
    with Browser(binary, page_file.as_uri()) as page:
        page.wait_for('document.readyState === "complete"')
        figures = {name: (w, h) for name, w, h, _ in page.evaluate(FIGURES)}
        assert set(figures) == {"forest", "confusion"}
        assert all(w > 100 and h > 100 for w, h in figures.values()), figures
        shown = {m: (text, value) for m, text, value in page.evaluate(NUMBERS)}
        checks = [*document["checks"], document["evaluator"]]
        assert len(shown) == 3 * len(checks)
        for check in checks:
            for metric in ("tpr", "tnr", "kappa"):
                assert shown[f"{check['name']}.{metric}"] == (f"{check[metric]:.2f}",
                                                              check[metric])
