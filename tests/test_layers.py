"""The import direction of ARCHITECTURE.md's layers, read from the source with ast.

Shared values at the bottom; the features (loading, running, measuring) above
them; a command above the features; rendering above the commands; the command
line on top. A module may import its own layer or any layer below it, never one
above: a feature that imported a renderer, or a command that printed through the
command line, would put the arrows back the way issue 15 took them out. Lazy
imports inside functions count as much as those at the top of a file.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "metaeval"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("shared", ("metaeval", "metaeval.errors", "metaeval.files", "metaeval.data_paths",
                "metaeval.keys",
                "metaeval.contract", "metaeval.importing", "metaeval.state", "metaeval.vcs",
                "metaeval.untrusted_json", "metaeval.config", "metaeval.gate",
                "metaeval.suite_config")),
    ("features", ("metaeval.graders", "metaeval.judges", "metaeval.audit", "metaeval.mutation",
                  "metaeval.meta_set", "metaeval.suites", "metaeval.labels",
                  "metaeval.judge_items", "metaeval.llmbar",
                  "metaeval.recorded_forms", "metaeval.importers",
                  "metaeval.judge_labels", "metaeval.annotation_files",
                  "metaeval.findings", "metaeval.init", "metaeval.scaffold",
                  "metaeval.project_package", "metaeval.workflow_install")),
    ("commands", ("metaeval.commands", "metaeval.testing")),
    ("report", ("metaeval.report",)),
    ("cli", ("metaeval.cli", "metaeval.cli_parts", "metaeval.cli_findings",
             "metaeval.cli_import", "metaeval.cli_import_runs")),
)
"""Each layer and the modules (or packages) in it, lowest first."""


def layer_of(module: str) -> int:
    """The index of ``module``'s layer: the longest prefix that names it wins."""
    best, found = -1, None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), index
    if found is None:
        raise LookupError(f"{module!r} is in no layer; add it to LAYERS and ARCHITECTURE.md")
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """Every ``metaeval`` module ``source`` imports, with its line; ``from metaeval
    import vcs`` names ``metaeval.vcs`` when that is a module of the package."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                as_path = PACKAGE.parent.joinpath(*candidate.split("."))
                submodule = as_path.with_suffix(".py").is_file() or as_path.is_dir()
                yield node.lineno, candidate if submodule else base


def upward_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """Each import of ``source`` that reaches a layer above ``module``'s."""
    own = layer_of(module)
    return [f"{module}:{line} imports {name} ({LAYERS[layer_of(name)][0]} is above "
            f"{LAYERS[own][0]})"
            for line, name in imported(source, module, is_package)
            if (name == "metaeval" or name.startswith("metaeval.")) and layer_of(name) > own]


def sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if "scaffold" not in p.relative_to(PACKAGE).parts[:1])


def test_no_module_imports_a_layer_above_its_own() -> None:
    problems = [problem for path in sources()
                for problem in upward_imports(path.read_text(encoding="utf-8"),
                                              module_name(path), path.name == "__init__.py")]
    assert problems == []


def test_every_module_is_in_a_layer() -> None:
    for path in sources():
        layer_of(module_name(path))  # raises for a module no layer names


@pytest.mark.parametrize(("module", "source"), [
    ("metaeval.mutation.run.runner", "from metaeval.report.mutation import mutation_text\n"),
    ("metaeval.audit.probes", "def f():\n    import metaeval.commands.judge_audit\n"),
    ("metaeval.commands.mutate", "from metaeval import cli\n"),
    ("metaeval.config", "from metaeval.mutation.find.operators import OPERATORS\n"),
    ("metaeval.report.mutation", "from ..cli import main\n"),
])
def test_an_import_up_the_layers_is_caught(module: str, source: str) -> None:
    (problem,) = upward_imports(source, module)
    assert problem.startswith(f"{module}:")


@pytest.mark.parametrize(("module", "source"), [
    ("metaeval.cli", "from metaeval.report.mutation import mutation_text\n"),
    ("metaeval.report.mutate_outcome", "from metaeval.commands.mutate import run_plan\n"),
    ("metaeval.commands.mutate", "from metaeval.mutation.run.runner import run_mutants\n"),
    ("metaeval.mutation.run.runner", "from metaeval.config import load_config\n"),
    ("metaeval.report.mutation", "from .findings import comparison_text\nimport json\n"),
])
def test_an_import_down_or_across_is_allowed(module: str, source: str) -> None:
    assert upward_imports(source, module) == []
