"""``[tool.metaeval]`` in the nearest ``pyproject.toml``, and the defaults.

The only reader of the table: ``load_config`` reads the file once and hands
each part, frozen, to whoever needs it (``Config.mutate`` to the mutation
runner, ``Config.judges`` to whatever builds a judge, ``Config.judge_audit`` to
``judge-audit``). Those that need a vocabulary of their own to check a value
(operator names, a judge table's keys, a declared scale) check it there, from
the section, with the messages naming this file. Flags override what is read
here. A bad value is an InputError naming the file, the key, the value and what
was expected; so is an unknown key, with the closest known ones, since a typo
would otherwise quietly change a run. This module imports no feature of metaeval.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from metaeval.errors import InputError
from metaeval.gate_bars import DEFAULT_OPTIONS, Bar, GateOptions, parse_bars, parse_options
from metaeval.importing import BUILTINS_ONLY, AllowedModules, is_module_name
from metaeval.keys import cut, did_you_mean, reject_unknown
from metaeval.suite_config import NO_MAP, RunMap, SuiteCheck, read_map, read_suite

DEFAULT_META_SETS = ("meta_sets",)
DEFAULT_FINDINGS = "mutants/findings.json"
DEFAULT_SEED = 0
DEFAULT_RESAMPLES = 1000
UNTESTED_CHOICES = ("warn", "fail")
DEFAULT_UNTESTED = "warn"
CLUSTERS = ("auto", "task", "run")
"""``[tool.metaeval.meta_eval] cluster``: what the bootstrap resamples (see ``--cluster``)."""

TOP_KEYS = ("allowed_modules", "findings", "gate", "judge_audit", "judge_prices", "judges",
            "meta_eval", "meta_sets", "mutate")
"""``[tool.metaeval]``. ``judge_audit`` is a table that ``metaeval judge-audit`` reads;
``judge_prices`` the price per million tokens by judge or model (``metaeval.audit.cost``)."""
MUTATE_KEYS = ("targets", "operators", "mutants", "pytest_args", "timeout_factor",
               "timeout_constant", "jobs", "report", "message_strings")
"""``[tool.metaeval.mutate]``: the first two are checked here, the rest by
``metaeval.mutation.run.settings`` from ``MutateSection.runner``; any other key is an error."""
JUDGE_AUDIT_KEYS = ("alpha", "alt_epsilon", "annotators", "kappa_bar", "label_classes",
                    "label_pass_at", "label_scale", "pass_at", "probes", "require_alt_test",
                    "scale", "tnr_bar", "tpr_bar", "unscored_bar")
"""``[tool.metaeval.judge_audit]``: the recorded judge's scale, people's label scale and
pass mark and classes, the default bars, which probes run (``probes``: files, generated or
both), and the alternative annotator test (``annotators``: experts, skilled or crowd;
``alt_epsilon``; ``require_alt_test``); each flag of the same name wins; checked by
``metaeval.judges.scales.configured_audit``."""

_EMPTY: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Bars:
    """Minimums a check must meet in ``metaeval meta-eval``; None is no bar."""

    min_tpr: float | None = None
    min_tnr: float | None = None
    min_kappa: float | None = None

    def over(self, other: Bars) -> Bars:
        """These bars, falling back to ``other`` where one is not set."""
        return Bars(self.min_tpr if self.min_tpr is not None else other.min_tpr,
                    self.min_tnr if self.min_tnr is not None else other.min_tnr,
                    self.min_kappa if self.min_kappa is not None else other.min_kappa)


@dataclass(frozen=True, slots=True)
class MetaEvalConfig:
    """``[tool.metaeval.meta_eval]``: bars for every check, bars per check
    (``[tool.metaeval.meta_eval.checks.NAME]``), the bootstrap's seed and size, and
    whether a check no run makes fail fails the run (``untested``)."""

    bars: Bars = Bars()
    check_bars: dict[str, Bars] = field(default_factory=dict)
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    untested: str = DEFAULT_UNTESTED
    suite: tuple[SuiteCheck, ...] = ()
    """Checks declared once (``suite``, ``suite_files``), applied to the runs they select."""
    labels: tuple[str, ...] = ()
    """Labels files (CSV or JSONL), relative to the project, joined with the runs by id."""
    cluster: str = "auto"
    """What the bootstrap resamples: ``auto``, ``task`` or ``run``."""
    run_map: RunMap = NO_MAP
    """Where an imported run's category, task, criteria and states are read from
    (``map``, and each suite file's ``map``)."""

    def with_flags(self, flags: Bars) -> tuple[Bars, dict[str, Bars]]:
        """The bars for every check and per check with ``flags`` over them (``--min-tpr``
        and the others, or ``assert_graders``'s arguments): a flag overrides the config
        for that metric, per-check bars included."""
        return flags.over(self.bars), {
            name: Bars(None if flags.min_tpr is not None else bars.min_tpr,
                       None if flags.min_tnr is not None else bars.min_tnr,
                       None if flags.min_kappa is not None else bars.min_kappa)
            for name, bars in self.check_bars.items()}

    def bar_of(self, check: str, key: str) -> tuple[float | None, str]:
        """The bar ``key`` (``min_tpr``, ``min_tnr`` or ``min_kappa``) of ``check`` and
        the table that sets it (``checks.NAME`` wins over the section); (None, "") when
        neither does."""
        own = self.check_bars.get(check)
        if own is not None and getattr(own, key) is not None:
            return getattr(own, key), f"[tool.metaeval.meta_eval.checks.{check}] {key}"
        value = getattr(self.bars, key)
        return (value, f"[tool.metaeval.meta_eval] {key}") if value is not None else (None, "")


@dataclass(frozen=True, slots=True)
class MutateSection:
    """``[tool.metaeval.mutate]``, its keys checked against ``MUTATE_KEYS``."""

    pyproject: Path | None = None
    targets: tuple[str, ...] = ()
    """Files, directories or ``module:qualname``."""
    operators: tuple[str, ...] = ()
    """Restrict rewrite operators (empty: all); names checked by the operator
    registry (``metaeval.mutation.find.operators.check_operator_names``)."""
    runner: Mapping[str, object] = field(default_factory=lambda: _EMPTY)
    """The runner's keys as written (``mutants``, ``pytest_args``, ``timeout_factor``,
    ...); ``metaeval.mutation.run.settings.mutate_settings`` checks and reads them."""

    @property
    def where(self) -> str:
        return f"{self.pyproject}: tool.metaeval.mutate"


@dataclass(frozen=True, slots=True)
class JudgesSection:
    """``[tool.metaeval.judges]``: judge specs by name, as written; the judge
    builder (``metaeval.judges.spec``) checks a table when it builds from it."""

    pyproject: Path | None = None
    tables: Mapping[str, object] = field(default_factory=lambda: _EMPTY)


NO_JUDGES = JudgesSection()
"""No configured judge names: the built-in judges and import paths only."""


@dataclass(frozen=True, slots=True)
class JudgeAuditSection:
    """``[tool.metaeval.judge_audit]`` as written (None when absent); read by
    ``metaeval.judges.scales.configured_scale`` for ``judge-audit`` alone."""

    pyproject: Path | None = None
    table: object = None


@dataclass(frozen=True, slots=True)
class Config:
    """Settings of one project; paths are relative to ``root``."""

    root: Path
    meta_sets: tuple[str, ...] = DEFAULT_META_SETS
    findings: str = DEFAULT_FINDINGS
    meta_eval: MetaEvalConfig = MetaEvalConfig()
    mutate: MutateSection = MutateSection()
    gate: tuple[Bar, ...] = ()
    """``[tool.metaeval.gate]``: one bar per metric for ``metaeval gate``."""
    allowed_modules: AllowedModules = BUILTINS_ONLY
    """``[tool.metaeval] allowed_modules``: where graders and judges named by import
    path may come from (absent: only the built-ins)."""
    judges: JudgesSection = NO_JUDGES
    judge_audit: JudgeAuditSection = JudgeAuditSection()
    pyproject: Path | None = None
    """The file these settings were read from; None when there is none."""
    gate_options: GateOptions = DEFAULT_OPTIONS
    """``[tool.metaeval.gate]``'s settings beside its bars (``allow_report_only``)."""
    judge_prices: JudgeAuditSection = JudgeAuditSection()
    """``[tool.metaeval.judge_prices]`` as written; ``metaeval.audit.cost`` checks it."""

    @property
    def mutate_targets(self) -> tuple[str, ...]:
        """``[tool.metaeval.mutate] targets``."""
        return self.mutate.targets

    @property
    def mutate_operators(self) -> tuple[str, ...]:
        """``[tool.metaeval.mutate] operators`` (empty: all)."""
        return self.mutate.operators

    def paths(self, names: tuple[str, ...]) -> list[Path]:
        return [self.root / name for name in names]


def find_pyproject(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def metaeval_table(start: Path, key: str = "") -> tuple[Path | None, dict[str, object]]:
    """The nearest pyproject.toml and its ``[tool.metaeval]`` table (or the
    ``[tool.metaeval.<key>]`` sub-table); ``(None, {})`` when there is no file."""
    pyproject = find_pyproject(start.resolve())
    if pyproject is None:
        return None, {}
    try:
        raw = pyproject.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except OSError as e:
        raise InputError(f"{pyproject}: cannot read: {e}") from e
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise InputError(f"{pyproject}:{line}: not UTF-8 (byte {e.start}); expected a UTF-8 "
                         "TOML file") from e
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{pyproject}: not valid TOML: {e}") from e
    # Found by tests/fuzz: tomllib lets int()'s ValueError through for a number of
    # more than 4,300 digits, and recurses once per level of nested arrays or tables.
    except ValueError as e:
        raise InputError(f"{pyproject}: not valid TOML: {cut(str(e), 120)}") from e
    except RecursionError as e:
        raise InputError(f"{pyproject}: not valid TOML: arrays or tables nested too deep "
                         "to read") from e
    table: dict[str, object] = data
    names: list[str] = []
    for part in ("tool", "metaeval", *([key] if key else [])):
        names.append(part)
        value = table.get(part, {})
        if not isinstance(value, dict):
            raise InputError(f"{pyproject}: {'.'.join(names)}: got {_short(value)}; "
                             "expected a table")
        table = value
    return pyproject, table


def _short(value: object) -> str:
    return cut(repr(value), 80)


def load_config(start: Path | None = None) -> Config:
    """The config of the project around ``start`` (default: the current directory)."""
    start = (start or Path.cwd()).resolve()
    pyproject, section = metaeval_table(start)
    if pyproject is None:
        return Config(start)
    reject_unknown(section, TOP_KEYS, f"{pyproject}: tool.metaeval")
    meta_sets = section.get("meta_sets", list(DEFAULT_META_SETS))
    if not isinstance(meta_sets, list) or not all(isinstance(m, str) for m in meta_sets):
        raise InputError(f"{pyproject}: tool.metaeval.meta_sets: got {meta_sets!r}; "
                         "expected a list of paths")
    findings = section.get("findings", DEFAULT_FINDINGS)
    if not isinstance(findings, str) or not findings:
        raise InputError(f"{pyproject}: tool.metaeval.findings: got {findings!r}; "
                         "expected a path")
    meta_eval = _meta_eval(section.get("meta_eval", {}), f"{pyproject}: tool.metaeval.meta_eval",
                           pyproject.parent)
    mutate = _mutate_section(pyproject, section.get("mutate", {}))
    gate = parse_bars(section.get("gate", {}), f"{pyproject}: tool.metaeval.gate")
    _one_place_for_check_bars(gate, f"{pyproject}: tool.metaeval.gate")
    gate_options = parse_options(section.get("gate", {}), f"{pyproject}: tool.metaeval.gate")
    judges = section.get("judges", {})
    if not isinstance(judges, dict):
        raise InputError(f"{pyproject}: tool.metaeval.judges: got {_short(judges)}; expected "
                         "a table of judges by name")
    return Config(pyproject.parent, tuple(meta_sets), findings, meta_eval, mutate, gate,
                  _allowed_modules(pyproject, section),
                  JudgesSection(pyproject, MappingProxyType(judges)),
                  JudgeAuditSection(pyproject, section.get("judge_audit")), pyproject,
                  gate_options, JudgeAuditSection(pyproject, section.get("judge_prices")))


CHECK_BAR_FIELDS = (("tpr", "min_tpr"), ("tnr", "min_tnr"), ("kappa", "min_kappa"))
"""A meta-eval check's fields that ``[tool.metaeval.meta_eval]`` bars, and their keys there."""
EVALUATOR = "evaluator"
"""The evaluator's row of a meta-eval result: meta-eval sets it no bar, so the gate may."""


def _one_place_for_check_bars(gate: tuple[Bar, ...], where: str) -> None:
    """A check's TPR, TNR and kappa bars live in ``[tool.metaeval.meta_eval]`` alone,
    the one place meta-eval, ``assert_graders`` and the gate all read: a second bar in
    the gate's table could pass where the other fails, and nothing would say which
    one holds."""
    for bar in gate:
        source, _, path = bar.metric.partition(":")
        check, _, rest = path.rpartition(".")
        key = dict(CHECK_BAR_FIELDS).get(rest)
        if source != "meta-eval" or key is None or check in ("", EVALUATOR):
            continue
        instead = f"{key} = {bar.min:g}" if bar.min is not None else f"{key} = N"
        raise InputError(f"{where}.{cut(bar.metric)!r}: a check's bar belongs in "
                         f"[tool.metaeval.meta_eval.checks.{cut(check)}] ({instead}), the "
                         "one place meta-eval, metaeval.testing.assert_graders and gate all "
                         "read; expected no meta-eval:CHECK.tpr, .tnr or .kappa bar here "
                         "(the evaluator's may stay)")


def _allowed_modules(pyproject: Path, section: dict[str, object]) -> AllowedModules:
    value = section.get("allowed_modules", [])
    if (not isinstance(value, list)
            or not all(isinstance(v, str) and is_module_name(v) for v in value)):
        raise InputError(f"{pyproject}: tool.metaeval.allowed_modules: got {_short(value)}; "
                         "expected a list of package or module names (e.g. [\"mypkg\"])")
    return AllowedModules(tuple(value))


def unknown_check_bars(config: Config, checks: Collection[str], where: str) -> str | None:
    """What is wrong with ``[tool.metaeval.meta_eval.checks.NAME]`` bars when a NAME is no
    check of ``checks`` (those of the meta-sets at ``where``), else None: a bar for a
    check that is not there would hold nothing to account."""
    unknown = sorted(set(config.meta_eval.check_bars) - set(checks))
    if not unknown:
        return None
    return (f"{config.pyproject}: tool.metaeval.meta_eval.checks.{cut(unknown[0])}: no check "
            f"of that name in {where}{did_you_mean(unknown[0], checks)}")


_BAR_KEYS = ("min_tpr", "min_tnr", "min_kappa")


def _bars(table: dict[str, object], where: str, extra: tuple[str, ...] = ()) -> Bars:
    reject_unknown(table, (*_BAR_KEYS, *extra), where)
    values: list[float | None] = []
    for key in _BAR_KEYS:
        value = table.get(key)
        low = -1.0 if key == "min_kappa" else 0.0
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or not low <= value <= 1):
            raise InputError(f"{where}.{key}: got {value!r}; expected a number in [{low:g}, 1]")
        values.append(None if value is None else float(value))
    return Bars(*values)


def _meta_eval(section: object, where: str, root: Path) -> MetaEvalConfig:
    if not isinstance(section, dict):
        raise InputError(f"{where}: got {section!r}; expected a table")
    bars = _bars(section, where, ("checks", "seed", "resamples", "untested", "suite",
                                  "suite_files", "labels", "cluster", "map"))
    checks = section.get("checks", {})
    if not isinstance(checks, dict):
        raise InputError(f"{where}.checks: got {checks!r}; expected a table of check names")
    check_bars = {}
    for name, table in sorted(checks.items()):
        if not isinstance(table, dict):
            raise InputError(f"{where}.checks.{name}: got {table!r}; expected a table of bars")
        check_bars[name] = _bars(table, f"{where}.checks.{name}")
    ints = {}
    for key, default, low in (("seed", DEFAULT_SEED, 0), ("resamples", DEFAULT_RESAMPLES, 1)):
        value = section.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InputError(f"{where}.{key}: got {value!r}; expected an integer >= {low}")
        ints[key] = value
    untested = section.get("untested", DEFAULT_UNTESTED)
    if untested not in UNTESTED_CHOICES:
        raise InputError(f"{where}.untested: got {untested!r}; expected one of "
                         f"{', '.join(map(repr, UNTESTED_CHOICES))}")
    labels = section.get("labels", [])
    if not isinstance(labels, list) or not all(isinstance(p, str) and p for p in labels):
        raise InputError(f"{where}.labels: got {_short(labels)}; expected a list of paths "
                         "of labels files (CSV or JSONL), or FORMAT:PATH")
    cluster = section.get("cluster", "auto")
    if cluster not in CLUSTERS:
        raise InputError(f"{where}.cluster: got {_short(cluster)}; expected one of "
                         f"{', '.join(map(repr, CLUSTERS))}")
    return MetaEvalConfig(bars, check_bars, ints["seed"], ints["resamples"], str(untested),
                          read_suite(root, section, where), tuple(labels), str(cluster),
                          read_map(root, section, where))


def _mutate_section(pyproject: Path, section: object) -> MutateSection:
    """``[tool.metaeval.mutate]``: its keys, ``targets``, and ``operators`` as a list
    of strings; the runner's keys are handed on as written."""
    if not isinstance(section, dict):
        raise InputError(f"{pyproject}: tool.metaeval.mutate: got {section!r}; expected a table")
    reject_unknown(section, MUTATE_KEYS, f"{pyproject}: tool.metaeval.mutate")
    targets = section.get("targets", [])
    if not isinstance(targets, list) or not all(isinstance(t, str) and t for t in targets):
        raise InputError(f"{pyproject}: tool.metaeval.mutate.targets: got {targets!r}; "
                         "expected a list of paths or 'package.module:qualname' strings")
    operators = section.get("operators", [])
    if not isinstance(operators, list) or not all(isinstance(o, str) for o in operators):
        raise InputError(f"{pyproject}: tool.metaeval.mutate.operators: got {operators!r}; "
                         "expected a list of operator names")
    runner = {k: v for k, v in section.items() if k not in ("targets", "operators")}
    return MutateSection(pyproject, tuple(targets), tuple(operators), MappingProxyType(runner))
