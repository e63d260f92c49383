"""``--summary PATH``: the Markdown a pull request's checks page shows, from real runs
of each command, with the mirror case (nothing to act on) beside each."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.commands import mutate_run as session
from metaeval.errors import ExitCode
from metaeval.gate_bars import Bar, decide
from metaeval.report.escape import md_code as code
from metaeval.report.summary import append_summary, gate_summary, one_line_diff
from tests.builders import results
from tests.mutation.conftest import PRICING, SURVIVOR, FakeRunner, shop_here

__all__ = ["shop_here"]  # a fixture, used by name

ROOT = Path(__file__).resolve().parents[2]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_code_spans_hold_backticks_and_stay_on_one_line() -> None:
    assert code("x = 1") == "`x = 1`"
    assert code("a `b` c") == "``a `b` c``"
    assert code("`edge`") == "`` `edge` ``"
    assert code("one\ntwo") == "`one\\ntwo`"  # the line break shown, not kept
    assert code("x" * 200).endswith("…`") and len(code("x" * 200)) == 92
    assert code("") == "(empty)"


def test_one_line_diff_is_the_first_change() -> None:
    diff = ("--- a/p.py\n+++ b/p.py\n@@ -1,3 +1,3 @@\n def f(q):\n"
            "-    if q > 10:\n+    if q >= 10:\n         return 10\n")
    assert one_line_diff(diff) == "`if q > 10:` → `if q >= 10:`"
    assert one_line_diff("--- a/p.py\n+++ b/p.py\n") == "(no diff)"


def test_summaries_are_appended(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    append_summary(path, "### one\n")
    append_summary(path, "### two\n")
    assert path.read_text(encoding="utf-8") == "### one\n\n### two\n"


def test_gate_lists_the_missed_bars_first_and_says_ok_when_none() -> None:
    decided = decide([Bar("meta-eval:refund_issued.tnr", min=0.9),
                      Bar("mutate:score", min=0.5), Bar("mutate:nothing", min=0)],
                     results(), set())
    text = gate_summary(decided)
    assert text.startswith("### ❌ metaeval gate: 2 of 3 bars fail\n")
    missed = text.split("**Bars missed:**\n")[1].split("\n\n")[0].splitlines()
    assert missed[0].startswith("- `meta-eval:refund_issued.tnr`: 0.8, bar `>= 0.9`")
    assert missed[1].startswith("- `mutate:nothing`: —") and "(missing)" in missed[1]
    ok = gate_summary(decide([Bar("mutate:score", min=0.5)], results(), set()))
    assert ok.startswith("### ✅ metaeval gate: all 1 bars met\n")
    assert "Bars missed" not in ok


def test_mutate_summary_names_the_survivor_with_its_line_and_change(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    done = invoke("mutate", f"{PRICING}:clamp_quantity", "--mutants", "no_patches",
                  "--summary", "summary.md")
    assert done.exit_code == ExitCode.FINDINGS, done.output
    text = (shop_here / "summary.md").read_text(encoding="utf-8")
    assert text.startswith("### ❌ metaeval mutate: 1 undetected mutant\n")
    assert "Mutation score **50.0%** over 2 mutants." in text
    assert "| 1 | 1 | 0 | 0 | 0 | 0 | 0 |" in text
    line = next(x for x in text.splitlines() if x.startswith("- `shop/pricing.py:"))
    assert line == ("- `shop/pricing.py:13` `flip_comparison`: `if quantity > limit:` → "
                    "`if quantity >= limit:`")


def test_mutate_summary_against_a_baseline_lists_only_new_survivors(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    args = ["mutate", f"{PRICING}:clamp_quantity", "--mutants", "no_patches", "--no-cache",
            "--baseline", "findings.json"]
    first = invoke(*args, "--summary", "first.md")
    assert first.exit_code == ExitCode.FINDINGS
    assert "**New survivors**" in (shop_here / "first.md").read_text(encoding="utf-8")
    assert invoke(*args, "--update-baseline").exit_code == ExitCode.OK
    known = invoke(*args, "--summary", "known.md")
    assert known.exit_code == ExitCode.OK, known.output
    text = (shop_here / "known.md").read_text(encoding="utf-8")
    assert text.startswith("### ✅ metaeval mutate: no new survivor\n")
    assert "1 known open" in text and "shop/pricing.py:13" not in text


def test_an_unwritable_summary_is_one_line_after_the_results(tmp_path: Path) -> None:
    (tmp_path / "not-a-dir").write_text("a file\n", encoding="utf-8")
    target = tmp_path / "not-a-dir" / "summary.md"
    done = invoke("meta-eval", str(ROOT / "meta_sets"), "--resamples", "20", "--summary",
                  str(target))
    assert done.exit_code == ExitCode.BAD_INPUT
    assert "OK: every check meets its bars" in done.stdout  # the table still shows
    assert done.stderr.startswith(f"error: {target}: cannot write:")


def test_meta_eval_summary_lists_the_bars_missed(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    ok = invoke("meta-eval", str(ROOT / "meta_sets"), "--resamples", "20", "--summary",
                str(path))
    assert ok.exit_code == ExitCode.OK, ok.output
    strict = invoke("meta-eval", str(ROOT / "meta_sets"), "--resamples", "20",
                    "--min-tnr", "0.99", "--summary", str(path))
    assert strict.exit_code == ExitCode.FINDINGS
    first, second = path.read_text(encoding="utf-8").split("\n\n### ")
    assert first.startswith("### ✅ metaeval meta-eval: all 11 checks meet their bars")
    assert "Bars missed" not in first
    assert second.startswith("❌ metaeval meta-eval: ")
    assert "- `grounded_numbers`: BELOW-MIN-TNR — TNR 0.600 \\< bar 0.990" in second


def test_judge_audit_summary_shows_the_found_biases_and_a_steady_judge_clean(
        tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    biased = invoke("judge-audit", "--judge", "biased", "--no-cache", "--summary", str(path))
    assert biased.exit_code == ExitCode.FINDINGS
    text = path.read_text(encoding="utf-8")
    assert text.startswith("### ❌ metaeval judge-audit: `biased` report only\n")
    for probe in ("position", "length", "injection"):
        assert f"- ⚠️ {probe}: FOUND" in text
    assert "180 labelled items, 20 probe(s), 50 probe question(s) (50 call(s));" in text
    assert "- pairwise injection: not run" in text
    path.unlink()
    generated = invoke("judge-audit", "--judge", "biased", "--no-cache", "--probes",
                       "generated", "--summary", str(path))
    assert generated.exit_code == ExitCode.FINDINGS
    text = path.read_text(encoding="utf-8")
    for probe in ("pairwise length", "pairwise injection"):
        assert f"- ⚠️ {probe}: FOUND" in text
    path.unlink()
    steady = invoke("judge-audit", "--judge", "steady", "--no-cache", "--summary", str(path))
    text = path.read_text(encoding="utf-8")
    assert "FOUND" not in text and "⚠️" not in text
    assert "- position: clean" in text
    mark = {0: "✅", int(ExitCode.INCONCLUSIVE): "❔"}.get(steady.exit_code, "❌")
    assert text.startswith(f"### {mark} metaeval judge-audit: `steady`")


def test_a_summary_over_a_fifo_is_one_error_never_a_read_that_waits(tmp_path: Path) -> None:
    import os

    from metaeval.errors import OutputError

    os.mkfifo(tmp_path / "summary.md")
    with pytest.raises(OutputError, match=r"cannot read it to append: .*is a fifo; expected a "
                                          r"regular file"):
        append_summary(tmp_path / "summary.md", "### one\n")
    (tmp_path / "latin.md").write_bytes(b"caf\xe9\n")
    with pytest.raises(OutputError, match="cannot read it to append: 'utf-8' codec"):
        append_summary(tmp_path / "latin.md", "### one\n")
    assert (tmp_path / "latin.md").read_bytes() == b"caf\xe9\n"
