"""``metaeval gate``: hold result files to one bar per metric.

Results are the JSON documents of ``meta-eval``, ``judge-audit`` and ``mutate``
(``--format json``). A metric is named ``SOURCE:PATH``:

- ``meta-eval:<check>.<field>`` (``meta-eval:refund_issued.tpr``,
  ``meta-eval:evaluator.kappa``),
- ``judge-audit:<judge name>.<dotted path>`` into that judge's audit
  (``judge-audit:steady.agreement.pointwise.kappa``),
- ``mutate:<dotted path>`` (``mutate:score``, ``mutate:counts.Survived``),
- ``judge-mutants:<dotted path>`` (``judge-mutants:counts.Survived``).

A meta-eval result is also held to the bars of ``[tool.metaeval.meta_eval]`` (the
bars ``meta-eval`` and ``assert_graders`` read), which ``metaeval.commands.gate``
turns into bars of this kind, each naming where it was set.

A metric missing from the results fails (with the nearest names the results
hold). A judge metric is enforced only when the calibration file has an entry
for that judge's current identity; otherwise it is reported and does not fail.
Every judge-audit result given is also held to its own verdict: anything but
"may gate" fails (``judge-audit:<name>.verdict``), unless ``allow_report_only =
true`` lets a "report only" audit be shown instead; a void one always fails.
This module never passes a bar it could not read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from metaeval.contract import JsonValue
from metaeval.errors import InputError, shown
from metaeval.keys import cut, did_you_mean
from metaeval.untrusted_json import JsonInputError, read_json_file

SOURCES = ("meta-eval", "judge-audit", "mutate", "judge-mutants")
OPTIONS = ("allow_report_only",)
"""The keys of ``[tool.metaeval.gate]`` that are settings, not metric bars."""
MAY_GATE = "may gate"
REPORT_ONLY = "report only"
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True, slots=True)
class GateOptions:
    """The settings of ``[tool.metaeval.gate]`` beside its bars."""

    allow_report_only: bool = False
    """A judge-audit result whose verdict is "report only" is shown, not failed."""


DEFAULT_OPTIONS = GateOptions()


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar: ``metric`` must be at least ``min`` and at most ``max``."""

    metric: str
    min: float | None = None
    max: float | None = None
    expect: str = ""
    """A text the metric must be instead (a judge-audit verdict: "may gate")."""
    origin: str = ""
    """Where the bar was set when not in ``[tool.metaeval.gate]`` (a meta-eval bar of
    ``[tool.metaeval.meta_eval]``), shown beside its result."""

    def describe(self) -> str:
        if self.expect:
            return f"= {self.expect!r}"
        parts = [f">= {self.min:g}" if self.min is not None else "",
                 f"<= {self.max:g}" if self.max is not None else ""]
        return " and ".join(p for p in parts if p)


class BarStatus(Enum):
    """What the gate decided about one bar."""

    PASS = "pass"
    """The metric is there and within its bar."""
    FAIL = "fail"
    """The metric is outside its bar."""
    MISSING = "missing"
    """No result holds the metric: a failure, never a silent pass."""
    REPORTED = "reported"
    """A judge metric of a judge with no calibration entry for its identity: shown, not enforced."""

    @property
    def fails(self) -> bool:
        return self in (BarStatus.FAIL, BarStatus.MISSING)


@dataclass(frozen=True, slots=True)
class BarResult:
    bar: Bar
    status: BarStatus
    value: float | None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Results:
    """Result documents by source; judge audits by judge name."""

    meta_eval: Mapping[str, JsonValue] | None
    judge_audits: Mapping[str, Mapping[str, JsonValue]]
    mutate: Mapping[str, JsonValue] | None
    judge_mutants: Mapping[str, JsonValue] | None = None


# --- reading --------------------------------------------------------------------------


def parse_bars(table: object, where: str) -> tuple[Bar, ...]:
    """``[tool.metaeval.gate]``: ``"SOURCE:PATH" = 0.9`` (a minimum) or ``{min, max}``."""
    if not isinstance(table, dict):
        raise InputError(f"{where}: got {table!r}; expected a table of metric bars")
    bars = []
    for metric, spec in sorted(table.items()):
        if metric in OPTIONS:
            continue  # read by parse_options
        at = f"{where}.{cut(metric)!r}"
        source, sep, path = str(metric).partition(":")
        if not sep or source not in SOURCES or not path:
            raise InputError(f"{at}: not a metric name; expected SOURCE:PATH with SOURCE one "
                             f"of {', '.join(SOURCES)} (e.g. 'meta-eval:evaluator.kappa')"
                             f"{did_you_mean(source, SOURCES) if sep else ''}"
                             f"{'' if sep else did_you_mean(str(metric), OPTIONS)}")
        if _number(spec):
            bars.append(Bar(metric, min=_float(spec)))
            continue
        unknown = sorted(set(spec) - {"min", "max"}) if isinstance(spec, dict) else []
        if unknown:
            raise InputError(f"{at}.{cut(unknown[0])}: unknown key; expected min or max"
                             f"{did_you_mean(unknown[0], ('min', 'max'))}")
        if not isinstance(spec, dict) or not spec or not all(
                _number(v) for v in spec.values()):
            raise InputError(f"{at}: got {spec!r}; expected a number (a minimum) or "
                             "{min = N, max = N}")
        bars.append(Bar(metric, _float(spec.get("min")), _float(spec.get("max"))))
    return tuple(bars)


def parse_options(table: object, where: str) -> GateOptions:
    """The settings among ``[tool.metaeval.gate]``'s keys (``OPTIONS``)."""
    if not isinstance(table, dict) or "allow_report_only" not in table:
        return DEFAULT_OPTIONS
    value = table["allow_report_only"]
    if not isinstance(value, bool):
        raise InputError(f"{where}.allow_report_only: got {shown(value)}; expected true or "
                         "false (true: a judge-audit result that is 'report only' does not "
                         "fail the gate)")
    return GateOptions(allow_report_only=value)


def _number(value: object) -> bool:
    """A finite number that fits a float: an int of 400 digits (JSON and TOML have
    them) is no bar and no metric, and ``math.isfinite`` of it raises OverflowError."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _kind(document: Mapping[str, JsonValue]) -> str:
    if document.get("kind") == "judge-mutants":
        return "judge-mutants"
    if "checks" in document and "evaluator" in document:
        return "meta-eval"
    if "judge" in document and "agreement" in document:
        return "judge-audit"
    if "counts" in document and "score" in document and "mutants" in document:
        return "mutate"
    return ""


def _unmeasured(document: Mapping[str, JsonValue]) -> str:
    """Why a meta-eval result measured nothing (its reason, or every row with n 0, as a
    result written before the reason was kept); empty when it measured something."""
    rows = [*_rows(document.get("checks")), *_rows([document.get("evaluator")])]
    if not rows or any(row.get("n") != 0 for row in rows):
        return ""  # something measured, or no count to judge by (a bar on it says so)
    reason = document.get("reason")
    return reason if isinstance(reason, str) and reason else "no check has a labelled run"


def load_results(paths: Sequence[Path]) -> Results:
    meta_eval: Mapping[str, JsonValue] | None = None
    mutate: Mapping[str, JsonValue] | None = None
    judge_mutants: Mapping[str, JsonValue] | None = None
    audits: dict[str, Mapping[str, JsonValue]] = {}
    seen: dict[str, Path] = {}
    for path in paths:
        try:
            document = read_json_file(path)
        except (OSError, JsonInputError) as e:
            raise InputError(f"{path}: cannot read a result: {e}") from e
        kind = _kind(document) if isinstance(document, dict) else ""
        if not isinstance(document, dict) or not kind:
            raise InputError(f"{path}: not a result of meta-eval, judge-audit or mutate "
                             "(or judge-mutants) "
                             "(--format json); expected its JSON document")
        if kind in seen:  # the second would silently replace the first
            raise InputError(f"{path}: a second {kind} result (the first: {seen[kind]}); "
                             f"expected one {kind} result")
        if kind != "judge-audit":
            seen[kind] = path
        if kind == "meta-eval":
            unmeasured = _unmeasured(document)
            if unmeasured:
                raise InputError(f"{path}: measured nothing ({shown(unmeasured)}); a gate cannot "
                                 "pass on it: run meta-eval on labelled runs")
            meta_eval = document
        elif kind == "judge-audit":
            judge = document["judge"]
            name = judge.get("name") if isinstance(judge, dict) else None
            if not isinstance(name, str):
                raise InputError(f"{path}: judge.name: got {shown(name)}; expected a string")
            audits[name] = document
        elif kind == "judge-mutants":
            if document.get("state") != "measured":  # void, or no mutant made
                raise InputError(f"{path}: measured nothing ({shown(document.get('state'))}); "
                                 "a gate cannot pass on it")
            judge_mutants = document
        else:
            counts = document.get("counts")
            # Every status with a count of 0 (as mutate writes them): no mutant ran.
            if isinstance(counts, dict) and counts and all(n == 0 for n in counts.values()):
                raise InputError(f"{path}: measured nothing (no mutant ran); a gate cannot "
                                 "pass on it")
            mutate = document
    return Results(meta_eval, audits, mutate, judge_mutants)


# --- deciding -------------------------------------------------------------------------


def _dig(node: JsonValue, path: Sequence[str]) -> JsonValue:
    for part in path:
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    if isinstance(node, dict) and "value" in node:  # {"value", "reason"} metric objects
        return node["value"]
    return node


def _lookup(bar: Bar, results: Results) -> tuple[JsonValue, str | None]:
    """(value, judge version) of a metric; the version is set for judge metrics."""
    source, _, path = bar.metric.partition(":")
    parts = path.split(".")
    if source == "meta-eval" and results.meta_eval is not None:
        rows = list(_rows(results.meta_eval.get("checks")))
        evaluator = results.meta_eval.get("evaluator")
        if isinstance(evaluator, dict):
            rows.append(evaluator)
        for row in rows:
            if row.get("name") == parts[0]:
                return _dig(row, parts[1:]), None
    if source == "judge-audit" and parts[0] in results.judge_audits:
        document = results.judge_audits[parts[0]]
        judge = document.get("judge")
        version = judge.get("version") if isinstance(judge, dict) else None
        return _dig(dict(document), parts[1:]), str(version)
    if source == "mutate" and results.mutate is not None:
        return _dig(dict(results.mutate), parts), None
    if source == "judge-mutants" and results.judge_mutants is not None:
        return _dig(dict(results.judge_mutants), parts), None
    return None, None


def _near(bar: Bar, results: Results) -> str:
    """Where a missing metric's path leaves the results, and the names close to the
    part that is not there (`` did you mean ...``), so a misspelt metric says so."""
    source, _, path = bar.metric.partition(":")
    parts = path.split(".")
    node: JsonValue
    if source == "meta-eval":
        if results.meta_eval is None:
            return "; no meta-eval result given"
        rows = {str(row.get("name")): row for row in _rows(results.meta_eval.get("checks"))}
        evaluator = results.meta_eval.get("evaluator")
        if isinstance(evaluator, dict):
            rows["evaluator"] = evaluator
        if parts[0] not in rows:
            return did_you_mean(parts[0], rows)
        node, parts = rows[parts[0]], parts[1:]
    elif source == "judge-audit":
        if parts[0] not in results.judge_audits:
            given = sorted(results.judge_audits)
            return (did_you_mean(parts[0], given) or
                    f"; the judge-audit results given are of {', '.join(map(repr, given))}"
                    if given else "; no judge-audit result given")
        node, parts = dict(results.judge_audits[parts[0]]), parts[1:]
    else:
        if results.mutate is None:
            return "; no mutate result given"
        node = dict(results.mutate)
    for i, part in enumerate(parts):
        if not isinstance(node, dict):
            return (f"; {cut('.'.join(parts[:i]))!r} is {cut(shown(node), 40)}, with "
                    "nothing under it")
        if part not in node:
            # The part's own level first; else a path that skipped a level
            # (``mutate:Survived`` for ``mutate:counts.Survived``).
            return did_you_mean(part, node) or did_you_mean(".".join(parts[i:]),
                                                            _paths(node))
        node = node[part]
    return ""


PATHS_SEEN = 10_000
"""The most paths a did-you-mean compares: a result is data, and may be huge."""


def _paths(node: Mapping[str, JsonValue], depth: int = 2) -> list[str]:
    """The dotted paths of the tables under ``node``, ``depth`` levels down (at most
    ``PATHS_SEEN``)."""
    found: list[str] = []
    for key, value in node.items():
        if len(found) >= PATHS_SEEN:
            break
        found.append(key)
        if depth > 1 and isinstance(value, dict):
            found += [f"{key}.{below}" for below in _paths(value, depth - 1)]
    return found[:PATHS_SEEN]


def check_names(results: Results) -> list[str]:
    """The checks of the meta-eval result (without the evaluator); empty without one."""
    if results.meta_eval is None:
        return []
    return [str(row.get("name")) for row in _rows(results.meta_eval.get("checks"))]


def _rows(node: JsonValue) -> list[dict[str, JsonValue]]:
    return [row for row in node if isinstance(row, dict)] if isinstance(node, list) else []


def decide(bars: Sequence[Bar], results: Results, calibrated: set[str]) -> list[BarResult]:
    decided = []
    for bar in bars:
        value, judge_version = _lookup(bar, results)
        if not _number(value):
            found = (f"not in the results{_near(bar, results)}" if value is None
                     else f"not a number: a table of {cut(', '.join(map(str, value)), 80)}; "
                     f"expected a metric under it (e.g. {cut(bar.metric)}.{cut(next(iter(value)))})"
                     if isinstance(value, dict) and value
                     else f"not a number: {shown(value)}")
            decided.append(BarResult(bar, BarStatus.MISSING, None, found))
            continue
        assert isinstance(value, int | float)
        number = float(value)
        ok = ((bar.min is None or number >= bar.min) and (bar.max is None or number <= bar.max))
        status = BarStatus.PASS if ok else BarStatus.FAIL
        detail = bar.origin
        if judge_version is not None and judge_version not in calibrated:
            status = BarStatus.REPORTED
            detail = (f"judge identity {judge_version} has no calibration entry; "
                      f"{'within' if ok else 'outside'} the bar, not enforced")
        decided.append(BarResult(bar, status, number, detail))
    return decided


def judge_verdicts(results: Results, options: GateOptions = DEFAULT_OPTIONS
                   ) -> list[BarResult]:
    """Every judge-audit result held to its verdict: "may gate" passes; "report only"
    fails unless ``options.allow_report_only`` (then it is reported); anything else
    (a void audit, no verdict) fails. A gate must never pass a judge its audit refused."""
    decided = []
    for name, document in sorted(results.judge_audits.items()):
        verdict = document.get("verdict")
        bar = Bar(f"judge-audit:{name}.verdict", expect=MAY_GATE)
        reasons = document.get("reasons")
        why = [r for r in reasons if isinstance(r, str)] if isinstance(reasons, list) else []
        said = f"verdict {shown(verdict)}" + (f" ({'; '.join(why[:3])}"
                                              f"{'; ...' if len(why) > 3 else ''})"
                                              if why else "")
        if verdict == MAY_GATE:
            decided.append(BarResult(bar, BarStatus.PASS, None, "verdict 'may gate'"))
        elif verdict == INCONCLUSIVE:
            # Not a pass, and not "report only" either: allow_report_only never lets it by.
            decided.append(BarResult(bar, BarStatus.FAIL, None,
                                     f"verdict 'inconclusive': {_more(document)} would "
                                     "likely decide it; expected 'may gate' (label more "
                                     "items and audit again)"))
        elif verdict == REPORT_ONLY and options.allow_report_only:
            decided.append(BarResult(bar, BarStatus.REPORTED, None,
                                     f"{said}; shown, not enforced (allow_report_only)"))
        else:
            allowed = (" (allow_report_only = true lets 'report only' through, never "
                       "'void')" if verdict != REPORT_ONLY else
                       "; the judge may not gate (allow_report_only = true in "
                       "[tool.metaeval.gate] shows it instead)")
            decided.append(BarResult(bar, BarStatus.FAIL, None,
                                     f"{said}; expected 'may gate'{allowed}"))
    return decided


def held_out_reads(results: Results) -> list[BarResult]:
    """Every judge-audit result of a judge tuned after a held-out read fails
    (``judge-audit:<name>.set``): its held-out figures overstate it, and only a fresh
    held-out set (``metaeval split --redraw``) read once can decide. A ``set`` the
    gate cannot read fails too; a result without one (written before sets) passes
    this bar unseen."""
    decided = []
    for name, document in sorted(results.judge_audits.items()):
        measured = document.get("set")
        if measured is None:
            continue
        bar = Bar(f"judge-audit:{name}.set.tuned_after_read", expect="false")
        tuned = measured.get("tuned_after_read") if isinstance(measured, dict) else None
        if not isinstance(tuned, bool):
            decided.append(BarResult(bar, BarStatus.FAIL, None, (
                f"set: got {cut(shown(measured), 80)}; expected the set object judge-audit "
                "writes, with tuned_after_read true or false")))
        elif tuned and isinstance(measured, dict):
            read = measured.get("held_out_read")
            ledger = read.get("ledger") if isinstance(read, dict) else None
            decided.append(BarResult(bar, BarStatus.FAIL, None, (
                "tuned after a held-out read: another identity of this judge read the same "
                f"held-out set first (ledger {shown(ledger)}); its figures overstate it. "
                "Draw a fresh held-out set (metaeval split --redraw) and audit once on it")))
    return decided


def _more(document: Mapping[str, JsonValue]) -> str:
    """``about N more labelled items`` from an inconclusive result's ``inconclusive``
    block; a number that is not a count is not echoed as one."""
    block = document.get("inconclusive")
    more = block.get("more_items") if isinstance(block, dict) else None
    if isinstance(more, int) and not isinstance(more, bool) and more >= 0:
        return f"about {more} more labelled item{'' if more == 1 else 's'}"
    return "more labelled items (how many not given)"
