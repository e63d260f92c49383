"""Decision operators: faults in how a judge's samples and scores become a verdict.

Each operator changes what is done with replies already read: one sample kept
where three were asked, the highest sample taken where the median was, the pass
mark one step lower. Running one reads the verdict table again: no call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from metaeval.audit.collect import Decision, VerdictTable, aggregate
from metaeval.audit.judge_mutants.unit import Example, Family, JudgeOperator
from metaeval.judges.base import Scale
from metaeval.loaders.judge_items import Slot


@dataclass(frozen=True, slots=True)
class DecisionMutant:
    """How a mutant decides: ``table`` turns the judge's verdict table into the one
    the mutant decides by; ``scale`` is the scale it reads scores on."""

    detail: str
    table: Callable[[VerdictTable], VerdictTable]
    scale: Scale


def _mapped(table: VerdictTable, each: Callable[[tuple[Decision, ...]], tuple[Decision, ...]]
            ) -> VerdictTable:
    return replace(table, decisions={slot: each(samples)
                                     for slot, samples in table.decisions.items()})


def one_sample(scale: Scale, samples: int) -> tuple[DecisionMutant, ...]:
    """Keep the first sample of each question and drop the rest: ``samples = 3``
    became 1, and a single noisy reply decides."""
    if samples < 2:
        return ()
    return (DecisionMutant(f"samples {samples} -> 1",
                           lambda table: _mapped(table, lambda s: s[:1]), scale),)


def _highest(samples: tuple[Decision, ...]) -> tuple[Decision, ...]:
    """The highest scored sample, unscored as ``aggregate`` decides it; a pair label
    (no order) is left to the majority."""
    if aggregate(samples) is None:
        return (None,)
    numbers = [s for s in samples if isinstance(s, bool | float)]
    if len(numbers) != sum(s is not None for s in samples):
        return samples
    return (max(numbers),)


def max_of_samples(scale: Scale, samples: int) -> tuple[DecisionMutant, ...]:
    """Decide by the highest sample instead of the median (or any pass instead of
    the majority): one generous sample carries the verdict."""
    if samples < 2:
        return ()
    return (DecisionMutant("median -> max of the samples",
                           lambda table: _mapped(table, _highest), scale),)


def lower_pass_mark(scale: Scale, samples: int) -> tuple[DecisionMutant, ...]:
    """Pass one step lower on the scale: a pass mark off by one (``>`` for ``>=``)."""
    if scale.pass_at <= scale.low:
        return ()
    return (DecisionMutant(f"pass at >= {scale.pass_at} -> >= {scale.pass_at - 1}",
                           lambda table: table, replace(scale, pass_at=scale.pass_at - 1)),)


Transform = Callable[[Scale, int], tuple[DecisionMutant, ...]]
_EXAMPLE_SCALE = Scale(1, 5, 4)


def _said(samples: tuple[Decision, ...], scale: Scale) -> str:
    value = aggregate(samples)
    if value is None or isinstance(value, str):
        return "unscored" if value is None else value
    return f"{value:g} {'pass' if scale.passes(value) else 'fail'}"


def _show(transform: Transform) -> Callable[[str], tuple[str, str]]:
    """The example's samples (``5,2,2``, scores on 1-5 passing at 4) decided by the
    judge and by its first mutant."""

    def show(given: str) -> tuple[str, str]:
        samples: tuple[Decision, ...] = tuple(float(s) for s in given.split(","))
        mutant = transform(_EXAMPLE_SCALE, len(samples))[0]
        table = mutant.table(VerdictTable({_SLOT: samples}))
        return _said(samples, _EXAMPLE_SCALE), _said(table.decisions[_SLOT], mutant.scale)

    return show


def _unit(transform: Transform, examples: tuple[Example, ...]) -> JudgeOperator:
    doc = (transform.__doc__ or "").strip().split("\n\n")[0]
    return JudgeOperator(transform.__name__, Family.DECISION, " ".join(doc.split()), examples,
                         _show(transform))


_SLOT = Slot("example")
UNITS = (
    _unit(one_sample, (Example("2,5,5", "5 pass", "2 fail"),)),
    _unit(max_of_samples, (Example("2,3,5", "3 fail", "5 pass"),)),
    _unit(lower_pass_mark, (Example("3", "3 fail", "3 pass"),)),
)
"""The decision operators, in registry order."""
TRANSFORMS: dict[str, Transform] = {
    t.__name__: t for t in (one_sample, max_of_samples, lower_pass_mark)}
