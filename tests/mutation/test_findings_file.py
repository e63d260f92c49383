from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from metaeval.commands.stale_findings import Planned, pruned, stale_entries
from metaeval.errors import InputError, OutputError
from metaeval.mutation.findings_file import (
    LAST_RUN_FILE,
    Findings,
    FindingStatus,
    Seen,
    StaleWhy,
    accept,
    accept_in,
    compare,
    diff_findings,
    dumps,
    fingerprints,
    load,
    save,
    save_last_run,
    survivors,
    updated,
    with_last_run,
)
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from metaeval.report.sarif import sarif
from tests.builders import SEEN_1, mutant

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
TODAY = dt.date(2026, 11, 29)
SEEN_2 = Seen("d" * 40, "2026-11-29")


def result(m: Mutant, status: Status) -> MutantResult:
    return MutantResult(m, status, killed_by=("tests/test_x.py::test_y",)
                        if status is Status.KILLED else ())


def test_fingerprints_ignore_lines_but_not_the_fault() -> None:
    a = mutant(line=10)
    moved = mutant(line=30)  # 20 lines inserted above
    assert fingerprints([a])[a.id] == fingerprints([moved])[moved.id]
    other = mutant(replacement="age < max_age")
    assert fingerprints([a])[a.id] != fingerprints([other])[other.id]
    elsewhere = mutant(qualname="other_guard")
    assert fingerprints([a])[a.id] != fingerprints([elsewhere])[elsewhere.id]


def test_fingerprints_ignore_whitespace_and_tell_twins_apart() -> None:
    spaced = mutant(original="age  >   max_age")
    assert fingerprints([mutant()]) == fingerprints([spaced])
    first, second = mutant(index=0), mutant(index=1, line=12)
    prints = fingerprints([first, second])
    assert prints[first.id] != prints[second.id]


def test_patch_mutants_are_fingerprinted_by_target_and_id() -> None:
    patch = Mutant("unscored-counts-as-pass", MutantKind.PATCH, "patch", "mutants/self.py",
                   "metaeval.contract", "evaluate", Span(3, 1, 3, 1), "", "lambda *a: None",
                   target="metaeval.contract:evaluate", breaks="unscored becomes pass")
    moved = replace(patch, span=Span(40, 1, 40, 1))
    assert fingerprints([patch]) == fingerprints([moved])


def baseline_of(*results: MutantResult) -> Findings:
    return Findings(tuple(survivors(list(results), {}, SEEN_1)))


def test_compare_fails_only_on_new_and_expired() -> None:
    known, accepted_m, expired_m, fixed_m, new_m = (
        mutant(qualname=q) for q in ("known", "accepted", "expired", "fixed", "new"))
    base = baseline_of(*(result(m, Status.SURVIVED)
                         for m in (known, accepted_m, expired_m, fixed_m)))
    base, _ = accept(base, mutant(qualname="accepted").id, "equivalent mutant", "dana", None)
    base, _ = accept(base, expired_m.id, "fix next sprint", "dana", dt.date(2026, 11, 28))
    run = [result(known, Status.SURVIVED), result(accepted_m, Status.SURVIVED),
           result(expired_m, Status.SURVIVED), result(fixed_m, Status.KILLED),
           result(new_m, Status.NO_COVERAGE)]
    c = compare(base, run, {}, SEEN_2, TODAY)
    assert [e.qualname for e in c.new] == ["new"]
    assert [e.qualname for e in c.expired] == ["expired"]
    assert [e.qualname for e in c.known] == ["known"]
    assert [e.qualname for e in c.accepted] == ["accepted"]
    assert [e.qualname for e in c.fixed] == ["fixed"]
    assert c.failing
    # The day before expiry, the same run passes.
    assert not compare(base, run[:4], {}, SEEN_2, dt.date(2026, 11, 28)).failing


def test_updated_keeps_decisions_and_first_seen_and_drops_the_fixed() -> None:
    a, b, c, d = (mutant(qualname=q) for q in ("a", "b", "c", "d"))
    base = baseline_of(result(a, Status.SURVIVED), result(b, Status.SURVIVED),
                       result(c, Status.SURVIVED))
    base, _ = accept(base, a.id, "equivalent", "dana", None)
    # b is killed now; c did not run (a diff-only run); d is new.
    after = updated(base, [result(a, Status.SURVIVED), result(b, Status.KILLED),
                           result(d, Status.SURVIVED)], {}, SEEN_2)
    by_name = {e.qualname: e for e in after.entries}
    assert sorted(by_name) == ["a", "c", "d"]
    assert by_name["a"].status is FindingStatus.ACCEPTED
    assert by_name["a"].first_seen == SEEN_1 and by_name["a"].last_seen == SEEN_2
    assert by_name["c"].last_seen == SEEN_1
    assert by_name["d"].first_seen == SEEN_2


def test_the_file_round_trips_sorted_and_stable(tmp_path: Path) -> None:
    base = baseline_of(result(mutant(qualname="z"), Status.SURVIVED),
                       result(mutant(qualname="a"), Status.SURVIVED))
    base, _ = accept(base, mutant(qualname="z").id, "equivalent", "dana", dt.date(2027, 1, 1))
    path = tmp_path / "findings.json"
    save(base, path)
    text = path.read_text()
    assert dumps(load(path)) == text
    document = json.loads(text)
    assert [f["qualname"] for f in document["findings"]] == ["a", "z"]
    assert document["findings"][1]["until"] == "2027-01-01"


@pytest.mark.parametrize(("change", "words"), [
    ({"status": "closed"}, "status: got 'closed'; expected 'open' or 'accepted'"),
    ({"status": "accepted", "reason": None}, "reason: missing"),
    ({"until": "next week"}, "until: got 'next week'; expected a date YYYY-MM-DD"),
    ({"line": "12"}, "line: got '12'; expected an integer"),
    # A findings file comes from a branch: its paths are read back into reports.
    ({"path": "/proc/self/environ"},
     "findings[0].path: got '/proc/self/environ'; expected a path inside the repository"),
    ({"path": "../../../../etc/passwd"}, "path: got '../../../../etc/passwd'; expected a path"),
    ({"path": "shop/../../secret.py"}, "path: got 'shop/../../secret.py'; expected a path"),
    ({"path": ""}, "path: got ''; expected a path inside the repository"),
])
def test_bad_findings_files_name_the_field(tmp_path: Path, change: dict[str, object],
                                           words: str) -> None:
    path = tmp_path / "findings.json"
    save(baseline_of(result(mutant(), Status.SURVIVED)), path)
    document = json.loads(path.read_text())
    document["findings"][0].update(change)
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=r"findings\[0\]") as caught:
        load(path)
    assert words in str(caught.value)


def test_a_path_inside_the_repository_loads(tmp_path: Path) -> None:
    # The detector's "no": a nested relative path, with a dot part, is a path metaeval writes.
    path = tmp_path / "findings.json"
    save(baseline_of(result(mutant(path="src/shop/./guards.py"), Status.SURVIVED)), path)
    assert [e.path for e in load(path).entries] == ["src/shop/./guards.py"]


def test_a_survivor_outside_the_repository_is_never_written_to_the_file(
        tmp_path: Path) -> None:
    # A target found on sys.path has an absolute path, which load would refuse:
    # saving it would leave a findings file the next run cannot read.
    path = tmp_path / "findings.json"
    outside = baseline_of(result(mutant(path="/usr/lib/python3/shop/guards.py"),
                                 Status.SURVIVED))
    with pytest.raises(OutputError, match=r"path: got '/usr/lib/python3/shop/guards\.py'; "
                                          r"expected a path inside the repository"):
        save(outside, path)
    assert not path.exists()


def test_accept_needs_a_reason_and_a_known_finding() -> None:
    base = baseline_of(result(mutant(), Status.SURVIVED))
    with pytest.raises(InputError, match="empty reason"):
        accept(base, mutant().id, "  ", "dana", None)
    with pytest.raises(InputError, match="no finding 'nope'"):
        accept(base, "nope", "fine", "dana", None)


def test_diff_of_two_files() -> None:
    a, b = mutant(qualname="a"), mutant(qualname="b")
    old = baseline_of(result(a, Status.SURVIVED))
    new = baseline_of(result(b, Status.SURVIVED))
    d = diff_findings(old, new)
    assert ([e.qualname for e in d.added], [e.qualname for e in d.removed]) == (["b"], ["a"])
    accepted, _ = accept(old, a.id, "fine", "dana", None)
    assert [x.status for x in diff_findings(old, accepted).changed[0]] == [
        FindingStatus.OPEN, FindingStatus.ACCEPTED]


def test_sarif_is_valid_2_1_0_with_one_result_per_open_survivor() -> None:
    schema = json.loads((SCHEMAS / "sarif-2.1.0-rtm.5.json").read_text())
    a, b = mutant(qualname="a", line=7), mutant(qualname="b")
    base = Findings(tuple(survivors([result(a, Status.SURVIVED), result(b, Status.SURVIVED)],
                                    {a.id: "--- a/shop/guards.py\n+++ b/shop/guards.py"},
                                    SEEN_1)))
    base, _ = accept(base, b.id, "equivalent", "dana", None)
    log = json.loads(sarif(base, TODAY))
    jsonschema.validate(log, schema)
    (only,) = log["runs"][0]["results"]
    assert only["ruleId"] == "flip_comparison"
    assert only["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    assert only["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "shop/guards.py"
    assert "+++ b/shop/guards.py" in only["message"]["text"]


def test_the_sarif_schema_rejects_a_broken_log() -> None:
    # Proves the validation above can fail: a result without a message is not SARIF.
    schema = json.loads((SCHEMAS / "sarif-2.1.0-rtm.5.json").read_text())
    log = json.loads(sarif(baseline_of(result(mutant(), Status.SURVIVED)), TODAY))
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, schema)


# --- the last run's survivors beside the file ---------------------------------------------


def test_the_last_run_adds_only_what_the_file_does_not_hold() -> None:
    a, b = mutant(qualname="a"), mutant(qualname="b")
    file = Findings(tuple(survivors([result(a, Status.SURVIVED)], {}, SEEN_1)))
    last = Findings(tuple(survivors([result(a, Status.SURVIVED), result(b, Status.SURVIVED)],
                                    {}, SEEN_2)))
    view = with_last_run(file, last)
    assert [e.qualname for e in view.untracked] == ["b"]
    assert [e.qualname for e in view.every.entries] == ["a", "b"]
    # The file's entry is the one kept: its first sighting and decision stand.
    assert view.every.entries[0].first_seen == SEEN_1
    assert view.is_tracked(view.every.entries[0]) and not view.is_tracked(view.untracked[0])
    fingerprint_b = fingerprints([b])[b.id]
    assert view.find(fingerprint_b[:6]).qualname == "b"
    # must say no: with the last run holding nothing new, nothing is untracked
    assert with_last_run(file, file).untracked == ()
    assert with_last_run(file, Findings()).every == file


def test_accepting_a_survivor_of_the_last_run_adds_it_to_the_file() -> None:
    a, b, c = (mutant(qualname=q) for q in "abc")
    file = Findings(tuple(survivors([result(a, Status.SURVIVED)], {}, SEEN_1)))
    last = Findings(tuple(survivors([result(m, Status.SURVIVED) for m in (b, c)], {}, SEEN_2)))
    written, done = accept_in(with_last_run(file, last), b.id, "equivalent", "dana", None)
    assert [(e.qualname, e.status) for e in written.entries] == [
        ("a", FindingStatus.OPEN), ("b", FindingStatus.ACCEPTED)]  # c stays out
    assert done.reason == "equivalent"


def test_save_last_run_leaves_out_a_file_outside_the_repository(tmp_path: Path) -> None:
    inside, outside = mutant(qualname="a"), mutant(qualname="b", path="/usr/lib/x.py")
    save_last_run([result(inside, Status.SURVIVED), result(outside, Status.NO_COVERAGE),
                   result(mutant(qualname="c"), Status.KILLED)], {}, SEEN_1, tmp_path)
    assert [e.qualname for e in load(tmp_path / LAST_RUN_FILE).entries] == ["a"]


# --- stale entries -------------------------------------------------------------------------


def test_an_entry_is_stale_only_when_no_planned_mutant_has_its_fingerprint() -> None:
    kept, moved_fault, gone_fn, gone_file = (
        mutant(qualname="a"),
        mutant(qualname="a", original="age < 3", replacement="age <= 3", index=1),
        mutant(qualname="b"), mutant(qualname="a", path="shop/old.py"))
    tracked = Findings(tuple(survivors(
        [result(m, Status.SURVIVED) for m in (kept, moved_fault, gone_fn, gone_file)],
        {}, SEEN_1)))
    # Now: ``a`` holds only its first fault; ``b`` is gone; shop/old.py is not targeted.
    now = [kept, mutant(qualname="c")]
    plan = Planned(frozenset(fingerprints(now).values()), frozenset({"shop/guards.py"}),
                   frozenset((m.path, m.qualname) for m in now))
    stale = {(s.entry.path, s.entry.qualname, s.entry.mutant_id.split("::")[-1]): s.why
             for s in stale_entries(tracked, plan)}
    assert stale == {("shop/guards.py", "a", "1"): StaleWhy.MUTANT,
                     ("shop/guards.py", "b", "0"): StaleWhy.FUNCTION,
                     ("shop/old.py", "a", "0"): StaleWhy.FILE}
    # must say no: the entry whose mutant is still made stays (it is not among them)
    assert len(stale_entries(tracked, plan)) == 3
    assert [e.qualname for e in pruned(tracked, stale_entries(tracked, plan)).entries] == ["a"]
    assert pruned(tracked, stale_entries(tracked, plan)).entries[0].fingerprint == \
        fingerprints([kept])[kept.id]
