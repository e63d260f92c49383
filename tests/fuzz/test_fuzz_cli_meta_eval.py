"""Fuzz ``metaeval meta-eval``'s inputs (issue 45): random subsets of valid and
mismatched labels files, ``--runs`` sources, ``--by`` keys, suite selectors and
repeated options never give exit 0 with an input left unused.

The oracle is the test's own: which inputs it drew that match nothing (a labels file
that is not there or lacks a column, a log that is not there, a metadata key no run
holds, a selector that picks no run, an option that keeps one value given twice).
With one of them, the exit code is never 0 and no line starts with ``OK``; with none
and the good labels file, the command measures (0 or 1). Without labels it measured
nothing: 3. The default run is the fuzz suite's ``ci`` profile (50 examples);
``METAEVAL_FUZZ_PROFILE=long`` draws many more."""

from __future__ import annotations

import contextlib
import csv
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from metaeval.cli import main
from tests.audit.airline import SUITE, airline_project, is_bad
from tests.importers.runs.conftest import REQUEST

TASKS, TRIALS = 4, 3
UNMATCHED = 'metadata = { model.size = "large" }\n'  # TOML nests it: selects no run


def _labels(path: Path, *, annotator: bool = True) -> None:
    fields = ["run_id", "check", "label", *(["annotator"] if annotator else [])]
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for t in range(TASKS):
            for k in range(TRIALS):
                row = {"run_id": f"t{t:02d}-trial{k}", "check": "*",
                       "label": "fail" if is_bad(t, k) else "pass", "annotator": "ann"}
                writer.writerow({key: row[key] for key in fields})


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    """Two projects: one whose suite selects its runs, one whose selector picks none."""
    made = {}
    for selects in (True, False):
        root = tmp_path_factory.mktemp("selects" if selects else "selects-none")
        # flight_booked reads its parameter from airline tasks: the log's run has none.
        suite = SUITE.replace('grader = "tool_called"\n',
                              'grader = "tool_called"\ntasks = "airline-*"\n')
        if not selects:
            suite = suite.replace('params = { tool = "update_reservation_passengers" }\n',
                                  'params = { tool = "update_reservation_passengers" }\n'
                                  + UNMATCHED)
        airline_project(root, TASKS, TRIALS, suite=suite)
        _labels(root / "labels.csv")
        _labels(root / "no-annotator.csv", annotator=False)
        (root / "logs.jsonl").write_text(json.dumps(REQUEST) + "\n")
        made[selects] = root
    return made


@dataclass(frozen=True)
class Drawn:
    args: list[str]
    unused: list[str]
    """The inputs drawn that match nothing: each must stop an exit 0."""
    labelled: bool


@st.composite
def inputs(draw: st.DrawFn) -> tuple[bool, Drawn]:
    selects = draw(st.booleans())
    args: list[str] = []
    unused = [] if selects else ["a suite selector that picks no run"]
    labels = draw(st.lists(st.sampled_from(["labels.csv", "no-annotator.csv", "nope.csv"]),
                           max_size=2, unique=True))
    for name in labels:
        args += ["--labels", name]
    unused += [name for name in labels if name != "labels.csv"]
    for source in draw(st.lists(st.sampled_from(["logs.jsonl", "nope.jsonl"]), max_size=2,
                                unique=True)):
        args += ["--runs", f"anthropic:{source}"]
        unused += [source] if source == "nope.jsonl" else []
    meta_sets = ["runs"] if "--runs" in args else []  # --runs alone reads no meta-set
    by = draw(st.sampled_from([None, "category", "task", "metadata.trial", "metadata.nokey"]))
    if by is not None:
        args += ["--by", by]
        unused += [by] if by == "metadata.nokey" else []
    for option, values in (("--seed", ["1", "2"]), ("--cluster", ["run", "auto"]),
                           ("--format", ["table", "json"])):
        times = draw(st.integers(0, 2))
        args += [x for value in values[:times] for x in (option, value)]
        unused += [f"{option} twice"] if times == 2 else []
    order = draw(st.permutations(range(0, len(args), 2))) if args else []
    pairs = [args[i:i + 2] for i in order]
    return selects, Drawn([*meta_sets, *(x for pair in pairs for x in pair)], unused,
                          "labels.csv" in labels)


@given(inputs())
def test_no_exit_0_with_an_input_left_unused(projects: dict[bool, Path],
                                             drawn: tuple[bool, Drawn]) -> None:
    selects, d = drawn
    with contextlib.chdir(projects[selects]):
        done = CliRunner().invoke(main, ["meta-eval", *d.args], catch_exceptions=False)
    ok_lines = [line for line in done.output.splitlines() if line.startswith("OK")]
    if d.unused:
        assert done.exit_code != 0, (d, done.output)
        assert not ok_lines and '"ok": true' not in done.output, (d, done.output)
    elif d.labelled:
        assert done.exit_code in (0, 1), (d, done.output)
    else:
        assert done.exit_code == 3, (d, done.output)  # nothing labelled: nothing measured
