"""Read and validate meta-sets: recorded runs with human labels, one JSON object a line.

Runs are read in the native event format, as OpenAI-style chat messages, or as
Anthropic Messages (content blocks, read by ``importers.runs.anthropic``); all
become the same ``Trajectory``. Every problem is a ``LoadError`` naming
file:line and field, echoing the bad value and saying what was expected. A bad
line is reported and left out; the good lines still load. A bad line must
never become a run, so it can never be counted as a pass.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.contract import (
    CheckSpec,
    Error,
    EvalInput,
    Event,
    JsonObject,
    JsonValue,
    Message,
    Outcome,
    TaskSpec,
    Timeout,
    ToolCall,
    ToolResult,
    Trajectory,
)
from metaeval.errors import BadField, CheckSpecError, shown, shown_json
from metaeval.graders.registry import build_grader
from metaeval.importers.runs.anthropic import is_anthropic_message, message_events
from metaeval.importers.runs.common import BadRecord, decode_tool_content
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.keys import did_you_mean
from metaeval.loaders.fields import missing_or_bad, no_unknown, text_field
from metaeval.untrusted_json import (
    MAX_DEPTH,
    JsonInputError,
    LoadError,
    Record,
    iter_unique,
    join_field,
    parse_json,
    repeated_id,
)

__all__ = ["FORMAT_VERSION", "UNLABELLED", "Label", "LoadError", "MetaRun", "MetaSet",
           "data_files", "iter_meta_runs", "load_meta_sets", "parse_run"]

FORMAT_VERSION = 1
# metadata: what an importer keeps of a harness's run (model, epoch, scores); held as
# a JSON object, never interpreted.
RUN_FIELDS = {"id", "category", "task", "trajectory", "initial_state", "final_state", "label",
              "format_version", "metadata"}
TASK_FIELDS = {"id", "instruction", "criteria", "checks"}
LABEL_FIELDS = {"verdict", "score", "criteria", "rationale", "labeller"}
EVENT_TYPES = ("message", "tool_call", "tool_result", "timeout", "error")
EVENT_FIELDS = {"message": {"type", "role", "content"},
                "tool_call": {"type", "id", "tool", "args"},
                "tool_result": {"type", "call_id", "content", "is_error"},
                "timeout": {"type", "detail"},
                "error": {"type", "detail"}}
# Every key an OpenAI chat message may carry, in a request or a logged reply;
# the ones metaeval does not read (name, refusal, audio...) are allowed, not used.
CHAT_FIELDS = {"role", "content", "name", "tool_calls", "tool_call_id", "function_call",
               "refusal", "annotations", "audio"}
CHAT_CALL_FIELDS = {"id", "type", "function"}
CHAT_FUNCTION_FIELDS = {"name", "arguments"}
ROLES = ("user", "assistant", "system")
CHAT_ROLES = ("user", "assistant", "system", "developer", "tool")
VERDICTS = {"pass": Outcome.PASS, "fail": Outcome.FAIL}
# Chat tool arguments and results are JSON inside a string; the value sits where
# the native format's would (level 4 of the line), so it gets the levels left there.
INNER_DEPTH = MAX_DEPTH - 3


@dataclass(frozen=True, slots=True)
class Label:
    """What people decided about a run: the verdict, a 1-5 score, and per-check verdicts.

    ``verdict`` is None when no one gave an overall verdict (an unlabelled run, or
    one whose annotators tied): the run is then left out of what that label measures.
    """

    verdict: Outcome | None
    score: int | None = None
    criteria: dict[str, Outcome] = field(default_factory=dict)
    rationale: str = ""
    labeller: str = ""
    tied: frozenset[str] = frozenset()
    """Checks whose annotators tied: no gold label, so not the overall verdict either."""

    def for_check(self, check: str) -> Outcome | None:
        """The per-check label where the labeller gave one; else pass when the overall
        verdict is pass (a run people passed should pass every check); else None: an
        overall fail does not say which check failed, so it measures the evaluator
        (the AND of the gates) and no single check."""
        if check in self.tied:
            return None
        if check in self.criteria:
            return self.criteria[check]
        return Outcome.PASS if self.verdict is Outcome.PASS else None


UNLABELLED = Label(None)
"""A run with no label in its line: graded, not measured, until a labels file labels it."""


@dataclass(frozen=True, slots=True)
class MetaRun:
    """One run and its label; ``source`` is ``file:line`` for messages that point back.

    ``metadata`` is the run's free ``metadata`` object (cost, trial, model...): kept
    as written, never interpreted, read only by ``--by metadata.KEY`` and suite selectors.
    """

    id: str
    category: str
    source: str
    input: EvalInput
    label: Label
    metadata: JsonObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MetaSet:
    """What loading found: the good runs, every error, and the files read.

    ``warnings``: what loaded but deserves a look (a reused tool-call id), in the
    same ``file:line: field: message`` form; never a reason to leave a run out.
    """

    runs: tuple[MetaRun, ...]
    errors: tuple[LoadError, ...]
    files: tuple[str, ...]
    warnings: tuple[LoadError, ...] = ()


def _object(obj: JsonObject, key: str, where: str) -> JsonObject:
    value = obj.get(key, {})
    if not isinstance(value, dict):
        raise missing_or_bad(obj, key, where, "a JSON object")
    return value


# --- trajectory: native events and OpenAI-style chat messages ------------------------


def _native_event(raw: JsonObject, where: str) -> list[Event]:
    kind = text_field(raw, "type", f"{where}.type", allowed=EVENT_TYPES)
    no_unknown(raw, EVENT_FIELDS[kind], where)
    if kind == "message":
        role = text_field(raw, "role", f"{where}.role", allowed=ROLES)
        content = raw.get("content")
        if not isinstance(content, str):
            raise missing_or_bad(raw, "content", f"{where}.content", "a string")
        return [Message(role, content)]
    if kind == "tool_call":
        return [ToolCall(text_field(raw, "id", f"{where}.id"),
                         text_field(raw, "tool", f"{where}.tool"),
                         _object(raw, "args", f"{where}.args"))]
    if kind == "tool_result":
        is_error = raw.get("is_error", False)
        if not isinstance(is_error, bool):
            raise BadField(f"{where}.is_error",
                           f"got {shown_json(is_error)}; expected true or false")
        return [ToolResult(text_field(raw, "call_id", f"{where}.call_id"), raw.get("content"),
                           is_error)]
    detail = text_field(raw, "detail", f"{where}.detail", required=False)
    return [Timeout(detail) if kind == "timeout" else Error(detail)]


def _chat_text(raw: JsonObject, where: str) -> str:
    """Chat content: a string, null, or a list of ``{"type": "text", "text": ...}`` parts."""
    content = raw.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
            isinstance(p, dict) and isinstance(p.get("text"), str) for p in content):
        return "".join(str(p["text"]) for p in content if isinstance(p, dict))
    raise BadField(f"{where}.content",
                   f"got {shown_json(content)}; expected a string or text parts")


def _chat_message(raw: JsonObject, where: str, origins: list[str] | None = None
                  ) -> list[Event]:
    if is_anthropic_message(raw):
        try:
            return message_events(raw, where, origins=origins)
        except BadRecord as bad:
            raise BadField(bad.field, bad.message) from bad
    role = text_field(raw, "role", f"{where}.role", allowed=CHAT_ROLES)
    no_unknown(raw, CHAT_FIELDS, where)
    if role == "tool":
        call_id = text_field(raw, "tool_call_id", f"{where}.tool_call_id")
        return [ToolResult(call_id, decode_tool_content(_chat_text(raw, where)))]
    text = _chat_text(raw, where)
    if role != "assistant":
        return [Message("system" if role == "developer" else role, text)]
    calls = raw.get("tool_calls") or []
    if not isinstance(calls, list):
        raise BadField(f"{where}.tool_calls", f"got {shown_json(calls)}; expected a list")
    events: list[Event] = [Message("assistant", text)] if text or not calls else []
    for j, call in enumerate(calls):
        at = f"{where}.tool_calls[{j}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(function, dict):
            raise BadField(at, f"got {shown_json(call)}; expected an object with id and "
                           "function {name, arguments}")
        no_unknown(call, CHAT_CALL_FIELDS, at)
        no_unknown(function, CHAT_FUNCTION_FIELDS, f"{at}.function")
        arguments = function.get("arguments", "{}")
        try:
            args = (parse_json(arguments, max_depth=INNER_DEPTH) if isinstance(arguments, str)
                    else arguments)
        except JsonInputError as e:
            raise BadField(f"{at}.function.arguments",
                           f"got {shown_json(arguments)}; expected a JSON "
                           f"string of an object ({e})") from e
        if not isinstance(args, dict):
            raise BadField(f"{at}.function.arguments",
                           f"got {shown_json(arguments)}; expected a JSON "
                           "string of an object")
        events.append(ToolCall(text_field(call, "id", f"{at}.id"),
                               text_field(function, "name", f"{at}.function.name"), args))
    return events


def _call_ids(item: JsonValue) -> set[str]:
    """The call ids a native tool call or a chat message declares, read as loosely
    as can be: a call with another mistake still answers to its results, so that
    the mistake is one error, not one more for every result."""
    if not isinstance(item, dict):
        return set()
    calls = item.get("tool_calls")
    content = item.get("content")
    if isinstance(content, list) and calls is None:  # Anthropic tool_use blocks
        calls = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
    found = [item.get("id")] if item.get("type") == "tool_call" else (
        [c.get("id") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else [])
    return {i for i in found if isinstance(i, str)}


def _trajectory(raw: JsonValue, problems: list[BadField]) -> Trajectory:
    if not isinstance(raw, list):
        problems.append(BadField("trajectory", f"got {shown_json(raw)}; expected a list of events"))
        return Trajectory()
    events: list[Event] = []
    origins: list[str] = []
    call_ids: set[str] = set()
    for i, item in enumerate(raw):
        where = f"trajectory[{i}]"
        try:
            if not isinstance(item, dict):
                raise BadField(where, f"got {shown_json(item)}; expected an event object")
            blocks: list[str] = []  # an Anthropic message says where each event was
            if "type" not in item and "role" in item:
                new = _chat_message(item, where, blocks)
            else:
                new = _native_event(item, where)
            for event in new:
                if isinstance(event, ToolCall):
                    call_ids.add(event.id)
                if isinstance(event, ToolResult) and event.call_id not in call_ids:
                    field_name = "call_id" if "type" in item else "tool_call_id"
                    raise BadField(f"{where}.{field_name}", f"got {shown(event.call_id)}; expected "
                                   "the id of an earlier tool call")
            events.extend(new)
            origins.extend(blocks or _origins(new, where, "type" not in item))
        except BadField as bad:
            problems.append(bad)
            call_ids.update(_call_ids(item))
    return Trajectory(tuple(events), tuple(origins))


def _origins(new: Sequence[Event], where: str, chat: bool) -> list[str]:
    """Where each event read from the item at ``where`` sits in the file: the item
    itself, or for a chat message with tool calls, its text and each call."""
    if not chat or not any(isinstance(e, ToolCall) for e in new):
        return [where] * len(new)
    found: list[str] = []
    calls = 0
    for event in new:
        if isinstance(event, ToolCall):
            found.append(f"{where}.tool_calls[{calls}]")
            calls += 1
        else:
            found.append(f"{where}.content")
    return found


def reused_call_ids(trajectory: Trajectory) -> list[tuple[str, str, str]]:
    """(where, id, where first) for each tool call whose id an earlier call of the run
    used: accepted (results pair by id and position), but worth a warning, since a
    reader that pairs by id alone gets those results wrong."""
    first: dict[str, str] = {}
    found = []
    for i, event in enumerate(trajectory.events):
        if isinstance(event, ToolCall):
            at = trajectory.at(i)
            if event.id in first:
                found.append((at, event.id, first[event.id]))
            else:
                first[event.id] = at
    return found


# --- task and label ------------------------------------------------------------------


def _task(raw: JsonValue, problems: list[BadField], allowed: AllowedModules,
          judges: JudgesSection) -> TaskSpec | None:
    if not isinstance(raw, dict):
        problems.append(BadField("task",
                                 f"got {shown_json(raw)}; expected an object with id and checks"))
        return None
    try:
        no_unknown(raw, TASK_FIELDS, "task")
        task_id = text_field(raw, "id", "task.id")
        instruction = text_field(raw, "instruction", "task.instruction", required=False)
        criteria = _object(raw, "criteria", "task.criteria")
        checks_raw = raw.get("checks", [])
        if not isinstance(checks_raw, list):
            raise BadField("task.checks",
                           f"got {shown_json(checks_raw)}; expected a list of check specs")
    except BadField as bad:
        problems.append(bad)
        return None
    checks: list[CheckSpec] = []
    for i, spec_raw in enumerate(checks_raw):
        where = f"task.checks[{i}]"
        try:
            spec = _check_spec(spec_raw, where, allowed, judges)
            if spec.label in {c.label for c in checks}:
                raise BadField(f"{where}.name", f"got {shown(spec.label)}; expected a check name "
                               "not already used in this task")
            checks.append(spec)
        except BadField as bad:
            problems.append(bad)
    return TaskSpec(task_id, instruction, criteria, tuple(checks))


def _check_spec(raw: JsonValue, where: str, allowed: AllowedModules,
                judges: JudgesSection) -> CheckSpec:
    if not isinstance(raw, dict):
        raise BadField(where, f"got {shown_json(raw)}; expected {{\"grader\": NAME, ...params}}")
    grader = text_field(raw, "grader", f"{where}.grader")
    name = text_field(raw, "name", f"{where}.name", required=False)
    params = {k: v for k, v in raw.items() if k not in ("grader", "name")}
    spec = CheckSpec(grader, params, name)
    try:
        # A spec that cannot become a grader: bad input, found now.
        built = build_grader(spec, allowed, judges)
    except CheckSpecError as e:
        raise BadField(join_field(where, e.field), _bounded(e.message)) from e
    if not name and ":" in grader and isinstance(built.name, str) and built.name:
        # A user's grader is known by its own name, as labels and bars would write it,
        # not by the import path that found it.
        return CheckSpec(grader, params, built.name)
    return spec


def _bounded(message: str) -> str:
    """A grader's own message, which may echo a huge value unbounded: its start and
    its end, where it says what was expected."""
    return message if len(message) <= 300 else f"{message[:150]} [...] {message[-150:]}"


def _label(raw: JsonValue, checks: Iterable[str] | None, problems: list[BadField]) -> Label | None:
    """The label; ``checks`` None when a check of the task could not be read (its
    error is said already), so its names are not known and a criterion naming one is
    not a second error of the same fault."""
    if not isinstance(raw, dict):
        problems.append(BadField("label",
                                 f"got {shown_json(raw)}; expected an object with a verdict"))
        return None
    try:
        no_unknown(raw, LABEL_FIELDS, "label")
        verdict = VERDICTS[text_field(raw, "verdict", "label.verdict", allowed=tuple(VERDICTS))]
        score = raw.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int)
                                  or not 1 <= score <= 5):
            raise BadField("label.score",
                           f"got {shown_json(score)}; expected an integer from 1 to 5")
        criteria_raw = _object(raw, "criteria", "label.criteria")
        names = set(checks or ())
        criteria: dict[str, Outcome] = {}
        for name in criteria_raw:
            where = join_field("label.criteria", name)
            if checks is not None and name not in names:
                expected = ", ".join(sorted(names)) or "none (the task has no checks)"
                raise BadField(where, f"no check of the task is named {shown(name)}; expected one "
                               f"of {expected}{did_you_mean(name, names)}")
            criteria[name] = VERDICTS[text_field(criteria_raw, name, where,
                                                 allowed=tuple(VERDICTS))]
        return Label(verdict, score, criteria,
                     text_field(raw, "rationale", "label.rationale", required=False),
                     text_field(raw, "labeller", "label.labeller", required=False))
    except BadField as bad:
        problems.append(bad)
        return None


# --- lines and files -------------------------------------------------------------------


def parse_run(raw: JsonValue, source: str, allowed: AllowedModules = BUILTINS_ONLY,
              judges: JudgesSection = NO_JUDGES, suite: Collection[str] = ()
              ) -> tuple[MetaRun | None, list[BadField]]:
    """One record to one run, or None with every problem found in it. A check naming
    code by import path must name it in ``allowed`` (the project's config); ``suite``
    holds the names of the checks a suite declares, which the label may name too."""
    if not isinstance(raw, dict):
        return None, [BadField("", f"got {shown_json(raw)}; expected a JSON object")]
    problems: list[BadField] = []
    try:
        no_unknown(raw, RUN_FIELDS, "")
        if raw.get("format_version", FORMAT_VERSION) != FORMAT_VERSION:
            raise BadField("format_version", f"got {shown_json(raw['format_version'])}; expected "
                           f"{FORMAT_VERSION}")
        run_id = text_field(raw, "id", "id")
        category = text_field(raw, "category", "category", required=False) or "uncategorized"
        initial = _object(raw, "initial_state", "initial_state")
        final = _object(raw, "final_state", "final_state")
        metadata = _object(raw, "metadata", "metadata")
    except BadField as bad:
        problems.append(bad)
    before = len(problems)
    task = _task(raw.get("task"), problems, allowed, judges)
    # A check refused (not allowed, bad parameters) or a task not read leaves the
    # names unknown: the label's criteria are not checked against those left.
    refused = any(p.field.startswith("task.checks[") for p in problems[before:])
    if "trajectory" not in raw:
        problems.append(BadField("trajectory", "missing; expected a list of events"))
    trajectory = _trajectory(raw.get("trajectory", []), problems)
    checks = None if refused or task is None else [*(c.label for c in task.checks), *suite]
    # No label in the line: unlabelled, not an error (a labels file may label it).
    label = _label(raw["label"], checks, problems) if "label" in raw else UNLABELLED
    if problems or task is None or label is None:
        return None, problems
    return MetaRun(run_id, category, source,
                   EvalInput(task, trajectory, initial, final,
                             "initial_state" in raw or "final_state" in raw),
                   label, metadata), []


def data_files(paths: Iterable[Path], suffix: str = ".jsonl"
               ) -> tuple[list[Path], list[LoadError]]:
    """Files as given; directories expand to their ``*<suffix>`` files (sorted);
    name what is missing."""
    files: list[Path] = []
    errors: list[LoadError] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.rglob(f"*{suffix}"))
            if not found:
                errors.append(LoadError(str(path), 0, "", f"no {suffix} files in this directory"))
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            errors.append(LoadError(str(path), 0, "", "no such file or directory"))
    return files, errors


def load_meta_sets(paths: Iterable[Path], allowed: AllowedModules = BUILTINS_ONLY,
                   judges: JudgesSection = NO_JUDGES, suite: Collection[str] = ()) -> MetaSet:
    """Every run of every file; bad lines become errors and the rest still load.
    ``allowed``: the project's ``[tool.metaeval] allowed_modules``, the only code a
    check may name by import path (the default: none, only the built-ins);
    ``judges``: its ``[tool.metaeval.judges]``, the names a judge check may use."""
    files, errors = data_files(paths)
    warnings: list[LoadError] = []
    runs = tuple(iter_meta_runs(files, errors, allowed, judges, suite, warnings))
    return MetaSet(runs, tuple(errors), tuple(str(f) for f in files), tuple(warnings))


def reuse_warnings(run: MetaRun) -> list[tuple[str, str]]:
    """(field, message) of each tool-call id ``run`` reuses: it loads, but deserves a
    look. Every reader of runs (meta-set files, ``--runs``) says the same."""
    return [(f"{at}.id", f"tool-call id {shown(call_id)} reused (first at {first}); each "
             "result pairs with the earliest unanswered call of its id")
            for at, call_id, first in reused_call_ids(run.input.trajectory)]


def iter_meta_runs(files: Iterable[Path], errors: list[LoadError],
                   allowed: AllowedModules = BUILTINS_ONLY, judges: JudgesSection = NO_JUDGES,
                   suite: Collection[str] = (), warnings: list[LoadError] | None = None
                   ) -> Iterator[MetaRun]:
    """``load_meta_sets``'s runs one at a time, read as they are yielded, from ``files``
    (see ``data_files``); bad lines land in ``errors``, what loaded but deserves a look
    in ``warnings``. What a caller lets go is gone: only the ids seen are kept, to
    refuse a repeat."""
    warnings = [] if warnings is None else warnings

    def parse(record: Record, errors: list[LoadError]) -> MetaRun | None:
        run, problems = parse_run(record.value, record.source, allowed, judges, suite)
        errors.extend(record.error(p.field, p.message) for p in problems)
        if run is not None:
            warnings.extend(record.error(field, message) for field, message in
                            reuse_warnings(run))
        return run

    yield from iter_unique(files, errors, parse, lambda run: run.id,
                           lambda record, run, first: repeated_id(record, run.id, first))
