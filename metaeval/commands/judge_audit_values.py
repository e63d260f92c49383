"""What one ``metaeval judge-audit`` request is made of and gives back: the request
(the flags), the plan (everything the run needs, resolved once), the result.

Values only, shared by the command's phases (``judge_audit_plan`` makes the plan,
``judge_audit`` runs it into a result) and the rendering layer, which reads a
result and never runs one. This module never loads, asks or writes anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.audit.bars import DEFAULT_ALT, DEFAULT_BARS, AltSettings, Bars
from metaeval.audit.judge_decision import AuditVerdict, JudgeAudit
from metaeval.audit.live import ProbeSettings
from metaeval.audit.measured_set import Chosen, SetChoice
from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.errors import ExitCode
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.judges.base import Judge, JudgeIdentity, Scale
from metaeval.judges.reply import ReplyRule
from metaeval.judges.scales import ProbeSource
from metaeval.loaders.judge_items import JudgeItems
from metaeval.loaders.recorded_verdicts import Recorded
from metaeval.untrusted_json import LoadError

__all__ = ["VERDICT_CODES", "JudgeAuditPlan", "JudgeAuditRequest", "JudgeAuditResult",
           "LiveJudge", "ProbeSettings", "RecordedJudge", "verdict_code"]


@dataclass(frozen=True, slots=True)
class JudgeAuditRequest:
    """What the user asked of ``metaeval judge-audit``; ``None`` means the default."""

    spec: str
    """The judge: a built-in name, an import path, or a name under
    ``[tool.metaeval.judges]``; with ``recorded`` it only names the judge."""
    items: tuple[Path, ...] = ()
    """Judge-item files or folders; empty: ``<meta_sets>/judge/``."""
    recorded: tuple[Path, ...] = ()
    """``--recorded`` (repeatable): recorded-verdict files, read as one log (a verdict
    repeated across them is an error); empty: ask the judge live."""
    samples: int | None = None
    """``--samples``; None: 1 for a live judge, what the log holds for a recorded one."""
    scale_text: str | None = None
    """``--scale``: the recorded scores' scale (``LOW-HIGH``)."""
    pass_at: int | None = None
    cache_path: Path | None = None
    """The reply cache; None: ``.metaeval/judge-cache.sqlite`` under the project root."""
    no_cache: bool = False
    bars: Mapping[str, float] = field(default_factory=dict)
    """The bar flags given (``kappa_bar``, ``tpr_bar``, ``tnr_bar``, ``unscored_bar``,
    ``alpha``); each wins over its ``[tool.metaeval.judge_audit]`` key, which wins
    over ``DEFAULT_BARS``."""
    label_scale_text: str | None = None
    """``--label-scale``: the range of the items' integer labels (``LOW-HIGH``)."""
    label_pass_at: int | None = None
    probes: ProbeSource | None = None
    """``--probes``; None: the config's ``probes``, else ``FILES`` when the item files
    hold probes, else ``GENERATED``."""
    write_probes: Path | None = None
    """``--write-probes``: write the generated probes here (the probe file format)."""
    probe_budget: int | None = None
    """``--probe-budget``: the most calls the probes may make to a live judge."""
    reply: str | None = None
    """``--reply``: re-read the recorded replies' ``raw`` text by this rule (a preset
    or a pattern); None: the recorded verdicts as they are."""
    alt_epsilon: float | None = None
    """``--alt-epsilon``: the alternative annotator test's epsilon; None: the config's
    ``alt_epsilon``, else by its ``annotators`` kind (see ``alt_settings``)."""
    by: str | None = None
    """``--by``: ``category`` breaks the figures down by the items' category."""
    label_classes: str | None = None
    """``--label-classes``: categorical label classes, ``a,b,c``; None: the config's."""
    label_files: tuple[Path, ...] = ()
    """``--labels``: labels files whose item rows join the items as annotators
    (``metaeval.loaders.item_labels``; what ``metaeval label`` writes)."""
    set_choice: SetChoice | None = None
    """``--set``; None: golden when a split lies beside the items, else all."""


@dataclass(frozen=True, slots=True)
class LiveJudge:
    """The judge to ask, built once from its spec and the config."""

    judge: Judge
    people: Scale
    """People's label scale, read against this judge's (see ``label_scale``)."""
    items: JudgeItems
    """The items it is to be asked: the labelled ones and its probes (``probe_items``)."""
    source: ProbeSource
    """Where its probes come from: the item files, generated, or both."""


@dataclass(frozen=True, slots=True)
class RecordedJudge:
    """A judge audited from its logs: who it is and the verdicts it recorded, read once."""

    identity: JudgeIdentity
    scale: Scale
    built: bool
    """Whether metaeval could build it (its identity, temperature included, is known)."""
    records: tuple[Recorded, ...]
    """The recorded verdicts on loaded items, re-read by ``--reply`` when given."""
    bad: tuple[LoadError, ...]
    """The recorded lines left out: unreadable, or naming no loaded item."""
    people: Scale


@dataclass(frozen=True, slots=True)
class JudgeAuditPlan:
    """One audit, every choice made: the items loaded, the judge named, where its
    verdicts come from, the probes, the bars. ``judge_audit_plan.plan_judge_audit``
    makes it from a request and the config; ``judge_audit.run_judge_audit`` runs it.
    Built by hand (tests, a library caller), the defaults are the command's, and
    ``resolve_judge`` checks it and fills ``judge``."""

    spec: str
    """The judge (see ``JudgeAuditRequest.spec``)."""
    items: JudgeItems
    recorded: tuple[Path, ...] = ()
    """Recorded-verdict files; empty: the judge is asked live."""
    samples: int | None = None
    cache: Path | None = None
    """The reply cache of a live judge; None: no cache."""
    bars: Bars = DEFAULT_BARS
    scale: Scale | None = None
    """The recorded judge's declared scale; None: not declared."""
    scale_from: str = "--scale"
    """Where ``scale`` was declared, for the errors that name it."""
    allowed: AllowedModules = BUILTINS_ONLY
    """``[tool.metaeval] allowed_modules``: where a judge named by import path may live."""
    judges: JudgesSection = NO_JUDGES
    """``[tool.metaeval.judges]``: the configured judges a name may stand for."""
    labels: tuple[int, int] | None = None
    """People's integer label range; None: 1-5 (see ``label_scale``)."""
    label_pass_at: int | None = None
    probes: ProbeSettings = field(default_factory=ProbeSettings)
    reply: ReplyRule | None = None
    """``--reply``: read each recorded ``raw`` text again by this rule."""
    alt: AltSettings = DEFAULT_ALT
    by: str | None = None
    """``"category"``: the figures of each category too."""
    classes: tuple[str, ...] = ()
    """The declared classes of categorical labels (recorded verdicts only)."""
    judge: LiveJudge | RecordedJudge | None = None
    """The judge resolved (built, or its recorded verdicts read) by ``plan_judge_audit``;
    a plan built by hand gets it from ``judge_audit_plan.resolve_judge`` before it runs."""
    chosen: Chosen | None = None
    """The set measured (``--set``) and its split; None: the items as given."""
    set_aside: frozenset[str] = frozenset()
    """Items in the files left out by the set: a recorded verdict on one is no error."""


VERDICT_CODES = {AuditVerdict.MAY_GATE: ExitCode.OK, AuditVerdict.REPORT_ONLY: ExitCode.FINDINGS,
                 AuditVerdict.VOID: ExitCode.VOID,
                 AuditVerdict.INCONCLUSIVE: ExitCode.INCONCLUSIVE}
"""May gate 0, report only 1, void (a control failed, or most calls to the judge) 3,
inconclusive (an interval holds its bar) 4."""


@dataclass(frozen=True, slots=True)
class JudgeAuditResult:
    """One audit and the exit code it earns."""

    audit: JudgeAudit
    root: Path
    """The project root, where the calibration file lives unless named."""

    @property
    def code(self) -> ExitCode:
        """The verdict's code; 2 when bad input lines were left out (the rest was
        audited and shown, and the input still needs fixing)."""
        if self.audit.errors:
            return ExitCode.BAD_INPUT
        return verdict_code(self.audit)


def verdict_code(audit: JudgeAudit) -> ExitCode:
    """The code of ``audit``'s verdict; a judge tuned after a held-out read may not
    gate, whatever its verdict, so its may-gate is 1."""
    code = VERDICT_CODES[audit.verdict]
    measured = audit.measured
    if code is ExitCode.OK and measured is not None and measured.tuned_after_read:
        return ExitCode.FINDINGS  # its figures overstate it: it may not gate on them
    return code
