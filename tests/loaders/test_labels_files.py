"""Labels files: labels kept apart from the runs, joined by id, several annotators,
the gold label by majority (a tie: none), and the annotators' agreement."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import krippendorff
import pytest
from sklearn.metrics import cohen_kappa_score

from metaeval.audit.label_agreement import agreement
from metaeval.contract import Outcome
from metaeval.loaders.labels_files import Annotation, gold, read_labels
from tests.audit.airline import airline_project, is_bad
from tests.loaders.conftest import meta_eval, write_csv

TASKS, TRIALS = 20, 4
ANNOTATORS = ("ann", "bo", "cy")


def says(annotator: str, task: int, trial: int) -> str:
    """What each annotator labels a run overall: ann the truth; bo flips task 7; cy
    flips trial 0 of every fourth task, and task 7's trial 1 (with bo: a majority)."""
    fail = is_bad(task, trial)
    if annotator == "bo" and task == 7:
        fail = not fail
    if annotator == "cy" and ((task % 4 == 0 and trial == 0) or (task, trial) == (7, 1)):
        fail = not fail
    return "fail" if fail else "pass"


def labels_rows(checks: tuple[str, ...] = ("*", "flight_booked")) -> list[dict[str, str]]:
    """Each annotator's label overall and of ``flight_booked`` (the check a near miss
    fails: an overall fail alone would not say which check failed)."""
    return [{"run_id": f"t{t:02d}-trial{k}", "check": check, "label": says(a, t, k),
             "annotator": a, "rationale": ""}
            for t in range(TASKS) for k in range(TRIALS) for a in ANNOTATORS
            for check in checks]


def test_labels_in_a_csv_join_the_runs_and_the_numbers_equal_scikit_learn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS, 'labels = ["labels.csv"]\n')
    write_csv(tmp_path / "labels.csv", labels_rows())
    result = meta_eval(tmp_path, monkeypatch, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.output)
    row = next(c for c in document["checks"] if c["name"] == "flight_booked")
    assert row["n"] == TASKS * TRIALS
    human, graded = [], []
    for t in range(TASKS):
        for k in range(TRIALS):
            votes = Counter(says(a, t, k) for a in ANNOTATORS)
            human.append(votes.most_common(1)[0][0])
            graded.append("fail" if is_bad(t, k) else "pass")
    assert human.count("fail") != [says("ann", t, k) for t in range(TASKS)
                                   for k in range(TRIALS)].count("fail")  # gold != truth
    assert row["kappa"] == pytest.approx(cohen_kappa_score(human, graded), abs=1e-4)
    overall = next(a for a in document["annotators"] if a["check"] == "*")
    assert (overall["check"], overall["annotators"], overall["runs"], overall["shared"],
            overall["pairs"]) == ("*", 3, TASKS * TRIALS, TASKS * TRIALS, 3)
    per_annotator = {a: [says(a, t, k) for t in range(TASKS) for k in range(TRIALS)]
                     for a in ANNOTATORS}
    pairs = [cohen_kappa_score(per_annotator[x], per_annotator[y])
             for x, y in (("ann", "bo"), ("ann", "cy"), ("bo", "cy"))]
    assert overall["mean_kappa"] == pytest.approx(sum(pairs) / 3, abs=1e-4)
    table = meta_eval(tmp_path, monkeypatch).output
    assert "Krippendorff alpha" in table and "mean pairwise kappa" in table


def test_the_html_page_and_the_summary_show_the_annotators_and_the_by_breakdown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS, 'labels = ["labels.csv"]\n')
    write_csv(tmp_path / "labels.csv", labels_rows())
    result = meta_eval(tmp_path, monkeypatch, "--by", "task", "--html", "page.html",
                       "--summary", "summary.md")
    assert result.exit_code in (0, 1), result.output
    # alpha from the package itself, on the labels as this test wrote them
    coded = [[1.0 if says(a, t, k) == "fail" else 0.0 for t in range(TASKS)
              for k in range(TRIALS)] for a in ANNOTATORS]
    alpha = f"{krippendorff.alpha(reliability_data=coded, level_of_measurement='nominal'):.2f}"
    html = (tmp_path / "page.html").read_text()
    annotators = html[html.index("<h2>Annotators</h2>"):]
    assert f"<td>{alpha}</td>" in annotators[:annotators.index("</table>")]
    per_task = html[html.index("<h2>Per task</h2>"):]
    assert per_task[:per_task.index("</table>")].count("<tr>") == 1 + TASKS  # head + tasks
    summary = (tmp_path / "summary.md").read_text()
    assert "**Annotators**" in summary and f"| {alpha} |" in summary
    # task 7: bo and cy outvote the truth on one trial, which the graders follow
    assert "**Per task**" in summary and "| `airline-07` | 4 | 3/4 |" in summary
    meta_eval(tmp_path, monkeypatch, "--html", "p2.html", "--summary", "s2.md")
    assert "<h2>Per task</h2>" not in (tmp_path / "p2.html").read_text()
    assert "**Per task**" not in (tmp_path / "s2.md").read_text()


def test_krippendorff_alpha_on_a_table_worked_by_hand() -> None:
    # two annotators, four runs: A pass pass fail fail, B pass fail fail fail. The
    # coincidence matrix has o_pp=2, o_pf=o_fp=1, o_ff=4; n_p=3, n_f=5, n=8:
    # alpha = 1 - (2/8) / (2*3*5/(8*7)) = 8/15
    rows = [Annotation(f"r{i}", "*", Outcome(label), who, "", f"f:{i}")
            for who, labels in (("A", "ppff"), ("B", "pfff"))
            for i, label in enumerate("pass" if c == "p" else "fail" for c in labels)]
    measured = agreement("*", rows)
    assert measured.alpha.value == pytest.approx(8 / 15)
    assert measured.mean_kappa.value == pytest.approx(cohen_kappa_score(
        list("ppff"), list("pfff")))
    alone = agreement("*", [r for r in rows if r.annotator == "A"])
    assert alone.alpha.reason and alone.alpha.value == 0.0
    same = agreement("*", [Annotation(f"r{i}", "*", Outcome.PASS, who, "", "f:1")
                           for i in range(3) for who in "AB"])
    assert same.alpha.reason.startswith("one label only")


def test_a_pair_of_annotators_sharing_one_run_is_left_out_of_the_mean_kappa() -> None:
    # A and B label six runs alike; C labels one of them (as a tie-breaker would).
    rows = [Annotation(f"r{i}", "*", Outcome("pass" if i % 2 else "fail"), who, "", "f:1")
            for i in range(6) for who in "AB"]
    rows.append(Annotation("r0", "*", Outcome.PASS, "C", "", "f:2"))
    measured = agreement("*", rows)
    assert measured.pairs == 1  # A-B only: A-C and B-C share one run each
    assert measured.mean_kappa.value == pytest.approx(cohen_kappa_score(
        ["fail", "pass"] * 3, ["fail", "pass"] * 3))  # 1.0, not the mean with two 0.0s


def test_a_pair_whose_shared_runs_all_carry_one_label_is_left_out_as_in_judge_audit() -> None:
    # A and B share three runs, all passed by both: their kappa measures nothing
    # (one label only). A and C share four runs with a real disagreement.
    rows = [Annotation(f"r{i}", "*", Outcome.PASS, who, "", "f:1")
            for i in range(3) for who in "AB"]
    rows += [Annotation(f"s{i}", "*", Outcome(x), "A", "", "f:2")
             for i, x in enumerate(["pass", "fail", "fail", "pass"])]
    rows += [Annotation(f"s{i}", "*", Outcome(x), "C", "", "f:3")
             for i, x in enumerate(["pass", "fail", "pass", "pass"])]
    measured = agreement("*", rows)
    assert measured.pairs == 1
    assert measured.mean_kappa.value == pytest.approx(cohen_kappa_score(
        ["pass", "fail", "fail", "pass"], ["pass", "fail", "pass", "pass"]))


@pytest.mark.parametrize(("labels", "expected"), [
    (["pass", "pass", "fail"], Outcome.PASS),
    (["fail"], Outcome.FAIL),
    (["pass", "fail"], None),
    (["pass", "fail", "fail", "pass"], None),
    ([], None),
])
def test_the_gold_label_is_the_majority_and_a_tie_is_none(
        labels: list[str], expected: Outcome | None) -> None:
    assert gold([Outcome(x) for x in labels]) is expected


def test_a_tie_leaves_the_run_unlabelled_and_no_label_is_not_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, 2, 2)
    write_csv(tmp_path / "l.csv", [
        {"run_id": "t00-trial0", "check": "*", "label": "pass", "annotator": "ann",
         "rationale": ""},
        {"run_id": "t00-trial0", "check": "*", "label": "fail", "annotator": "bo",
         "rationale": "tie"},
        {"run_id": "t00-trial1", "check": "*", "label": "pass", "annotator": "ann",
         "rationale": ""},
        {"run_id": "t01-trial0", "check": "flight_booked", "label": "pass",
         "annotator": "ann", "rationale": ""}])
    result = meta_eval(tmp_path, monkeypatch, "--labels", "l.csv", "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.output)
    assert document["evaluator"]["n"] == 1  # t00-trial1 only
    assert document["unlabelled"] == 3
    assert document["tied"] == 1
    rows = {c["name"]: c["n"] for c in document["checks"]}
    # t00-trial1 by its overall verdict, t01-trial0 by its per-check label
    assert rows == {"flight_booked": 2, "never_update_passengers": 1}


def test_a_bad_row_is_named_by_file_line_and_column_and_the_rest_joins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, 2, 2)
    good = {"check": "*", "label": "pass", "rationale": ""}
    write_csv(tmp_path / "l.csv", [
        {"run_id": "t00-trial0", "annotator": "ann", **good},
        {"run_id": "t00-trial9", "annotator": "ann", **good},
        {"run_id": "t00-trial1", "annotator": "ann", **dict(good, check="flight_bookd")},
        {"run_id": "t00-trial0", "annotator": "ann", **good},
        {"run_id": "t01-trial0", "annotator": "ann", **dict(good, label="maybe")},
        {"run_id": "t01-trial1", "annotator": "", **good}])
    result = meta_eval(tmp_path, monkeypatch, "--labels", "l.csv")
    assert result.exit_code == 2
    lines = [x.strip() for x in result.output.splitlines() if "l.csv:" in x]
    assert lines == [
        "l.csv:3: run_id: got 't00-trial9'; expected the id of a loaded run; did you mean "
        "'t00-trial1' or 't00-trial0'?",
        "l.csv:4: check: got 'flight_bookd'; expected '*' (the overall verdict) or a check "
        "of run 't00-trial1': flight_booked, never_update_passengers; did you mean "
        "'flight_booked'?",
        "l.csv:5: annotator: 'ann' already labelled check '*' of run 't00-trial0' (at "
        "l.csv:2); expected one label per annotator, or a change that says which label "
        "it replaces ('was')",
        "l.csv:6: label: got 'maybe'; expected 'pass', 'fail' or 'unsure'",
        "l.csv:7: annotator: got nothing; expected a non-empty string"]
    # Four runs graded; only t00-trial0 (labelled once) is in the evaluator's row.
    assert "meta-eval: 4 runs" in result.output
    assert "3 of them with no overall human verdict" in result.output


def test_jsonl_labels_and_a_bad_header(tmp_path: Path) -> None:
    jsonl = tmp_path / "l.jsonl"
    jsonl.write_text(json.dumps({"run_id": "r", "check": "*", "label": "fail",
                                 "annotator": "a"}) + "\n"
                     + json.dumps({"run_id": "r", "check": "*", "label": "fail",
                                   "annotater": "b"}) + "\n")
    header = tmp_path / "h.csv"
    header.write_text("run_id,check,verdict,annotator\nr,*,pass,a\n")
    found, errors = read_labels([jsonl, header, tmp_path / "x.txt"])
    assert [(a.run_id, a.label, a.annotator) for a in found] == [("r", Outcome.FAIL, "a")]
    assert [str(e) for e in errors] == [
        f"{jsonl}:2: annotater: unknown column; expected run_id, check, label, annotator, "
        "rationale, was, at; did you mean 'annotator'?",
        f"{header}:1: verdict: unknown column; expected run_id, check, label, annotator, "
        "rationale, was, at",
        f"{tmp_path / 'x.txt'}: no such file"]


def test_unsure_is_one_row_of_its_annotator_but_no_label(tmp_path: Path) -> None:
    from metaeval.loaders.labels_files import join_labels
    from metaeval.loaders.meta_set import parse_run
    from tests.audit.airline import airline_run

    run, problems = parse_run(airline_run(0, 0, bad=False, checks=True), "runs.jsonl:1")
    assert run is not None and not problems
    runs = [run]
    path = tmp_path / "l.jsonl"
    run_id = runs[0].id
    rows = [{"run_id": run_id, "check": "*", "label": "unsure", "annotator": "ann"},
            {"run_id": run_id, "check": "*", "label": "fail", "annotator": "bo"},
            {"run_id": run_id, "check": "*", "label": "pass", "annotator": "ann"},
            {"run_id": "nowhere", "check": "*", "label": "unsure", "annotator": "ann"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    annotations, errors = read_labels([path])
    assert not errors
    joined = join_labels(runs, annotations)
    # ann's unsure is her row: her later pass is a repeat, so bo's fail alone is the gold.
    assert joined.runs[0].label.verdict is Outcome.FAIL
    assert [str(e) for e in joined.errors] == [
        f"{path}:3: annotator: 'ann' already labelled check '*' of run {run_id!r} (at "
        f"{path}:1); expected one label per annotator, or a change that says which label it "
        "replaces ('was')",
        f"{path}:4: run_id: got 'nowhere'; expected the id of a loaded run"]
    assert [a.annotator for a in joined.annotations] == ["bo"]


def test_a_judge_item_row_is_passed_over_and_an_unknown_column_is_not(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    rows = [{"item_id": "p1", "label": "a", "annotator": "ann", "shown": "ba"},
            {"run_id": "r1", "check": "*", "label": "pass", "annotator": "ann"},
            {"run_id": "r1", "check": "*", "label": "pass", "annotator": "bo", "shown": "ab"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    annotations, errors = read_labels([path])
    assert [(a.run_id, a.annotator) for a in annotations] == [("r1", "ann")]
    assert [f"{e.line}:{e.field}" for e in errors] == ["3:shown"]
