"""``metaeval label --next-for AUDIT.json``: the unlabelled items of an inconclusive
audit in an order that settles it without leaning it.

The audit's JSON (``judge-audit --format json``) holds, for an inconclusive verdict,
people's labels so far and the judge's verdicts on every item nobody has labelled
(``inconclusive.labels``, ``inconclusive.unlabelled``). The items fall in three
groups, first to last:

1. the judge's verdicts on the item disagree with each other (its samples, the two
   orders of a pair, or several judges);
2. they agree, and differ from the current majority of people's labels (the judge
   calls it the rarer label);
3. the rest (the judge agrees with the majority, or gave no verdict).

The groups are *interleaved*, not put one after the other: every prefix of the order
holds each group in proportion to its size, the earlier group first on a tie, so the
first label goes to an item where the judge wavers. Putting a group wholly first
settles an audit fastest, on the wrong side: the audit measures the labelled items,
and items where the judge wavers are items it gets wrong (a simulation of a judge
whose kappa is above the bar settled all 11 of 11 audits as a miss after 10 labels).
Interleaved, the labelled items stay a sample of the kinds of item there are, whatever
order the file is in (a log grouped by the judge's verdict, by score, by category).
Entries the audit does not name come after, in the page's usual order (``queue.ordered``);
within a group the order is drawn per annotator, as the page's is.

The file is data from another job: every field is checked, and an audit with no open
measure is refused (there is no open decision to settle). A "report only" audit may
have one beside reasons no label changes (a probe not run): its items are ordered
for the open measure all the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from metaeval.contract import JsonValue
from metaeval.errors import InputError, shown, shown_json
from metaeval.label.queue import Entry, draw, ordered
from metaeval.untrusted_json import read_json_file

UNSCORED = "unscored"
WAVERS, AGAINST_MAJORITY, OTHER, NOT_NAMED = range(4)
"""The groups of the rule, first to last."""


@dataclass(frozen=True, slots=True)
class OpenAudit:
    """What ``--next-for`` reads of an inconclusive audit."""

    path: Path
    more: int | None
    """Further labelled items the audit said would likely decide it."""
    majority: str | None
    """People's most frequent label so far; None when there is none."""
    unlabelled: Mapping[str, tuple[str, ...]]
    """Item id -> the judge's verdicts on it."""

    def groups(self, items: Iterable[str]) -> tuple[int, int, int]:
        """How many of ``items`` fall in each of the first three groups."""
        found = [self.group(i) for i in items]
        return found.count(WAVERS), found.count(AGAINST_MAJORITY), found.count(OTHER)

    def group(self, item: str) -> int:
        """Where ``item`` falls in the rule (``WAVERS`` first)."""
        if item not in self.unlabelled:
            return NOT_NAMED
        said = {v for v in self.unlabelled[item] if v != UNSCORED}
        if len(said) > 1:
            return WAVERS
        if said and self.majority is not None and said != {self.majority}:
            return AGAINST_MAJORITY
        return OTHER


def _field(path: Path, where: str, value: JsonValue, expected: str) -> InputError:
    return InputError(f"{path}: {where}: got {shown_json(value)}; expected {expected}")


def read_open_audit(path: Path) -> OpenAudit:
    """The open decision of the judge-audit JSON at ``path``; an ``InputError`` naming
    the field for anything else (another result, a decided audit, a bad field)."""
    try:
        document = read_json_file(path)
    except OSError as e:
        raise InputError(f"--next-for {path}: cannot read: {e.strerror or e}") from e
    except InputError as e:
        raise InputError(f"--next-for {path}: {e}") from e
    if not isinstance(document, dict) or "verdict" not in document:
        raise InputError(f"--next-for {path}: not a judge-audit result; expected the JSON of "
                         "metaeval judge-audit --format json")
    block = document.get("inconclusive")
    if block is None:
        # A decided audit, or one whose reasons no label can change: nothing to settle.
        raise _field(path, "verdict", document["verdict"], "an audit with a measure its "
                     "labels cannot decide yet ('inconclusive', or an open measure beside "
                     "other reasons): --next-for orders the items by that open decision")
    if not isinstance(block, dict):
        raise _field(path, "inconclusive", block, "an object (the open decision)")
    more = block.get("more_items")
    if more is not None and (not isinstance(more, int) or isinstance(more, bool) or more < 0):
        raise _field(path, "inconclusive.more_items", more, "a count or null")
    labels = block.get("labels")
    if not isinstance(labels, dict):
        raise _field(path, "inconclusive.labels", labels, "an object label -> count")
    counts: dict[str, int] = {}
    for label, count in labels.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise _field(path, f"inconclusive.labels.{label}", count, "a count")
        counts[label] = count
    unlabelled = block.get("unlabelled")
    if not isinstance(unlabelled, dict):
        raise _field(path, "inconclusive.unlabelled", unlabelled,
                     "an object item id -> the judge's verdicts")
    verdicts: dict[str, tuple[str, ...]] = {}
    for item, said in unlabelled.items():
        if not isinstance(said, list) or not all(isinstance(v, str) for v in said):
            raise _field(path, f"inconclusive.unlabelled.{shown(item)}", said,
                         "a list of verdicts (text)")
        verdicts[item] = tuple(v for v in said if isinstance(v, str))
    top = max(counts.values(), default=0)
    leaders = sorted(label for label, count in counts.items() if count == top and top)
    # A tie has no majority: no verdict then goes against it.
    return OpenAudit(path, more, leaders[0] if len(leaders) == 1 else None, verdicts)


def ordered_for(entries: Iterable[Entry], annotator: str, audit: OpenAudit) -> list[Entry]:
    """``entries`` in the rule's order (see the module docstring). Refuses an audit none
    of whose unlabelled items is among the entries: the file would be used for nothing."""
    listed = list(entries)
    named = [e for e in listed if e.kind != "run" and e.id in audit.unlabelled]
    if not named:
        raise InputError(f"--next-for {audit.path}: none of its {len(audit.unlabelled)} "
                         "unlabelled item(s) is among the judge items given; expected the "
                         "items the audit was run on")
    first = interleaved([sorted((e for e in named if audit.group(e.id) == g),
                                key=lambda e: draw(annotator, e))
                         for g in (WAVERS, AGAINST_MAJORITY, OTHER)])
    rest = ordered([e for e in listed if not (e.kind != "run" and e.id in audit.unlabelled)],
                   annotator)
    return first + rest


def interleaved(groups: list[list[Entry]]) -> list[Entry]:
    """The groups' entries merged so that every prefix holds each group in proportion to
    its size (within one entry): the j-th entry of a group of s is due at j / s of the
    way, the earlier group first on a tie, so the first entries are one of each group."""
    keyed = [(j / len(group), g, j) for g, group in enumerate(groups)
             for j in range(len(group))]
    return [groups[g][j] for _, g, j in sorted(keyed)]
