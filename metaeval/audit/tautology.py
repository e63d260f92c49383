"""Find graders whose verdict does not depend on what the agent did.

Two detectors, each proven by a grader it must flag and one it must not:

* **dynamic**: re-grade every run after each ablation (answer removed,
  trajectory emptied, final state replaced by the initial one, trajectory
  swapped with another run's). A verdict that never moves is a TAUTOLOGY only
  when the set shows it could have: some run was given the trajectory of a run
  on which the check decided otherwise, and still kept its verdict. A check
  that no run makes fail cannot move under ablations that only take things
  away; that is a gap in the set (UNTESTED), not a tautology.
* **static**: parse the grading function's source with libcst and flag one that
  reads only the task (the case file), never the trajectory or the final state
  (CASE-ONLY), and comparisons whose two sides both come from the task, or are
  the same expression (SELF-COMPARISON).

The static detector is conservative: when the run is handed whole to another
function, it cannot see what is read, so it flags nothing. This module never
changes a grader and never writes a file.
"""

from __future__ import annotations

import inspect
import itertools
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from metaeval.audit.ablation import Ablation, Sensitivity, ablate
from metaeval.audit.grading import CheckRuns, safe_grade
from metaeval.contract import Grader
from metaeval.graders.base import Renamed, RuleGrader


def sensitivity(check: CheckRuns) -> Sensitivity:
    """Re-grade every run of ``check`` under every ablation and count verdicts that moved."""
    n = len(check.runs)
    contrasts = sum(case.graded is not check.cases[(i + 1) % n].graded
                    for i, case in enumerate(check.cases))
    moved = []
    for ablation in Ablation:
        count = 0
        for i, (run, grader, case) in enumerate(zip(check.runs, check.graders, check.cases,
                                                    strict=True)):
            other = check.runs[(i + 1) % n].input.trajectory
            after = safe_grade(grader, ablate(run.input, ablation, other)).effective_outcome()
            count += after is not case.graded
        moved.append((ablation, count))
    return Sensitivity(tuple(moved), n, contrasts)


# --- static --------------------------------------------------------------------------

CASE_ONLY = "CASE-ONLY"
SELF_COMPARISON = "SELF-COMPARISON"

# What an attribute of the run stands for; anything else read off it counts as itself.
_ROOTS = {"trajectory": "trajectory", "final_state": "final_state",
          "initial_state": "initial_state", "task": "task", "task_id": "task"}
_WHOLE = "whole run"
_AGENT = frozenset({"trajectory", "final_state", _WHOLE})


@dataclass(frozen=True, slots=True)
class StaticReport:
    """What reading a grading function's source found.

    ``reads`` names the parts of the run it reads (``whole run`` when the run is
    passed on whole); ``flags`` holds CASE-ONLY and SELF-COMPARISON; ``note``
    says why nothing could be read (no source, no run parameter).
    """

    function: str
    reads: tuple[str, ...]
    flags: tuple[str, ...]
    details: tuple[str, ...] = ()
    note: str = ""


def grading_function(grader: Grader) -> Callable[..., object]:
    """The function that does the grading: a RuleGrader's ``check`` closure, else ``grade``."""
    inner: object = grader
    while isinstance(inner, Renamed):
        inner = inner.inner
    if isinstance(inner, RuleGrader):
        return inner.check
    grade: Callable[..., object] = getattr(type(inner), "grade", grader.grade)
    return grade


def static_report(grader: Grader) -> StaticReport:
    """Parse the grading function of ``grader`` with libcst and look at what it reads."""
    function = grading_function(grader)
    name = getattr(function, "__qualname__", repr(function))
    try:
        source = textwrap.dedent(inspect.getsource(function))
        module = cst.parse_module(source)
    except (OSError, TypeError, cst.ParserSyntaxError) as e:
        return StaticReport(name, (), (), note=f"source unavailable: {type(e).__name__}")
    defs = [node for node in module.body if isinstance(node, cst.FunctionDef)]
    if not defs:
        return StaticReport(name, (), (), note="no function definition in the source")
    params = [p.name.value for p in defs[0].params.params if p.name.value not in {"self", "cls"}]
    if not params:
        return StaticReport(name, (), (), note="the function takes no run parameter")
    reader = _Reader(params[0])
    defs[0].body.visit(reader)
    reads = tuple(sorted(reader.reads))
    flags: list[str] = []
    if not reader.reads & _AGENT:
        flags.append(CASE_ONLY)
    if reader.same_source:
        flags.append(SELF_COMPARISON)
    details = tuple(reader.same_source)
    if CASE_ONLY in flags:
        details = (f"reads only {', '.join(reads) or 'nothing of the run'}; "
                   "never the trajectory or the final state", *details)
    return StaticReport(name, reads, tuple(flags), details)


class _Reader(cst.CSTVisitor):
    """Tracks which parts of the run each local name comes from, in source order."""

    def __init__(self, param: str) -> None:
        self.param = param
        self.env: dict[str, frozenset[str]] = {}
        self.reads: set[str] = set()
        self.same_source: list[str] = []

    def sources(self, node: cst.CSTNode) -> frozenset[str]:
        if isinstance(node, cst.Attribute):
            if isinstance(node.value, cst.Name) and node.value.value == self.param:
                return frozenset({_ROOTS.get(node.attr.value, node.attr.value)})
            return self.sources(node.value)
        if isinstance(node, cst.Name):
            if node.value == self.param:
                return frozenset({_WHOLE})
            return self.env.get(node.value, frozenset())
        if isinstance(node, cst.Arg):
            return self.sources(node.value)
        found: frozenset[str] = frozenset()
        for child in node.children:
            found |= self.sources(child)
        return found

    def _bind(self, target: cst.CSTNode, sources: frozenset[str]) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = sources
        elif isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self._bind(element.value, sources)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, sources)

    def _read(self, node: cst.CSTNode) -> frozenset[str]:
        found = self.sources(node)
        self.reads |= found
        return found

    def visit_Assign(self, node: cst.Assign) -> None:
        found = self._read(node.value)
        for target in node.targets:
            self._bind(target.target, found)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, self._read(node.value))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            old = self.env.get(node.target.value, frozenset())
            self.env[node.target.value] = old | self._read(node.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, self._read(node.value))

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, self._read(node.iter))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target, self._read(node.iter))

    def visit_Expr(self, node: cst.Expr) -> None:
        self._read(node.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._read(node.value)

    def visit_If(self, node: cst.If) -> None:
        self._read(node.test)

    def visit_Call(self, node: cst.Call) -> None:
        self._read(node)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._read(node)
        sides = [node.left, *(t.comparator for t in node.comparisons)]
        for left, right in itertools.pairwise(sides):
            a, b = self.sources(left), self.sources(right)
            code = cst.Module([]).code_for_node
            if a and a == b and (a == {"task"} or code(left) == code(right)):
                self.same_source.append(
                    f"{code(left)} vs {code(right)}: both sides from {', '.join(sorted(a))}")


def static_flags(graders: Sequence[Grader]) -> tuple[StaticReport, ...]:
    """One report per distinct grading function among ``graders``, in first-seen order."""
    seen: set[object] = set()
    reports = []
    for grader in graders:
        function = grading_function(grader)
        key = getattr(function, "__code__", function)
        if key in seen:
            continue
        seen.add(key)
        reports.append(static_report(grader))
    return tuple(reports)


# --- both ------------------------------------------------------------------------------


def independence(sens: Sensitivity, static: Sequence[StaticReport]) -> str | None:
    """Why a check's verdict is shown not to depend on what the agent did, or None
    when nothing shows it: the swap (``Sensitivity.tautology``), or an unmoved
    verdict from a grading function whose source reads only the task (CASE-ONLY).
    An unmoved verdict with neither proof is no finding of this module."""
    if not sens.unmoved:
        return None
    if sens.tautology:
        return ("its verdict does not depend on what the agent did: no ablation moved it on "
                f"any of {sens.runs} runs, not even {sens.contrasts} swaps with a trajectory "
                "it decides otherwise")
    case_only = [r.function for r in static if CASE_ONLY in r.flags]
    if case_only:
        return ("its verdict does not depend on what the agent did: no ablation moved it on "
                f"any of {sens.runs} runs, and {', '.join(case_only)} reads only the task")
    return None
