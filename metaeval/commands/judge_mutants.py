"""``metaeval judge-mutants``: can the labels tell the judge from a broken copy of it?

One request, three phases as ``judge-audit``: the plan is judge-audit's own
(``plan_judge_audit``: the items, labels, scale, bars and flags checked); the judge
is audited once, from its recorded verdicts or asked live; then each mutant is
audited against the same labels and decided (``audit.judge_mutants.outcome``).
Reply-rule and decision mutants re-read the replies already had; template mutants
call the judge, through the prompt cache and within ``--max-calls``, after the
cost is told. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from metaeval.audit.collect import Calls, VerdictTable, ask_judge, recorded_table
from metaeval.audit.collect import reread as reread_rule
from metaeval.audit.controls import run_controls
from metaeval.audit.judge_decision import (
    AuditSettings,
    AuditSource,
    AuditVerdict,
    JudgeAudit,
    audit_judge,
    label_scale,
)
from metaeval.audit.judge_mutants import select
from metaeval.audit.judge_mutants.live import (
    PromptCache,
    judge_address,
    template_mutants,
)
from metaeval.audit.judge_mutants.offline import (
    Subject,
    audit_mutant,
    offline_mutants,
    records_of,
)
from metaeval.audit.judge_mutants.outcome import (
    Compared,
    JudgeMutant,
    MutantOutcome,
    MutantStatus,
    decide,
)
from metaeval.audit.verdict import failed_calls
from metaeval.commands.judge_audit_plan import plan_judge_audit
from metaeval.commands.judge_audit_values import JudgeAuditPlan, JudgeAuditRequest
from metaeval.commands.judge_mutant_findings import track
from metaeval.config import Config
from metaeval.errors import ExitCode, InputError
from metaeval.judges.adapters import PromptedJudge
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity, Scale
from metaeval.judges.cache import ReplyCache
from metaeval.judges.reply import NO_TEMPLATES, ReplyRule, custom_hash
from metaeval.judges.spec import build_judge
from metaeval.loaders.judge_items import JudgeItems
from metaeval.loaders.recorded_verdicts import Recorded, item_kinds, load_recorded
from metaeval.mutation.findings_file import Comparison, Findings
from metaeval.untrusted_json import LoadError

__all__ = ["DEFAULT_MAX_CALLS", "JudgeMutantsRequest", "JudgeMutantsResult", "RunState",
           "judge_mutants"]

DEFAULT_MAX_CALLS = 200
"""``--max-calls`` when not given: the most calls template mutants may make."""


@dataclass(frozen=True, slots=True)
class JudgeMutantsRequest:
    """``metaeval judge-mutants``: judge-audit's flags (``audit``), the operators
    (empty: all) and the call budget."""

    audit: JudgeAuditRequest
    operators: tuple[str, ...] = ()
    max_calls: int = DEFAULT_MAX_CALLS
    findings: Path | None = None
    """``--findings``: compare the survivors with this findings file; None: not compared
    (every survivor fails the run)."""
    update_baseline: bool = False
    """``--update-baseline``: write the findings file after the run."""


class RunState(Enum):
    """Whether the mutants were measured."""

    MEASURED = "measured"
    """The judge was audited and its mutants decided."""
    VOID = "void"
    """The judge's own audit is void (unreachable, a control failed): nothing measured."""
    NO_MUTANT = "no mutant"
    """No operator applied to this judge: nothing measured."""


@dataclass(frozen=True, slots=True)
class JudgeMutantsResult:
    """The judge's audit, every mutant's outcome, what was left out and why."""

    judge: JudgeAudit
    outcomes: tuple[MutantOutcome, ...]
    state: RunState
    notes: tuple[str, ...] = ()
    calls: Calls = field(default_factory=Calls)
    """Calls the whole run made (the judge's and every template mutant's)."""
    estimate: int = 0
    """Calls the run was estimated to make before it made any."""
    comparison: Comparison | None = None
    """The survivors against the findings file, when one was named."""
    tracked: Findings = field(default_factory=Findings)
    """The open findings after this run (the file's, or this run's survivors)."""

    def count(self, status: MutantStatus) -> int:
        return sum(o.status is status for o in self.outcomes)

    @property
    def code(self) -> ExitCode:
        """0 every mutant killed or equivalent; 1 one survived; 2 bad input lines left
        out; 3 nothing measured."""
        if self.state is not RunState.MEASURED:
            return ExitCode.VOID
        if self.judge.errors:
            return ExitCode.BAD_INPUT
        if self.comparison is not None:  # a known or accepted survivor does not fail
            return ExitCode.FINDINGS if self.comparison.failing else ExitCode.OK
        return ExitCode.FINDINGS if self.count(MutantStatus.SURVIVED) else ExitCode.OK


def judge_mutants(request: JudgeMutantsRequest, config: Config,
                  notify: Callable[[str], None] | None = None) -> JudgeMutantsResult:
    """Mutate the judge of ``request`` and audit every mutant against its labels.
    ``notify`` is told the cost of a live run before any call is made."""
    chosen = select(request.operators)
    if request.max_calls < 0:
        raise InputError(f"--max-calls: got {request.max_calls!r}; expected an integer >= 0, "
                         "the most calls the judge may be asked")
    if request.update_baseline and request.findings is None:
        raise InputError("--update-baseline: names no findings file; give --findings FILE")
    plan = plan_judge_audit(request.audit, config)
    result = (_recorded(plan, chosen) if plan.recorded else
              _live(plan, chosen, request.max_calls, notify or (lambda _: None)))
    if result.state is not RunState.MEASURED:
        return result
    comparison, tracked = track(result.judge.judge.name, result.outcomes, request.findings,
                                request.update_baseline, config.root)
    return replace(result, comparison=comparison, tracked=tracked)


def _settings(plan: JudgeAuditPlan, people: Scale) -> AuditSettings:
    return AuditSettings(plan.bars, people, False, plan.alt, None, plan.classes)


Asked = tuple[JudgeMutant, VerdictTable, Scale, Calls]
"""A mutant, its verdicts, the scale it reads them on and what asking it cost."""


def _outcomes(subject: Subject, original: JudgeAudit, table: VerdictTable,
              made: list[Asked]) -> list[MutantOutcome]:
    out = []
    for mutant, mutant_table, scale, calls in made:
        audited = audit_mutant(subject, mutant, mutant_table, scale)
        out.append(decide(mutant, Compared(subject.items, original, table, subject.scale,
                                           audited, mutant_table, scale), calls))
    return out


def _recorded(plan: JudgeAuditPlan, chosen: frozenset[str]) -> JudgeMutantsResult:
    rule, scale = plan.reply, plan.scale or DEFAULT_SCALE
    identity = JudgeIdentity(plan.spec, model="recorded",
                             prompt_hash="" if rule is None else
                             custom_hash(NO_TEMPLATES, rule, "recorded"),
                             scale="" if scale == DEFAULT_SCALE
                             else f"{scale.low}-{scale.high} pass>={scale.pass_at}")
    built_one = False
    try:  # a judge metaeval builds reads its log by its own rule and scale
        built = build_judge(plan.spec, allowed=plan.allowed, judges=plan.judges)
    except InputError:
        pass
    else:
        built_one = True
        identity, scale = built.identity, built.scale
        if isinstance(built, PromptedJudge):
            rule = rule or built.reply
    kinds = item_kinds(plan.items)
    records, errors = load_recorded(plan.recorded, scale, kinds, plan.classes)
    if not records and errors:
        raise InputError("\n".join(str(e) for e in errors))
    records = tuple(r for r in records if r.id in kinds)
    notes = ["template mutants call the judge: with --recorded only reply-rule and "
             "decision mutants are made"]
    if rule is not None and any(not r.raw for r in records):
        notes.append("reply-rule mutants not made: some recorded verdicts keep no 'raw' "
                     "reply text to read again")
        rule = None
    elif rule is None:
        notes.append("reply-rule mutants not made: no reply rule to mutate; give --reply "
                     "RULE (the rule the log's raw replies are read by)")
    if rule is not None:
        records = reread_rule(records, rule, scale, kinds)
    table = recorded_table(records)
    judged = Judged(identity, scale, table, records, rule, AuditSource.RECORDED, built_one)
    return _measure(plan, judged, chosen, notes, [], errors=tuple(errors))


@dataclass(frozen=True, slots=True)
class Judged:
    """The judge's verdicts, however they came: who it is, its scale, its verdict
    table, the records its replies are re-read from, the rule they are read by."""

    identity: JudgeIdentity
    scale: Scale
    table: VerdictTable
    records: tuple[Recorded, ...]
    rule: ReplyRule | None
    source: AuditSource
    temperature_known: bool = True
    """False for a log's judge metaeval cannot build: the log does not say."""


def _measure(plan: JudgeAuditPlan, judged: Judged, chosen: frozenset[str], notes: list[str],
             live: list[Asked], errors: tuple[LoadError, ...] = ()) -> JudgeMutantsResult:
    """The judge audited on its table; then the live mutants' tables given and the
    offline mutants made from its records, each audited and decided."""
    identity, scale, table, source = judged.identity, judged.scale, judged.table, judged.source
    items: JudgeItems = plan.items
    people = label_scale(scale, plan.labels, plan.label_pass_at)
    settings = _settings(plan, people)
    controls = run_controls(items, plan.bars, identity)
    original = audit_judge(identity, scale, items, table, source=source, controls=controls,
                           settings=settings)
    original = replace(original, errors=plan.items.errors + errors,
                       temperature_known=judged.temperature_known)
    if original.verdict is AuditVerdict.VOID:
        return JudgeMutantsResult(original, (), RunState.VOID, tuple(notes), table.calls)
    subject = Subject(identity, scale, items, settings, source, controls, original.modes)
    made = [(m.mutant, m.table, m.scale, Calls())
            for m in offline_mutants(table, judged.records, judged.rule, scale, item_kinds(items),
                                     chosen)]
    outcomes = _outcomes(subject, original, table, [*live, *made])
    state = RunState.MEASURED if outcomes else RunState.NO_MUTANT
    return JudgeMutantsResult(original, tuple(outcomes), state, tuple(notes), table.calls)


def _live(plan: JudgeAuditPlan, chosen: frozenset[str], max_calls: int,
          notify: Callable[[str], None]) -> JudgeMutantsResult:
    judge = build_judge(plan.spec, allowed=plan.allowed, judges=plan.judges)
    if not isinstance(judge, PromptedJudge):
        bad = [str(e) for e in plan.items.errors]  # the input named first, then the judge
        why = (f"--judge: {plan.spec!r} is not a judge metaeval prompts (a configured http, "
               "command or python-function judge); its replies cannot be read again, nor "
               "its prompt mutated")
        raise InputError("\n".join([*bad, why]))
    samples, items = plan.samples or 1, plan.items
    store = ReplyCache(plan.cache) if plan.cache is not None else None
    try:
        dry = PromptCache(judge.backend, judge_address(judge), store, dry=True)
        mutants = template_mutants(replace(judge, backend=dry), chosen)
        ask_judge(replace(judge, backend=dry), items, samples)
        for _, mutant_judge in mutants:
            ask_judge(mutant_judge, items, samples)
        estimate, chars = len(dry.prompts), sum(dry.prompts.values())
        said = (f"judge-mutants: {len(mutants)} template mutant(s) of {judge.name!r}; "
                f"{estimate} call(s) to make (about {chars // 4} prompt tokens), the rest "
                f"from the cache; --max-calls {max_calls}")
        notify(said)
        if estimate > max_calls:
            raise InputError(f"--max-calls: the run would make {estimate} call(s) to judge "
                             f"{judge.name!r}, more than --max-calls {max_calls}; nothing was "
                             "asked. Raise --max-calls, or choose fewer --operators or items")
        asked = PromptCache(judge.backend, judge_address(judge), store, max_calls)
        own = replace(judge, backend=asked)
        table = ask_judge(own, items, samples)
        live: list[Asked] = []
        if failed_calls(table.calls) is None:  # an unreachable judge: no mutant is asked
            for mutant, mutant_judge in mutants:
                rebound = replace(mutant_judge, base=own)
                mutant_table = ask_judge(rebound, items, samples)
                live.append((mutant, mutant_table, judge.scale, mutant_table.calls))
    finally:
        if store is not None:
            store.close()
    notes = [] if mutants else ["template mutants not made: the judge has no prompt_template "
                                "of its own, or no chosen operator applies to it"]
    result = _measure(plan, Judged(judge.identity, judge.scale, table, records_of(table),
                                   judge.reply, AuditSource.LIVE), chosen, notes, live)
    total = Calls(sum(c.made for *_, c in live) + table.calls.made,
                  sum(c.cached for *_, c in live) + table.calls.cached,
                  sum(c.failed for *_, c in live) + table.calls.failed)
    return replace(result, calls=total, estimate=estimate)
