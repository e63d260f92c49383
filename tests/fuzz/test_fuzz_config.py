"""Fuzz the config reader: ``[tool.metaeval]`` with its ``mutate``, ``meta_eval``,
``gate``, ``judges`` and ``judge_audit`` tables, read by every reader of it
(``load_config``, ``load_mutate_settings``, ``build_judge`` for each configured
judge, ``configured_scale``). A valid table loads with every value written; one
broken field is an InputError naming the file or the key, never another
exception; an unknown key, a missing required one, or code named outside
``allowed_modules`` is always an error."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from metaeval.config import load_config
from metaeval.errors import InputError
from metaeval.judges.scales import configured_scale
from metaeval.judges.spec import build_judge
from metaeval.mutation.run.settings import load_mutate_settings
from tests.fuzz.strategies import (
    OPEN,
    Break,
    Raw,
    apply,
    breaks,
    corrupted,
    encode,
    idents,
    names,
    raw_lines,
)

OPERATORS = ("return_constant", "negate_condition", "drop_guard_clause", "flip_comparison",
             "swap_boolean_operator", "swap_all_any", "swap_bool_literal", "shift_constant",
             "swallow_exception", "drop_call", "empty_string_literal", "remove_decorator")


# --- writing TOML ---------------------------------------------------------------------------


def toml(value: object, *, ascii_only: bool = True) -> str:
    """``value`` as a TOML value (tables inline); ``Raw`` verbatim."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return ("nan" if math.isnan(value) else "inf" if value > 0 else "-inf"
                ) if not math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return '"' + "".join(_toml_char(c, ascii_only) for c in value) + '"'
    if isinstance(value, list):
        return "[" + ", ".join(toml(v, ascii_only=ascii_only) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml(str(k), ascii_only=ascii_only)} = "
                               f"{toml(v, ascii_only=ascii_only)}"
                               for k, v in value.items()) + "}"
    if value is None:  # TOML has no null: a key without a value
        return ""
    raise AssertionError(value)


def _toml_char(c: str, ascii_only: bool) -> str:
    if c in '"\\':
        return "\\" + c
    # A lone surrogate is escaped (\ud800, which TOML refuses) or left raw (bytes
    # that are not UTF-8 once encoded).
    if ord(c) < 0x20 or ord(c) == 0x7F or (ascii_only and ord(c) > 0x7E):
        return f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"
    return c


def pyproject(section: Mapping[str, object], *, ascii_only: bool, headers: bool) -> str:
    """A pyproject.toml holding ``section`` as ``[tool.metaeval]``; with ``headers``
    each table of it gets its own ``[tool.metaeval.KEY]`` header."""
    lines = ['[project]', 'name = "fuzzed"', "", "[tool.metaeval]"]
    tables = []
    for key, value in section.items():
        if headers and isinstance(value, dict) and value:
            tables.append((key, value))
        else:
            lines.append(f"{toml(str(key), ascii_only=ascii_only)} = "
                         f"{toml(value, ascii_only=ascii_only)}")
    for key, table in tables:
        lines.append(f"\n[tool.metaeval.{toml(str(key), ascii_only=ascii_only)}]")
        lines += [f"{toml(str(k), ascii_only=ascii_only)} = {toml(v, ascii_only=ascii_only)}"
                  for k, v in table.items()]
    return "\n".join(lines) + "\n"


# --- valid sections -------------------------------------------------------------------------

unit = st.floats(0, 1)
paths = st.text(st.characters(codec="utf-8", exclude_characters="\x7f"), min_size=1,
                max_size=12)


@st.composite
def bars(draw: st.DrawFn) -> dict[str, object]:
    table: dict[str, object] = {}
    for key, values in (("min_tpr", unit), ("min_tnr", unit), ("min_kappa", st.floats(-1, 1))):
        if draw(st.booleans()):
            table[key] = draw(values)
    return table


@st.composite
def judge_tables(draw: st.DrawFn) -> object:
    kind = draw(st.sampled_from(["command", "http", "alias"]))
    if kind == "alias":
        return draw(st.sampled_from(["steady", "biased", "always-pass"]))
    table: dict[str, object] = {"type": kind}
    if kind == "command":
        table["command"] = draw(st.lists(names, min_size=1, max_size=3))
    else:
        table.update(base_url=draw(st.sampled_from(["https://judge.example/v1",
                                                    "http://127.0.0.1:8000"])),
                     model=draw(names))
        for key, values in (("api_key_env", idents), ("retries", st.integers(0, 10)),
                            ("backoff", st.floats(0, 10)), ("concurrency", st.integers(1, 16)),
                            ("temperature", st.floats(0, 2))):
            if draw(st.booleans()):
                table[key] = draw(values)
    if draw(st.booleans()):
        table["timeout"] = draw(st.floats(0.001, 600))
    low = draw(st.integers(-5, 5))
    high = draw(st.integers(low + 1, low + 10))
    if draw(st.booleans()):
        table.update(scale=[low, high], pass_at=draw(st.integers(low, high)))
    if draw(st.booleans()):
        table["modes"] = draw(st.lists(st.sampled_from(["pointwise", "pairwise"]), min_size=1,
                                       unique=True))
    if draw(st.booleans()):
        table["name"] = draw(names)
    return table


@st.composite
def sections(draw: st.DrawFn) -> dict[str, object]:
    """A ``[tool.metaeval]`` table that must load as written."""
    section: dict[str, object] = {}
    if draw(st.booleans()):
        section["meta_sets"] = draw(st.lists(paths, max_size=3))
    if draw(st.booleans()):
        section["findings"] = draw(paths)
    if draw(st.booleans()):
        section["allowed_modules"] = draw(st.lists(
            st.lists(idents, min_size=1, max_size=3).map(".".join), max_size=2))
    if draw(st.booleans()):
        meta_eval = draw(bars())
        if draw(st.booleans()):
            meta_eval["checks"] = draw(st.dictionaries(idents, bars(), max_size=2))
        if draw(st.booleans()):
            meta_eval.update(seed=draw(st.integers(0, 2**63)),
                             resamples=draw(st.integers(1, 10**6)))
        section["meta_eval"] = meta_eval
    if draw(st.booleans()):
        mutate: dict[str, object] = {}
        for key, values in (
                ("targets", st.lists(paths, max_size=2)),
                ("operators", st.lists(st.sampled_from(OPERATORS), unique=True, max_size=3)),
                ("mutants", paths), ("report", paths), ("pytest_args", st.lists(names, max_size=2)),
                ("timeout_factor", st.floats(1, 1000)),
                ("timeout_constant", st.floats(0, 86400)), ("jobs", st.integers(0, 1024)),
                ("message_strings", st.booleans())):
            if draw(st.booleans()):
                mutate[key] = draw(values)
        section["mutate"] = mutate
    if draw(st.booleans()):
        section["gate"] = draw(st.dictionaries(
            st.tuples(st.sampled_from(["meta-eval", "judge-audit", "mutate"]), idents).map(
                ":".join), unit | st.fixed_dictionaries({"min": unit, "max": unit}),
            max_size=2))
    if draw(st.booleans()):
        section["judges"] = draw(st.dictionaries(idents, judge_tables(), max_size=2))
    if draw(st.booleans()):
        low = draw(st.integers(-100, 100))
        high = draw(st.integers(low + 1, low + 100))
        section["judge_audit"] = {"scale": f"{low}-{high}", "pass_at": draw(
            st.integers(low, high))}
    return section


BAR_KEYS = {"min_tpr": False, "min_tnr": False, "min_kappa": False}
COMMON_JUDGE = {"type": True, "name": False, "timeout": False, "scale": False,
                "pass_at": False, "modes": False}


def schema(record: dict[str, object], path: tuple[str | int, ...]) -> Mapping[str, bool] | None:
    """The closed tables of ``[tool.metaeval]`` and their required keys."""
    if path == ():
        return dict.fromkeys(("allowed_modules", "findings", "gate", "judge_audit", "judges",
                              "meta_eval", "meta_sets", "mutate"), False)
    if path == ("meta_eval",):
        return {**BAR_KEYS, "checks": False, "seed": False, "resamples": False}
    if len(path) == 3 and path[:2] == ("meta_eval", "checks"):
        return BAR_KEYS
    if path == ("mutate",):
        return dict.fromkeys(("targets", "operators", "mutants", "pytest_args",
                              "timeout_factor", "timeout_constant", "jobs", "report",
                              "message_strings"), False)
    if len(path) == 3 and path[0] == "gate":
        return {"min": False, "max": False}
    if len(path) == 2 and path[0] == "judges":
        table = record["judges"][path[1]]  # type: ignore[index]
        kind = table.get("type") if isinstance(table, dict) else None
        if kind == "command":
            return {**COMMON_JUDGE, "command": True}
        if kind == "http":
            return {**COMMON_JUDGE, "base_url": True, "model": True, "api_key_env": False,
                    "retries": False, "backoff": False, "concurrency": False,
                    "temperature": False}
        return None
    if path == ("judge_audit",):
        return {"scale": False, "pass_at": False}
    return None if path[:1] != ("gate",) or len(path) != 1 else {OPEN: True}


# --- reading ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-config")


def read_everything(root: Path) -> None:
    """Every reader of ``[tool.metaeval]``, as the commands call them."""
    config = load_config(root)
    load_mutate_settings(root)
    configured_scale(config.judge_audit)
    for name in config.judges.tables:
        build_judge(name, allowed=config.allowed_modules, judges=config.judges)


def assert_same_config(root: Path, section: dict[str, object]) -> None:
    config = load_config(root)
    assert config.meta_sets == tuple(section.get("meta_sets", ["meta_sets"]))  # type: ignore[arg-type]
    assert config.findings == section.get("findings", "mutants/findings.json")
    assert config.allowed_modules.packages == tuple(section.get("allowed_modules", []))  # type: ignore[arg-type]
    meta_eval = section.get("meta_eval", {})
    assert isinstance(meta_eval, dict)
    for key in BAR_KEYS:
        assert getattr(config.meta_eval.bars, key) == meta_eval.get(key)
    checks = meta_eval.get("checks", {})
    assert {name: (b.min_tpr, b.min_tnr, b.min_kappa)
            for name, b in config.meta_eval.check_bars.items()} == {
        name: (t.get("min_tpr"), t.get("min_tnr"), t.get("min_kappa"))
        for name, t in checks.items()}
    assert (config.meta_eval.seed, config.meta_eval.resamples) == (
        meta_eval.get("seed", 0), meta_eval.get("resamples", 1000))
    mutate = section.get("mutate", {})
    assert isinstance(mutate, dict)
    assert config.mutate_targets == tuple(mutate.get("targets", []))
    assert config.mutate_operators == tuple(mutate.get("operators", []))
    settings = load_mutate_settings(root)
    assert (settings.mutants, settings.report, settings.pytest_args, settings.jobs,
            settings.message_strings) == (
        mutate.get("mutants", "mutants"), mutate.get("report", ".metaeval/mutation-report.json"),
        tuple(mutate.get("pytest_args", [])), mutate.get("jobs", 0),
        mutate.get("message_strings", False))
    for key in ("timeout_factor", "timeout_constant"):
        if key in mutate:
            assert getattr(settings, key) == mutate[key]
    gate = section.get("gate", {})
    assert isinstance(gate, dict)
    assert {b.metric: (b.min, b.max) for b in config.gate} == {
        metric: ((spec, None) if not isinstance(spec, dict) else (spec["min"], spec["max"]))
        for metric, spec in gate.items()}
    audit = section.get("judge_audit")
    scale = configured_scale(config.judge_audit)
    if isinstance(audit, dict):
        assert scale is not None
        assert f"{scale.low}-{scale.high}" == audit["scale"] and scale.pass_at == audit["pass_at"]
    else:
        assert scale is None
    judges = section.get("judges", {})
    assert isinstance(judges, dict)
    with contextlib.chdir(root):
        for name, table in judges.items():
            judge = build_judge(name, judges=config.judges)
            if isinstance(table, dict):
                assert judge.identity.name == table.get("name", name)
                if "scale" in table:
                    assert [judge.scale.low, judge.scale.high] == table["scale"]


@given(sections(), st.booleans(), st.booleans())
def test_a_valid_config_loads_with_every_value(project: Path, section: dict[str, object],
                                               ascii_only: bool, headers: bool) -> None:
    (project / "pyproject.toml").write_bytes(
        encode(pyproject(section, ascii_only=ascii_only, headers=headers)))
    assert_same_config(project, section)


@st.composite
def broken_sections(draw: st.DrawFn) -> tuple[dict[str, object], Break]:
    section = draw(sections().filter(bool))
    return section, draw(breaks(section, schema))


SEED: dict[str, object] = {
    "findings": "mutants/findings.json", "allowed_modules": [],
    "mutate": {"targets": ["pkg"], "timeout_factor": 2.0, "jobs": 2},
    "judges": {"house": {"type": "command", "command": ["judge"], "timeout": 5.0}},
}


@given(broken_sections(), st.booleans(), st.booleans())
# Issue 13: typos that passed ("findigns", "target", "timeout" in the mutate
# table), code named as a judge, non-finite and negative numbers.
@example((SEED, Break("rename", ("findings",), "findigns", True)), True, False)
@example((SEED, Break("rename", ("mutate", "targets"), "target", True)), True, True)
@example((SEED, Break("rename", ("mutate", "timeout_factor"), "timeout", True)), True, True)
@example((SEED, Break("replace", ("judges", "house"), {"type": "python", "target": "os:system"},
                      True)), True, True)
@example((SEED, Break("replace", ("judges", "house"), "os:system", True)), True, False)
@example((SEED, Break("replace", ("judges", "house", "timeout"), math.nan, True)), True, True)
@example((SEED, Break("replace", ("mutate", "timeout_factor"), math.inf, True)), True, True)
@example((SEED, Break("replace", ("mutate", "jobs"), -1, True)), True, True)
@example((SEED, Break("replace", ("mutate", "jobs"), 10**400, True)), True, True)
@example((SEED, Break("replace", ("findings",), Raw("1" * 5000), True)), True, False)
@example((SEED, Break("replace", ("findings",), Raw("[" * 1000 + "]" * 1000), True)), True,
         False)
@example((SEED, Break("replace", ("findings",), "\ud800", True)), False, False)
@example((SEED, Break("replace", ("judges", "house", "type"), ["command"], True)), True, True)
@example((SEED, Break("replace", ("judges", "house", "modes"), [["pointwise"]], True)), True,
         True)
def test_a_config_with_one_field_broken_is_an_input_error_naming_it_or_loads(
        project: Path, case: tuple[dict[str, object], Break], ascii_only: bool,
        headers: bool) -> None:
    section, brk = case
    path = project / "pyproject.toml"
    path.write_bytes(encode(pyproject(apply(section, brk), ascii_only=ascii_only,
                                      headers=headers)))
    try:
        read_everything(project)
    except InputError as e:
        message = str(e)
        assert str(path) in message or "tool.metaeval" in message, message
        message.encode("utf-8")
        return
    assert not brk.must_fail, f"{brk} loaded"


@given(sections().flatmap(lambda s: corrupted(encode(pyproject(s, ascii_only=False,
                                                                headers=True))))
       | raw_lines.map(lambda b: b"[tool.metaeval]\n" + b))
def test_a_pyproject_of_bytes_is_an_input_error_or_loads(project: Path, data: bytes) -> None:
    (project / "pyproject.toml").write_bytes(data)
    try:
        read_everything(project)
    except InputError as e:
        str(e).encode("utf-8")
