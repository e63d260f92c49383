"""Valid records of each data format, and the schema that says which of their
objects are closed and which keys are required (from the formats in DESIGN.md
and the README, written out here rather than read from the loaders)."""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import strategies as st

from tests.fuzz.strategies import Path, at, idents, json_objects, json_values, names, texts

# --- meta-set runs ---------------------------------------------------------------------

CHECKS: dict[str, dict[str, bool]] = {
    # grader -> its parameters (True: required); "grader" and "name" go with every one
    "no_tool_called": {"tool": True},
    "tool_called": {"tool": True, "args": False},
    "tool_order": {"before": True, "after": True},
    "max_steps": {"value": True},
    "state_unchanged": {},
    "answer_contains": {"text": True},
    "judge": {"judge": True, "criterion": True},
}


@st.composite
def check_specs(draw: st.DrawFn) -> dict[str, object]:
    grader = draw(st.sampled_from(sorted(CHECKS)))
    spec: dict[str, object] = {"grader": grader}
    if grader in ("no_tool_called", "tool_called"):
        spec["tool"] = draw(names)
        if grader == "tool_called" and draw(st.booleans()):
            spec["args"] = draw(json_objects)
    elif grader == "tool_order":
        spec["before"], spec["after"] = draw(names), draw(names)
    elif grader == "max_steps":
        spec["value"] = draw(st.integers(1, 10**6))
    elif grader == "answer_contains":
        spec["text"] = draw(names)
    elif grader == "judge":
        spec["judge"] = draw(st.sampled_from(["steady", "biased", "always-pass"]))
        spec["criterion"] = draw(names)
    if draw(st.booleans()):
        spec["name"] = draw(idents)
    return spec


def _label(spec: Mapping[str, object]) -> str:
    return str(spec.get("name") or spec["grader"])


@st.composite
def trajectories(draw: st.DrawFn) -> list[dict[str, object]]:
    events: list[dict[str, object]] = []
    for n, step in enumerate(draw(st.lists(
            st.sampled_from(["message", "call", "timeout", "error"]), max_size=5))):
        if step == "message":
            events.append({"type": "message",
                           "role": draw(st.sampled_from(["user", "assistant", "system"])),
                           "content": draw(texts)})
        elif step == "call":
            call_id = f"{draw(names)}-{n}"
            events.append({"type": "tool_call", "id": call_id, "tool": draw(names),
                           "args": draw(json_objects)})
            events.append({"type": "tool_result", "call_id": call_id,
                           "content": draw(json_values)})
        else:
            event: dict[str, object] = {"type": step}
            if draw(st.booleans()):
                event["detail"] = draw(texts)
            events.append(event)
    return events


@st.composite
def runs(draw: st.DrawFn, run_id: str | None = None) -> dict[str, object]:
    """A meta-set run in the native format that must load as written."""
    checks: list[dict[str, object]] = []
    for spec in draw(st.lists(check_specs(), max_size=3)):
        if _label(spec) not in {_label(c) for c in checks}:
            checks.append(spec)
    task: dict[str, object] = {"id": draw(names), "checks": checks}
    if draw(st.booleans()):
        task["instruction"] = draw(texts)
    if draw(st.booleans()):
        task["criteria"] = draw(json_objects)
    label: dict[str, object] = {"verdict": draw(st.sampled_from(["pass", "fail"]))}
    if draw(st.booleans()):
        label["score"] = draw(st.integers(1, 5))
    labels = [_label(c) for c in checks]
    if draw(st.booleans()) and labels:
        chosen: list[str] = draw(st.lists(st.sampled_from(labels), unique=True))
        label["criteria"] = {name: draw(st.sampled_from(["pass", "fail"])) for name in chosen}
    for key in ("rationale", "labeller"):
        if draw(st.booleans()):
            label[key] = draw(texts)
    record: dict[str, object] = {"id": run_id or draw(names)}
    if draw(st.booleans()):
        record["category"] = draw(texts)
    record.update(task=task, trajectory=draw(trajectories()))
    for key in ("initial_state", "final_state"):
        if draw(st.booleans()):
            record[key] = draw(json_objects)
    record["label"] = label
    if draw(st.booleans()):
        record["format_version"] = 1
    return record


def run_schema(record: dict[str, object], path: Path) -> Mapping[str, bool] | None:
    """Closed objects of a run and their required keys."""
    if path == ():
        return {"id": True, "category": False, "task": True, "trajectory": True,
                # A run with no label is unlabelled (a labels file may label it).
                "initial_state": False, "final_state": False, "label": False,
                "format_version": False, "metadata": False}
    if path == ("task",):
        return {"id": True, "instruction": False, "criteria": False, "checks": False}
    if path == ("label",):
        return {"verdict": True, "score": False, "criteria": False, "rationale": False,
                "labeller": False}
    if path == ("label", "criteria"):
        checks = at(record, ("task", "checks"))
        return {_label(c): False for c in checks} if isinstance(checks, list) and all(
            isinstance(c, dict) for c in checks) else None
    if len(path) == 2 and path[0] == "trajectory":
        event = at(record, path)
        kind = event.get("type") if isinstance(event, dict) else None
        # A message without "type" is still a run: an OpenAI-style chat message.
        return {"message": {"type": False, "role": True, "content": True},
                "tool_call": {"type": True, "id": True, "tool": True, "args": False},
                "tool_result": {"type": True, "call_id": True, "content": False},
                "timeout": {"type": True, "detail": False},
                "error": {"type": True, "detail": False}}.get(str(kind))
    if len(path) == 3 and path[:2] == ("task", "checks"):
        spec = at(record, path)
        params = CHECKS.get(str(spec.get("grader"))) if isinstance(spec, dict) else None
        return None if params is None else {"grader": True, "name": False, **params}
    return None


# --- judge items and recorded verdicts -------------------------------------------------


@st.composite
def judge_items(draw: st.DrawFn, item_id: str | None = None) -> dict[str, object]:
    """A pointwise item, a pairwise one, a length probe or an injection case."""
    kind = draw(st.sampled_from(["point", "pair", "length", "injection"]))
    item: dict[str, object] = {"id": item_id or draw(names), "prompt": draw(names)}
    if kind == "pair":
        item.update(response_a=draw(names), response_b=draw(names),
                    label=draw(st.sampled_from(["a", "b", "tie"])))
    else:
        item["response"] = draw(names)
    if kind == "length":
        item["padded"] = str(item["response"]) + draw(names)
    elif kind == "injection":
        item.update(payload=draw(names), label="fail")
        if draw(st.booleans()):
            item["control"] = "c" * len(str(item["payload"]))
    elif kind == "point":
        label = draw(st.sampled_from(["pass", "fail", "score", "both"]))
        if label in ("pass", "fail"):
            item["label"] = label
        elif label == "score":
            item["label"] = draw(st.integers(1, 5))
        else:
            item.update(label=draw(st.sampled_from(["pass", "fail"])),
                        score=draw(st.integers(1, 5)))
    if draw(st.booleans()):
        item["reference"] = draw(names)
    return item


def item_schema(record: dict[str, object], path: Path) -> Mapping[str, bool] | None:
    """The keys of each kind of item. ``padded`` and ``payload`` say which kind a record
    is, so they are not required: without ``payload`` an injection case labelled
    fail is a valid pointwise item."""
    if path != ():
        return None
    if "response_a" in record or "response_b" in record:
        return {"id": True, "prompt": True, "response_a": True, "response_b": True,
                "reference": False, "label": True}
    if "padded" in record:
        return {"id": True, "prompt": True, "response": True, "padded": False,
                "reference": False}
    if "payload" in record:
        return {"id": True, "prompt": True, "response": True, "payload": False,
                "control": False, "reference": False, "label": True}
    return {"id": True, "prompt": True, "response": True, "reference": False,
            "label": False, "score": False}


@st.composite
def recorded_verdicts(draw: st.DrawFn, item_id: str | None = None,
                      sample: int | None = None) -> dict[str, object]:
    """A recorded verdict on the 1-5 scale, for an item of unknown kind."""
    record: dict[str, object] = {"id": item_id or draw(names)}
    if draw(st.booleans()):
        record["order"] = draw(st.sampled_from(["ab", "ba"]))
    record["sample"] = sample if sample is not None else draw(st.integers(0, 10**400))
    record["verdict"] = draw(st.none() | st.integers(1, 5) | st.floats(1, 5)
                             | st.sampled_from(["pass", "fail", "a", "b", "tie"]))
    if draw(st.booleans()):
        record["raw"] = draw(texts)
    if draw(st.booleans()):
        record["variant"] = draw(st.sampled_from(["original", "padded", "injected",
                                                  "control"]))
    return record


def recorded_schema(record: dict[str, object], path: Path) -> Mapping[str, bool] | None:
    return {"id": True, "order": False, "sample": False, "verdict": True, "raw": False,
            "variant": False} if path == () else None
