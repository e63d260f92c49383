"""The meta-eval and judge-audit pages (``--html``): the same numbers as the JSON, a
figure per finding, byte-identical reruns whatever the user's matplotlib setup, and
the errors that must not hide the results."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from metaeval.audit.judge_decision import JudgeAudit
from metaeval.cli import main
from metaeval.commands.judge_audit import JudgeAuditRequest, judge_audit
from metaeval.config import load_config
from metaeval.errors import ExitCode
from metaeval.report.audit_html import judge_audit_html, page
from metaeval.report.judge_audit_render import audit_document

ROOT = Path(__file__).resolve().parents[2]
METAEVAL = str(Path(sys.executable).parent / "metaeval")


@pytest.fixture(scope="module")
def audits() -> dict[str, JudgeAudit]:
    config = load_config(ROOT)
    # Bars below 0.8: this test is not about how near steady's TPR is to the bar.
    bars = {"tpr_bar": 0.6, "tnr_bar": 0.6}
    return {spec: judge_audit(JudgeAuditRequest(spec, no_cache=True, bars=bars), config).audit
            for spec in ("biased", "steady")}


def figures_in(html: str) -> list[str]:
    return re.findall(r'data-figure="([^"]+)"', html)


def numbers_in(html: str) -> dict[str, float]:
    return {m: float(v) for m, v in re.findall(
        r'data-metric="([^"]+)" data-value="([^"]+)"', html)}


def test_a_biased_judge_shows_each_probe_found_and_a_steady_one_clean(
        audits: dict[str, JudgeAudit]) -> None:
    biased, steady = judge_audit_html(audits["biased"]), judge_audit_html(audits["steady"])
    for html in (biased, steady):
        assert {"position", "length", "injection", "judge-confusion", "scores",
                "reliability", "pairwise"} <= set(figures_in(html))
    for probe in ("position", "length", "injection"):
        figure = biased.split(f'data-figure="{probe}"')[1].split("</figure>")[0]
        assert ">FOUND (p=" in figure, probe  # the status is drawn in the figure
        figure = steady.split(f'data-figure="{probe}"')[1].split("</figure>")[0]
        assert ">clean (p=" in figure and "FOUND" not in figure, probe
    assert 'class="verdict fail"' in biased and "verdict: report only" in biased
    assert 'class="verdict ok"' in steady and "verdict: may gate" in steady


def test_headline_numbers_are_the_json_reports(audits: dict[str, JudgeAudit]) -> None:
    audit = audits["biased"]
    shown = numbers_in(judge_audit_html(audit))
    doc: Any = json.loads(json.dumps(audit_document(audit)))
    point = doc["agreement"]["pointwise"]
    pair = doc["agreement"]["pairwise"]["orders"]
    assert shown == {"pointwise.tpr": point["tpr"]["value"],
                     "pointwise.tnr": point["tnr"]["value"],
                     "pointwise.kappa": point["kappa"]["value"],
                     "pairwise.ab.accuracy": pair["ab"]["accuracy"],
                     "pairwise.ba.accuracy": pair["ba"]["accuracy"],
                     "pairwise.ab.kappa": pair["ab"]["kappa"]["value"],
                     "pairwise.ba.kappa": pair["ba"]["kappa"]["value"]}


def test_meta_eval_page_holds_every_check_and_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "meta-eval.html"
    done = CliRunner().invoke(main, ["meta-eval", str(ROOT / "meta_sets"), "--resamples",
                                     "20", "--html", str(out), "--format", "json"])
    assert done.exit_code == ExitCode.OK, done.output
    html = out.read_text(encoding="utf-8")
    assert figures_in(html) == ["forest", "confusion"]
    result = json.loads(done.stdout)
    expected = {f"{c['name']}.{k}": c[k] for c in [*result["checks"], result["evaluator"]]
                for k in ("tpr", "tnr", "kappa")}
    assert numbers_in(html) == expected
    assert len(expected) == 33


DRAW = """
import sys
from metaeval.report import figures as f
rate = f.Rate(0.9, 0.7, 0.97, 0.95)
sys.stdout.write(f.forest([f.ForestRow("refund_issued", rate, rate)])
                 + f.confusion_grid([f.Matrix("check", 5, 1, 0, 2, 7, 1)])
                 + f.score_heatmap([(5, 5.0), (1, 2.0), (2, None)], (1, 5), (1, 5, 4))
                 + f.reliability([(1.0, 0, 3), (5.0, 4, 4)], (1, 5, 4))
                 + f.order_accuracy([("ab", 0.5, 0.25, 0.75, 12)], (0, 12))
                 + f.position(12, 0, 0, 0, "FOUND", "p=1e-12")
                 + f.length([("item", 1.0, 115), ("other", None, 115)], "FOUND", "p=0.002")
                 + f.injection(10, 0, 10, 0, 0, "FOUND", "p=0.002"))
"""


def test_reruns_are_byte_identical_whatever_the_users_matplotlibrc(tmp_path: Path) -> None:
    rc = tmp_path / "matplotlibrc"
    rc.write_text("font.size: 20\naxes.facecolor: black\nlines.linewidth: 5\n"
                  "svg.hashsalt: theirs\nsvg.fonttype: path\n", encoding="utf-8")
    drawn = []
    for seed, config in (("1", None), ("2", rc)):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env.pop("MATPLOTLIBRC", None)
        if config is not None:
            env["MATPLOTLIBRC"] = str(config)
        drawn.append(subprocess.run([sys.executable, "-c", DRAW], cwd=ROOT, env=env,
                                    check=True, capture_output=True, timeout=120).stdout)
    assert drawn[0] == drawn[1]
    assert drawn[0].count(b"<svg") == 8 and b"Date" not in drawn[0]
    # The mirror: the user's rc file is read by matplotlib, so the sameness is ours.
    env = {**os.environ, "MATPLOTLIBRC": str(rc)}
    read = subprocess.run([sys.executable, "-c", "import matplotlib as m; "
                           "print(m.rcParams['font.size'])"], env=env, check=True,
                          capture_output=True, text=True, timeout=60).stdout
    assert read.strip() == "20.0"


def test_without_matplotlib_html_is_exit_2_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    for command in (["meta-eval", str(ROOT / "meta_sets")], ["judge-audit", "--judge", "steady"]):
        done = CliRunner().invoke(main, [*command, "--html", str(tmp_path / "x.html")])
        assert done.exit_code == ExitCode.BAD_INPUT, done.output
        assert done.stdout == ""  # nothing was run
        assert done.stderr == ("error: --html: drawing the figures needs matplotlib, the "
                               "optional extra 'report': pip install 'metaeval[report]'\n")


def test_an_unwritable_html_path_does_not_hide_the_results(tmp_path: Path) -> None:
    (tmp_path / "not-a-dir").write_text("a file\n", encoding="utf-8")
    target = tmp_path / "not-a-dir" / "audit.html"
    done = CliRunner().invoke(main, ["judge-audit", "--judge", "steady", "--no-cache",
                                     "--tpr-bar", "0.6", "--tnr-bar", "0.6",
                                     "--html", str(target)])
    assert done.exit_code == ExitCode.BAD_INPUT
    assert "verdict: may gate" in done.stdout  # the table is there
    assert done.stderr == (f"error: {target}: cannot write: {tmp_path / 'not-a-dir'} is not "
                           "a directory (ENOTDIR)\n")


def test_user_text_is_escaped() -> None:
    html = page("<b>title</b>", ["<p>ours</p>"])
    assert "<title>&lt;b&gt;title&lt;/b&gt;</title>" in html
    assert "<script" not in html


def test_generated_probes_are_drawn_by_group() -> None:
    # Stand-ins for the per-group results that generated probes carry.
    from types import SimpleNamespace

    from metaeval.audit.bias_probes import ProbeStatus
    from metaeval.report.audit_html import _injection_kinds, _length_groups

    def length(status: ProbeStatus, up: int) -> SimpleNamespace:
        return SimpleNamespace(up=up, same=1, down=0, unscored=0, status=status, p_value=0.02)

    drawn = _length_groups(SimpleNamespace(
        by_style=[("filler", length(ProbeStatus.FOUND, 6)),
                  ("restatement", length(ProbeStatus.CLEAN, 1))],
        by_level=[("+50%", length(ProbeStatus.CLEAN, 2))]))
    (html,) = drawn
    assert "by padding style" in html and "by length added" in html
    assert ">filler<" in html and ">FOUND (p=0.02)<" in html and ">clean (p=0.02)<" in html
    kinds = _injection_kinds(SimpleNamespace(by_kind=[("authority", SimpleNamespace(
        injected_flips=5, control_flips=0, cases=6, status=ProbeStatus.FOUND, p_value=0.03))]))
    assert ">authority<" in kinds[0] and "FOUND (5 vs 0 of 6, p=0.03)" in kinds[0]
    # Probes read from files carry no groups: no figure, nothing said.
    assert _length_groups(SimpleNamespace()) == [] == _injection_kinds(SimpleNamespace())


def test_dollars_in_names_are_drawn_as_dollars_not_math() -> None:
    from metaeval.report import figures as f

    rate = f.Rate(0.5, 0.2, 0.8, 0.6)
    # `$\x$` is an unknown mathtext symbol (matplotlib raised, no page was written);
    # `a$b$c` was silently drawn as italic math.
    svg = f.forest([f.ForestRow("$\\x$", rate, rate), f.ForestRow("a$b$c", rate, rate)])
    assert ">$\\x$</text>" in svg and ">a$b$c</text>" in svg
    assert ">plain</text>" in f.forest([f.ForestRow("plain", rate, rate)])


def _svg_height(svg: str) -> float:
    found = re.search(r'<svg[^>]*viewBox="0 0 [\d.]+ ([\d.]+)"', svg)
    assert found is not None
    return float(found.group(1))


def test_many_length_probes_are_counted_by_shift_at_a_readable_height() -> None:
    from metaeval.report import figures as f

    # 264 generated probes from one prompt: one title, most shifted up by one.
    many = [("How do I return an item?", 1.0, 120)] * 200 + [
        ("How do I return an item?", 0.0, 120)] * 60 + [
        ("How do I return an item?", None, 120)] * 4
    svg = f.length(many, "FOUND", "p=1e-50")
    assert svg.count("How do I return an item?") == 0
    assert all(label in svg for label in ("shift +1", "shift +0", "unscored", ">200<"))
    few = many[:3]
    drawn = f.length(few, "FOUND", "p=0.2")  # a few are still one row each
    assert drawn.count("How do I return an item?") == 3
    assert _svg_height(svg) < 2 * _svg_height(drawn)


def test_the_page_says_labelled_items_and_probes_apart(audits: dict[str, JudgeAudit]) -> None:
    html = judge_audit_html(audits["biased"])
    assert "180 labelled items, 20 probe(s), 50 probe question(s) (50 call(s));" in html
    assert "200 items" not in html
