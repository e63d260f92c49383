"""Every input is used or refused (issue 45): a walk over every command's click
options, so that the next option cannot be silently ignored.

Two walks. One gives every option that keeps a single value twice: click would keep
the last and drop the first without a word, so the command line refuses it before
any command runs (``metaeval.cli.repeats``). The other classifies every option and
argument that names data or a filter (a path, or free text): each is an output (it
is written, not matched), free text that names nothing to match, or an input with a
scenario here that gives it something that matches nothing and sees it refused (not
exit 0, the value named), or a test elsewhere that does (``VOUCHED``). An option
added without a class fails the walk."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.cli.repeats import once_only
from tests.audit.airline import airline_project, is_bad
from tests.importers.runs.conftest import REQUEST
from tests.loaders.conftest import write_csv

REPO = Path(__file__).resolve().parents[2]


def commands(group: click.Group = main, prefix: tuple[str, ...] = ()
             ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


def names_data(param: click.Parameter) -> bool:
    """A path, or free text (a filter, a selector, a name): what can match nothing."""
    return isinstance(param.type, click.Path | click.types.StringParamType)


EVERY = [(" ".join(path), param) for path, command in commands() for param in command.params]
DATA = sorted({(cmd, param.name or "") for cmd, param in EVERY if names_data(param)})

OUTPUT = {
    ("meta-eval", "html_path"), ("meta-eval", "summary_path"), ("gate", "summary_path"),
    ("judge-audit", "write_probes"), ("judge-audit", "html_path"),
    ("judge-audit", "summary_path"), ("judge-audit", "calibration_path"),
    ("judge-audit", "cache_path"), ("import", "output"), ("label", "labels_path"),
    ("label", "output"), ("findings accept", "findings_file"),
    ("findings export", "sarif_file"), ("findings export", "html_file"),
    ("mutate", "report_path"), ("mutate", "cache_path"), ("mutate", "sarif_path"),
    ("mutate", "html_path"), ("mutate", "shard_out"), ("mutate", "write_timings"),
    ("mutate", "write_coverage"), ("mutate", "summary_path"),
    # A findings baseline: written with --update-baseline; missing, every survivor is
    # new and the run fails (exit 1), never a green.
    ("mutate", "baseline_path"),
    *((f"judge-import {kind}", name) for kind in ("mt-bench-pair", "mt-bench-single",
                                                   "arena-hard", "alpaca-eval", "codes",
                                                   "annotations", "auto")
      for name in ("items_out", "recorded_out") if (kind, name) != ("codes", "items_out")),
    ("judge-import-llmbar", "items_out"), ("judge-import-llmbar", "recorded_out"),
    ("split", "output"),
    ("judge-mutants", "cache_path"), ("judge-mutants", "sarif_path"),
    ("judge-mutants", "summary_path"),
    # A findings baseline, as mutate's: missing, every survivor is new (exit 1).
    ("judge-mutants", "findings_path"),
}
"""Written, not matched: a path given is where the output goes."""

TEXT = {
    ("findings accept", "reason"), ("findings accept", "until_text"), ("findings accept", "by"),
    ("mutate", "ray_address"), ("init", "package"), ("label", "annotator"),
    ("judge-import codes", "id_field"), ("judge-import codes", "code_field"),
    ("judge-import codes", "order_field"), ("judge-import codes", "sample_field"),
    ("judge-import codes", "codes"), ("judge-import annotations", "maps"),
    ("judge-import annotations", "judge"),
    *((f"judge-import {kind}", "prefix") for kind in ("mt-bench-pair", "mt-bench-single",
                                                      "arena-hard", "alpaca-eval", "auto")),
    ("judge-import-llmbar", "prefix"),
}
"""Free text that names nothing to match (a reason, a name given to what is written,
a field of the log read, checked when read)."""

VOUCHED = {
    ("mutate", "since_ref"): "tests/mutation/find/test_since.py::"
                             "test_an_unknown_ref_is_an_input_error_naming_it",
    ("mutate", "merge_dirs"): "tests/mutation/test_mutate_shards.py::"
                              "test_a_missing_or_doubled_shard_fails_the_merge_naming_it",
    ("mutate", "operators"): "metaeval mutate --operators nope: refused, naming the operators",
    ("mutate", "shard"): "tests/mutation/test_mutate_shards.py::test_a_bad_shard_exits_2_naming_it",
    ("findings prune", "paths"): "planned(): a target that does not exist is refused, as "
                                 "mutate's PATHS (below)",
    ("findings show", "ref"): "findings_file.find: no finding 'x' is refused (exit 2)",
    ("findings accept", "ref"): "findings_file.find: no finding 'x' is refused (exit 2)",
    ("findings diff", "old"): "a missing OLD is the empty baseline of a first run "
                              "(docs/findings.md); NEW is refused (below)",
    ("judge-audit", "judges"): "an unknown judge is refused (tests/audit/test_judge_audit_cli.py)",
    ("judge-audit", "panels"): "a panel of fewer than two judges, or of a judge the log does "
    "not hold, is refused (tests/audit/test_judges_side_by_side.py)",
    ("judge-audit", "gate_name"): "a --gate naming no judge audited is refused "
    "(tests/audit/test_judges_side_by_side.py)",
    ("judge-audit", "reply"): "a reply rule is parsed and refused when bad",
    ("judge-audit", "scale_text"): "LOW-HIGH, parsed and refused when bad",
    ("judge-audit", "label_scale_text"): "LOW-HIGH, parsed and refused when bad",
    ("judge-audit", "label_classes"): "declared classes: a label outside them is refused on "
                                      "reading (tests/audit/test_categorical.py)",
    ("validate", "scale_text"): "LOW-HIGH, parsed and refused when bad",
    ("judge-mutants", "spec"): "an unknown judge is refused, as judge-audit's",
    ("judge-mutants", "reply"): "a reply rule is parsed and refused when bad",
    ("judge-mutants", "scale_text"): "LOW-HIGH, parsed and refused when bad",
    ("judge-mutants", "label_scale_text"): "LOW-HIGH, parsed and refused when bad",
    ("judge-mutants", "operators"): "tests/audit/test_judge_mutant_operators.py::"
                                    "test_an_unknown_operator_name_is_refused_with_the_names_"
                                    "there_are",
    ("judge-import annotations", "text_fields"):
        "tests/loaders/test_annotation_texts.py::"
        "test_a_missing_text_names_the_item_and_field_and_fields_can_be_renamed",
}
"""Shown used or refused elsewhere (a test, or a check of the value itself)."""

MISSING = ["nope.jsonl"]


def scenario(args: list[str], said: str) -> tuple[list[str], str]:
    return args, said


SCENARIOS: dict[tuple[str, str], tuple[list[str], str]] = {
    ("meta-eval", "paths"): scenario(["meta-eval", "nope.jsonl"], "nope.jsonl"),
    ("meta-eval", "baseline"): scenario(["meta-eval", "--labels", "labels.csv", "--baseline",
                                         "nope.json"], "nope.json"),
    ("meta-eval", "labels"): scenario(["meta-eval", "--labels", "nope.csv"], "nope.csv"),
    ("meta-eval", "runs"): scenario(["meta-eval", "--labels", "labels.csv", "--runs",
                                     "anthropic:nope.jsonl"], "nope.jsonl"),
    ("meta-eval", "by"): scenario(["meta-eval", "--labels", "labels.csv", "--by",
                                   "metadata.nokey"], "nokey"),
    ("validate", "paths"): scenario(["validate", "nope.jsonl"], "nope.jsonl"),
    ("validate", "recorded"): scenario(["validate", "--recorded", "nope.jsonl"], "nope.jsonl"),
    ("gate", "results"): scenario(["gate", "nope.json"], "nope.json"),
    ("gate", "calibration_path"): scenario(["gate", "meta.json", "--calibration",
                                            "nope.json"], "nope.json"),
    ("import", "paths"): scenario(["import", "anthropic", "nope.jsonl", "-o", "o.jsonl"],
                                  "nope.jsonl"),
    ("import", "label_from"): scenario(["import", "anthropic", "logs.jsonl", "-o", "o.jsonl",
                                        "--label-from", "nope_scorer"], "nope_scorer"),
    ("findings list", "findings_file"): scenario(["findings", "list", "--file", "nope.json"],
                                                 "nope.json"),
    ("findings show", "findings_file"): scenario(["findings", "show", "x", "--file",
                                                  "nope.json"], "nope.json"),
    ("findings prune", "findings_file"): scenario(["findings", "prune", "--file",
                                                   "nope.json"], "nope.json"),
    ("findings export", "findings_file"): scenario(["findings", "export", "--sarif", "o.sarif",
                                                    "--file", "nope.json"], "nope.json"),
    ("findings diff", "new"): scenario(["findings", "diff", "nope.json", "nope2.json"],
                                       "nope2.json"),
    ("mutate", "paths"): scenario(["mutate", "nope.py"], "nope.py"),
    ("mutate", "mutants_dir"): scenario(["mutate", "--mutants", "nope"], "nope"),
    ("mutate", "timings_path"): scenario(["mutate", "--timings", "nope.json"], "nope.json"),
    ("mutate", "coverage_path"): scenario(["mutate", "--coverage", "nope.json"], "nope.json"),
    ("label", "paths"): scenario(["label", "nope.jsonl", "--labels", "o.csv", "--annotator",
                                  "a", "--no-browser"], "nope.jsonl"),
    ("label", "compare_with"): scenario(["label", "runs", "--labels", "o.jsonl",
                                         "--annotator", "a", "--no-browser", "--compare-with",
                                         "nope.jsonl"], "nope.jsonl"),
    ("label", "recorded"): scenario(["label", "runs", "--labels", "o.jsonl",
                                     "--annotator", "a", "--no-browser", "--recorded",
                                     "logs.jsonl"], "logs.jsonl"),
    ("label", "next_for"): scenario(["label", "runs", "--labels", "o.jsonl",
                                     "--annotator", "a", "--no-browser", "--next-for",
                                     "nope.json"], "nope.json"),
    ("validate", "labels"): scenario(["validate", "--labels", "nope.csv"], "nope.csv"),
    ("validate", "runs"): scenario(["validate", "--runs", "anthropic:nope.jsonl"],
                                   "nope.jsonl"),
    ("split", "paths"): scenario(["split", "nope.ndjson"], "nope.ndjson"),
    ("split", "labels"): scenario(["split", "items.ndjson", "--labels", "nope.jsonl"],
                                  "nope.jsonl"),
    ("init", "root"): scenario(["init", "--path", "nope"], "nope"),
    ("judge-audit", "items_paths"): scenario(["judge-audit", "--judge", "steady", "--items",
                                              "nope.ndjson"], "nope.ndjson"),
    ("judge-audit", "recorded"): scenario(["judge-audit", "--judge", "steady", "--items",
                                           "items.ndjson", "--recorded", "nope.jsonl"],
                                          "nope.jsonl"),
    ("judge-audit", "label_files"): scenario(["judge-audit", "--judge", "steady", "--items",
                                              "items.ndjson", "--labels", "nope.jsonl"],
                                             "nope.jsonl"),
    ("judge-mutants", "items_paths"): scenario(["judge-mutants", "--judge", "steady",
                                                "--items", "nope.ndjson"], "nope.ndjson"),
    ("judge-mutants", "recorded"): scenario(["judge-mutants", "--judge", "steady", "--items",
                                             "items.ndjson", "--recorded", "nope.jsonl"],
                                            "nope.jsonl"),
    ("judge-mutants", "label_files"): scenario(["judge-mutants", "--judge", "steady",
                                                "--items", "items.ndjson", "--labels",
                                                "nope.jsonl"], "nope.jsonl"),
}
"""Inputs given something that matches nothing: refused, naming it."""


def exists_checked(cmd: str, name: str) -> bool:
    """A path click itself refuses when it does not exist."""
    param = next(p for c, p in EVERY if c == cmd and p.name == name)
    return isinstance(param.type, click.Path) and bool(param.type.exists)


def test_every_option_that_names_data_or_a_filter_is_classified() -> None:
    classes = [OUTPUT, TEXT, set(VOUCHED), set(SCENARIOS)]
    for key in DATA:
        owners = [c for c in classes if key in c]
        if exists_checked(*key):
            continue  # click refuses a path that does not exist
        assert len(owners) == 1, (
            f"{key}: {'unclassified' if not owners else 'in two classes'}: an option that "
            "names data or a filter is an output, free text, or an input with a scenario")
    known = set(DATA)
    assert not {*OUTPUT, *TEXT, *VOUCHED, *SCENARIOS} - known, "a stale entry"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    airline_project(tmp_path, 5, 4)
    write_csv(tmp_path / "labels.csv", [
        {"run_id": f"t{t:02d}-trial{k}", "check": "*",
         "label": "fail" if is_bad(t, k) else "pass", "annotator": "ann", "rationale": ""}
        for t in range(5) for k in range(4)])
    (tmp_path / "logs.jsonl").write_text(json.dumps(REQUEST) + "\n")
    (tmp_path / "meta.json").write_text(json.dumps({
        "checks": [], "evaluator": {"name": "evaluator", "n": 20, "kappa": 0.9}}))
    with (tmp_path / "pyproject.toml").open("a") as f:
        f.write('\n[tool.metaeval.gate]\n"meta-eval:evaluator.kappa" = 0.5\n')
    (tmp_path / "items.ndjson").write_text("".join(
        json.dumps({"id": f"i{i}", "prompt": "p", "response": "r", "label": "pass"}) + "\n"
        for i in range(4)))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_gate_scenario_passes_without_the_bad_value(project: Path) -> None:
    # The mirror of ("gate", "calibration_path"): the same result file alone passes.
    done = CliRunner().invoke(main, ["gate", "meta.json"], catch_exceptions=False)
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize("key", sorted(SCENARIOS), ids=" ".join)
def test_an_input_that_matches_nothing_is_refused_naming_it(
        project: Path, key: tuple[str, str]) -> None:
    args, said = SCENARIOS[key]
    done = CliRunner().invoke(main, args, catch_exceptions=False)
    assert done.exit_code != 0, done.output
    assert said in done.output, done.output


@pytest.mark.parametrize("key", [("judge-audit", "alt_epsilon")], ids=" ".join)
def test_an_option_that_cannot_apply_is_refused(project: Path, key: tuple[str, str]) -> None:
    # The repository's judge items: one label each, so no alternative annotator test.
    done = CliRunner().invoke(main, ["judge-audit", "--judge", "steady", "--items",
                                     str(REPO / "meta_sets" / "judge"), "--cache", "c.sqlite",
                                     "--alt-epsilon", "0.1"], catch_exceptions=False)
    assert done.exit_code == 2 and "--alt-epsilon" in done.output, done.output


SINGLE = sorted({(cmd, param.opts[0], bool(getattr(param, "is_flag", False)))
                 for cmd, param in EVERY if once_only(param)})


@pytest.mark.parametrize(("cmd", "opt", "flag"), SINGLE,
                         ids=[f"{c} {o}" for c, o, _ in SINGLE])
def test_an_option_that_keeps_one_value_given_twice_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cmd: str, opt: str,
        flag: bool) -> None:
    monkeypatch.chdir(tmp_path)  # nothing runs: the refusal comes first
    given = [opt] if flag else [opt, "x"]
    done = CliRunner().invoke(main, [*cmd.split(), *given, *given], catch_exceptions=False)
    assert done.exit_code == 2, done.output
    assert "given 2 times; expected it once" in done.output, done.output
    assert opt in done.output


def test_an_option_that_may_repeat_is_not_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The mirror: --labels is multiple; both files are read (both named as missing).
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["meta-eval", "--labels", "a.csv", "--labels", "b.csv",
                                     str(tmp_path)], catch_exceptions=False)
    assert "given 2 times" not in done.output
    assert "a.csv" in done.output and "b.csv" in done.output
