"""The judge-backed grader: ``{"grader": "judge", "judge": SPEC, "criterion": TEXT}``.

One criterion per call. The judge is given what happened (the authoritative
state diff and the tool results) and the agent's final answer quoted as data.
It must never be asked about a run with no answer: that is unscored without a
call. A reply the judge's parser could not read is unscored, never a pass.

A check spec is data, so it may only *name* a judge (a built-in, a name under
``[tool.metaeval.judges]``, or an import path in an allowed module): a judge
table in the data could run any command or send any variable to any host.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.contract import (
    EvalInput,
    Evidence,
    Finding,
    Kind,
    Message,
    Outcome,
    ToolCall,
    ToolResult,
)
from metaeval.errors import CheckSpecError, InputError
from metaeval.graders.base import NO_ANSWER, RANK_JUDGE, short, want_str
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.judges.base import Judge
from metaeval.judges.parse import quote
from metaeval.judges.spec import build_judge
from metaeval.state import state_diff

CODE_VERSION = "1"  # metaeval: skip a version label: only bumping it matters


def context(x: EvalInput) -> str:
    """What the judge is told happened: the task, the state diff and the tool results."""
    changes = [c.describe() for c in state_diff(x.initial_state, x.final_state)]
    tools = {c.id: c.tool for c in x.trajectory.tool_calls()}
    results = [f"{tools.get(r.call_id, '?')} ({r.call_id}): {json.dumps(r.content)}"
               for _, r in x.trajectory.indexed(ToolResult)]
    calls = [f"{c.tool}({json.dumps(c.args, sort_keys=True)})"
             for _, c in x.trajectory.indexed(ToolCall)]
    return "\n".join([
        x.task.instruction or "(no instruction recorded)",
        "",
        "What actually changed in the world (authoritative; trust this over any claim):",
        quote("\n".join(changes) or "(nothing changed)", "STATE DIFF"),
        "",
        "Tools the agent called, and what they returned:",
        quote("\n".join([*calls, *results]) or "(no tool calls)", "TOOL RESULTS"),
    ])


@dataclass(frozen=True, slots=True)
class JudgeGrader:
    """A Grader that asks a judge whether the run meets one criterion. Its version
    changes with the judge's identity and with the criterion."""

    judge: Judge
    criterion: str
    name: str

    @property
    def version(self) -> str:
        digest = hashlib.sha256(self.criterion.encode()).hexdigest()[:8]
        return f"judge/{CODE_VERSION}+{self.judge.identity.version}+{digest}"

    @property
    def kind(self) -> Kind:
        return Kind.GATE

    @property
    def cost_rank(self) -> int:
        return RANK_JUDGE

    def grade(self, x: EvalInput) -> Finding:
        index = x.trajectory.answer_index()
        if index is None:
            return Finding(self.name, self.version, self.kind, Outcome.UNSCORED,
                           evidence=(Evidence("trajectory", "no final assistant message"),),
                           reason=NO_ANSWER)
        answer = x.trajectory.events[index]
        assert isinstance(answer, Message)  # answer_index points at an assistant message
        try:
            reply = self.judge.score(context(x), answer.content, criterion=self.criterion)
        except Exception as e:  # a grader must not raise on a well-formed run
            return Finding(self.name, self.version, self.kind, Outcome.UNSCORED,
                           reason=f"judge raised {e!r}")
        who = self.judge.identity.describe()
        if reply.value is None:
            return Finding(self.name, self.version, self.kind, Outcome.UNSCORED,
                           evidence=(Evidence(f"trajectory[{index}]",
                                              f"judge {who} replied {short(reply.raw)}"),),
                           reason=f"judge unscored: {reply.reason}")
        ok = self.judge.scale.passes(reply.value)
        if ok is None:
            return Finding(self.name, self.version, self.kind, Outcome.UNSCORED,
                           reason=f"judge gave a pairwise answer {reply.raw!r} to a pointwise "
                           "question")
        score = reply.value if isinstance(reply.value, float) else None
        detail = f"judge {who} replied {short(reply.raw)} on {self.criterion!r}"
        return Finding(self.name, self.version, self.kind,
                       Outcome.PASS if ok else Outcome.FAIL, score,
                       evidence=(Evidence(f"trajectory[{index}]", detail),))


def judge_with(allowed: AllowedModules,
               judges: JudgesSection = NO_JUDGES) -> Callable[..., JudgeGrader]:
    """The ``judge`` factory of a project whose config allows ``allowed`` and names
    ``judges``. Both are bound here, not taken as parameters, so no check spec can
    widen them."""

    def judge(judge: object, criterion: object, *, name: str = "") -> JudgeGrader:
        """A gate decided by ``judge`` (a judge name or import path) on ``criterion``."""
        text = want_str(criterion, "criterion")
        if isinstance(judge, Mapping):
            raise CheckSpecError("judge", "got a table; a meta-set is data and may only name "
                                 "a judge: declare the table under [tool.metaeval.judges] "
                                 "in pyproject.toml and give its name here")
        if not isinstance(judge, str):
            raise CheckSpecError("judge", f"got {short(judge)}; expected a judge "
                                 "name or an import path 'package.module:attr'")
        try:
            backend = build_judge(judge, where="", allowed=allowed, judges=judges)
        except InputError as e:
            raise CheckSpecError("judge", str(e)) from e
        return JudgeGrader(backend, text, name or "judge")

    return judge


judge = judge_with(BUILTINS_ONLY)
"""The registered ``judge`` factory: built-in judges only."""
