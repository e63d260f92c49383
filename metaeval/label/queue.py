"""What a labelling session shows, in the order it is shown: near misses first.

A run becomes an ``Entry`` holding what a person reads (messages, each tool call
with its arguments and its result, failed calls marked, the state diff, the task
and its checks with what each grader found), and a judge item one holding its
prompt, reference and responses; a pair's responses are put left and right in
an order drawn per annotator and item (``sides``), the same on every restart,
and recorded with the label. The entries are plain JSON for the page, which
puts every string in as text.

**Near misses first.** A run is one when its graders disagree with each other
(one passes where another fails, or one cannot decide) or with a label it
already has (in its line, or any annotator's row in the labels file: the reason
says that one differs, never what it is, so the page stays blind); a judge
item when the recorded judge disagrees with its labels or with itself between
the two orders. A check backed by a
judge is not graded here: the page never calls a model. Within each group the
order is drawn per annotator (``ordered``).

**Blind.** An entry holds what its graders found (for adjudication,
``--show-graders``); ``Entry.json`` leaves it out by default, and says of a near
miss only that it is one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from metaeval.audit.grading import compose, safe_grade
from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.contract import (
    Error,
    Grader,
    JsonObject,
    JsonValue,
    Message,
    Outcome,
    Timeout,
    ToolCall,
    ToolResult,
)
from metaeval.graders.registry import build_grader
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.loaders.judge_items import PairItem, PointItem
from metaeval.loaders.meta_set import MetaRun
from metaeval.state import state_diff

OVERALL = "*"
VERDICT_FIELDS = frozenset({"graded", "overall"})
"""What a run's entry holds of its graders' verdicts: left out of a blind page."""
BLIND_NEAR_MISS = {
    "run": "the graders disagree with each other or with a label, or one could not decide",
    "pair": "the recorded judge disagrees with a label or with itself, or the labels differ",
    "point": "the recorded judge disagrees with a label or with itself, or the labels differ"}
"""A near miss's reason on a blind page: why it comes first, never what was found."""
JUDGE_GRADERS = frozenset({"judge"})
"""Graders that call a model: shown, never run by the page."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One thing to label, as the page receives it (``data``), and why it comes first."""

    kind: str
    """``run``, ``pair`` or ``point``."""
    id: str
    category: str
    checks: tuple[str, ...]
    """What the annotator labels: the run's checks and ``*``; ``""`` for an item."""
    near_miss: str
    """Why the entry is a near miss; empty when it is not one."""
    data: JsonObject
    shown: str = ""
    """A pair's order on the page: ``ab`` (``response_a`` on the left) or ``ba``."""

    def json(self, *, blind: bool = True) -> JsonObject:
        """The entry for the page. ``blind`` (the default): no grader's or judge's
        verdict anywhere in it, and a near miss's reason only says that it is one."""
        if not blind:
            return {"kind": self.kind, "id": self.id, "category": self.category,
                    "checks": list(self.checks), "near_miss": self.near_miss,
                    "shown": self.shown, **self.data}
        data = {k: v for k, v in self.data.items() if k not in VERDICT_FIELDS}
        return {"kind": self.kind, "id": self.id, "category": self.category,
                "checks": list(self.checks),
                "near_miss": BLIND_NEAR_MISS[self.kind] if self.near_miss else "",
                "shown": self.shown, **data}


def sides(annotator: str, item_id: str) -> str:
    """The order a pair is shown to ``annotator``: drawn from both names, so that it is
    random across items and annotators and the same on every restart."""
    digest = hashlib.sha256(f"{annotator}\0{item_id}".encode()).digest()
    return "ab" if digest[0] % 2 == 0 else "ba"


def _event(event: object, results: Mapping[str, ToolResult]) -> JsonObject | None:
    if isinstance(event, Message):
        return {"type": "message", "role": event.role, "content": event.content}
    if isinstance(event, ToolCall):
        result = results.get(event.id)
        return {"type": "tool_call", "tool": event.tool, "call_id": event.id,
                "args": event.args,
                "result": None if result is None else result.content,
                "answered": result is not None,
                "failed": result is not None and result.failed}
    if isinstance(event, Timeout):
        return {"type": "timeout", "detail": event.detail}
    if isinstance(event, Error):
        return {"type": "error", "detail": event.detail}
    return None  # a result is shown with its call


def _changes(before: JsonObject, after: JsonObject) -> list[JsonValue]:
    return [{"path": c.path, "before": c.before, "after": c.after, "added": c.added,
             "removed": c.removed} for c in state_diff(before, after)]


def run_entry(run: MetaRun, labelled: Mapping[str, set[str]], graders: Sequence[Grader | None]
              ) -> Entry:
    """``run`` as the page shows it. ``labelled``: check -> the labels people already
    gave it (its line's and the labels file's); ``graders``: one per check, None for
    one the page does not run."""
    x = run.input
    results: dict[str, ToolResult] = {}
    for event in x.trajectory.events:
        if isinstance(event, ToolResult):
            results.setdefault(event.call_id, event)
    events: list[JsonValue] = [e for e in (_event(ev, results) for ev in x.trajectory.events)
                               if e is not None]
    checks: list[JsonValue] = []
    found: dict[str, Outcome] = {}
    for spec, grader in zip(x.task.checks, graders, strict=True):
        if grader is None:
            checks.append({"name": spec.label, "grader": spec.grader, "params": spec.params,
                           "graded": "not run", "reason": "a judge-backed check: the "
                           "labelling page calls no model"})
            continue
        finding = safe_grade(grader, x)
        found[spec.label] = finding.effective_outcome()
        checks.append({"name": spec.label, "grader": spec.grader, "params": spec.params,
                       "graded": found[spec.label].value, "reason": finding.reason})
    ran = [g for g in graders if g is not None]
    overall = compose(x, ran) if len(ran) == len(graders) and ran else None
    if overall is not None:
        found[OVERALL] = overall
    data: JsonObject = {
        "task": {"id": x.task.id, "instruction": x.task.instruction,
                 "criteria": x.task.criteria},
        "events": events, "changes": _changes(x.initial_state, x.final_state),
        "graded": checks, "overall": None if overall is None else overall.value,
        "source": run.source}
    return Entry("run", run.id, run.category, (OVERALL, *(c.label for c in x.task.checks)),
                 _run_near_miss(found, labelled), data)


def _run_near_miss(found: Mapping[str, Outcome], labelled: Mapping[str, set[str]]) -> str:
    for check, outcome in found.items():
        given = labelled.get(check, set())
        if outcome is not Outcome.UNSCORED and given - {outcome.value}:
            # Not which label: the page is blind to other annotators' labels.
            return (f"{'the evaluator' if check == OVERALL else check} found "
                    f"{outcome.value}; an existing label differs")
    checks = {c: o for c, o in found.items() if c != OVERALL}
    if any(o is Outcome.UNSCORED for o in checks.values()):
        return "a grader could not decide"
    if {Outcome.PASS, Outcome.FAIL} <= set(checks.values()):
        return "the graders disagree: " + ", ".join(
            f"{c} {o.value}" for c, o in sorted(checks.items()))
    return ""


def run_entries(runs: Iterable[MetaRun], labelled: Mapping[str, Mapping[str, set[str]]],
                allowed: AllowedModules = BUILTINS_ONLY, judges: JudgesSection = NO_JUDGES
                ) -> list[Entry]:
    """Every run as an entry; ``labelled``: run id -> check -> labels already given."""
    built: dict[str, Grader] = {}
    entries = []
    for run in runs:
        graders: list[Grader | None] = []
        for spec in run.input.task.checks:
            if spec.grader in JUDGE_GRADERS:
                graders.append(None)
                continue
            key = repr((spec.grader, sorted(spec.params.items()), spec.name))
            if key not in built:
                built[key] = build_grader(spec, allowed, judges)
            graders.append(built[key])
        given = {k: set(v) for k, v in labelled.get(run.id, {}).items()}
        if run.label.verdict is not None:
            given.setdefault(OVERALL, set()).add(run.label.verdict.value)
        for check, outcome in run.label.criteria.items():
            given.setdefault(check, set()).add(outcome.value)
        entries.append(run_entry(run, given, graders))
    return entries


def item_entry(item: PairItem | PointItem, annotator: str,
               judged: Mapping[str, JsonValue], given: Iterable[str] = ()) -> Entry:
    """A judge item as the page shows it to ``annotator``; ``judged``: the recorded
    judge's label by order (``ab``, ``ba``), where there is one; ``given``: the labels
    the labels file already holds for it."""
    labels = {str(a.label) for a in item.annotations} | set(given)
    if isinstance(item, PairItem):
        if item.label:
            labels.add(item.label)
        order = sides(annotator, item.id)
        left, right = ((item.response_a, item.response_b) if order == "ab"
                       else (item.response_b, item.response_a))
        data: JsonObject = {"prompt": item.prompt, "reference": item.reference,
                            "left": left, "right": right, "source": item.source}
        return Entry("pair", item.id, item.category or "", ("",), _item_near_miss(
            labels, judged), data, order)
    if item.verdict:
        labels.add(item.verdict)
    data = {"prompt": item.prompt, "reference": item.reference, "response": item.response,
            "source": item.source}
    return Entry("point", item.id, item.category or "", ("",),
                 _item_near_miss(labels, judged), data)


def _item_near_miss(labels: set[str], judged: Mapping[str, JsonValue]) -> str:
    verdicts = {str(v) for v in judged.values() if v is not None}
    if len(verdicts) > 1:
        return "the judge changed its verdict between the two orders"
    if verdicts and labels and verdicts != labels:
        return f"the judge said {'/'.join(sorted(verdicts))}; an existing label differs"
    if len(labels) > 1:
        return "the labels disagree"
    return ""


def ordered(entries: Iterable[Entry], annotator: str) -> list[Entry]:
    """Near misses first, each group in an order drawn per annotator (``draw``): two
    annotators do not meet the entries in the same order, and one meets them in the
    same order on every restart."""
    listed = sorted(entries, key=lambda e: draw(annotator, e))
    return [e for e in listed if e.near_miss] + [e for e in listed if not e.near_miss]


def draw(annotator: str, entry: Entry) -> bytes:
    """Where ``entry`` falls in ``annotator``'s order: a hash of both, so the order is
    recorded by the names alone."""
    return hashlib.sha256(f"{annotator}\0{entry.kind}\0{entry.id}".encode()).digest()
