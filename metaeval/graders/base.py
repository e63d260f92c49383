"""The building block of built-in graders: a named, versioned check function.

A built-in grader is a factory that validates its parameters once and returns
a ``RuleGrader`` around a small ``check`` closure. The closure returns a
``Judgement``; the grader stamps it with its name, version and kind.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from metaeval.contract import (
    EvalInput,
    Evidence,
    Finding,
    Grader,
    JsonObject,
    JsonValue,
    Kind,
    Outcome,
)
from metaeval.errors import CheckSpecError

CODE_VERSION = "1"  # metaeval: skip a version label: only bumping it matters

# Cost ranks: rules over the trace are cheapest, then state checks, then reading
# the answer; anything that calls out (a judge) ranks far behind.
RANK_TRAJECTORY = 10  # metaeval: skip only the order of the ranks matters, not the values
RANK_STATE = 20  # metaeval: skip only the order of the ranks matters, not the values
RANK_ANSWER = 30  # metaeval: skip only the order of the ranks matters, not the values
RANK_USER = 50  # metaeval: skip only the order of the ranks matters, not the values
RANK_JUDGE = 100

NO_ANSWER = "no answer in the trace"


@dataclass(frozen=True, slots=True)
class Judgement:
    """What a check function decides, before it is stamped into a Finding."""

    outcome: Outcome
    evidence: tuple[Evidence, ...] = ()
    reason: str = ""
    score: float | None = None


def passed(*evidence: Evidence, reason: str = "") -> Judgement:
    return Judgement(Outcome.PASS, evidence, reason)


def failed(*evidence: Evidence, reason: str = "") -> Judgement:
    return Judgement(Outcome.FAIL, evidence, reason)


def unscored(reason: str, *evidence: Evidence) -> Judgement:
    return Judgement(Outcome.UNSCORED, evidence, reason)


Check = Callable[[EvalInput], Judgement]


@dataclass(frozen=True, slots=True)
class RuleGrader:
    """A Grader around one check function."""

    name: str
    version: str
    kind: Kind
    cost_rank: int
    check: Check

    def grade(self, x: EvalInput) -> Finding:
        j = self.check(x)
        return Finding(self.name, self.version, self.kind, j.outcome, j.score,
                       evidence=j.evidence, reason=j.reason)


def rule(grader: str, check: Check, *, name: str, params: JsonObject, rank: int) -> RuleGrader:
    """Wrap a check; its version changes when the code version or a parameter does."""
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
    return RuleGrader(name or grader, f"{grader}/{CODE_VERSION}+{digest}", Kind.GATE, rank, check)


@dataclass(frozen=True, slots=True)
class Renamed:
    """A user's grader under the check name its spec gives."""

    inner: Grader
    name: str

    @property
    def version(self) -> str:
        return self.inner.version

    @property
    def kind(self) -> Kind:
        return self.inner.kind

    @property
    def cost_rank(self) -> int:
        return self.inner.cost_rank

    def grade(self, x: EvalInput) -> Finding:
        finding = self.inner.grade(x)
        return Finding(self.name, finding.grader_version, finding.kind, finding.outcome,
                       finding.score, finding.threshold, finding.evidence, finding.reason)


def includes(actual: JsonValue, expected: JsonValue) -> bool:
    """Subset match: every key of an expected object is in the actual one, recursively."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and includes(actual[k], v) for k, v in expected.items())
    # bool is an int in Python: True must not match 1.
    return actual == expected and isinstance(actual, bool) == isinstance(expected, bool)


# --- parameter checks, so a bad spec names the field, the value and the expectation ---


def want_str(value: object, param: str) -> str:
    if not isinstance(value, str) or not value:
        raise CheckSpecError(param, f"got {value!r}; expected a non-empty string")
    return value


def want_int(value: object, param: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise CheckSpecError(param, f"got {value!r}; expected an integer >= {minimum}")
    return value


def want_object(value: object, param: str) -> JsonObject:
    if not isinstance(value, dict):
        raise CheckSpecError(param, f"got {value!r}; expected a JSON object")
    return value


def want_str_list(value: object, param: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CheckSpecError(param, f"got {value!r}; expected a list of non-empty strings")
    return tuple(value)


def short(value: object, limit: int = 80) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
