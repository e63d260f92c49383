"""The import direction of ARCHITECTURE.md's layers, read from the source with ast.

Shared values at the bottom; the features (loading, running, measuring) above
them; a command above the features; rendering above the commands; the command
line on top. A module may import its own layer or any layer below it, never one
above: a feature that imported a renderer, or a command that printed through the
command line, would put the arrows back the way issue 15 took them out. Lazy
imports inside functions count as much as those at the top of a file.

Inside a layer the imports go one way too: two modules that import each other
(however many modules lie between them) are one module split in two, or a piece
both need that belongs in a module below them. A deferred import or one under
``TYPE_CHECKING`` hides such a cycle from Python's import machinery, not from a
reader, so it counts here.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "metaeval"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("shared", ("metaeval", "metaeval.errors", "metaeval.files", "metaeval.data_paths",
                "metaeval.keys", "metaeval.decimals", "metaeval.contract", "metaeval.importing",
                "metaeval.state", "metaeval.vcs", "metaeval.untrusted_json", "metaeval.config",
                "metaeval.gate_bars", "metaeval.suite_config")),
    ("features", ("metaeval.loaders", "metaeval.importers", "metaeval.graders",
                  "metaeval.judges", "metaeval.audit", "metaeval.mutation", "metaeval.init",
                  "metaeval.scaffold")),
    ("commands", ("metaeval.commands", "metaeval.label", "metaeval.testing")),
    ("report", ("metaeval.report",)),
    ("cli", ("metaeval.cli",)),
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


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """The dotted name of ``path``, a file of the package whose directory is ``package``."""
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, module: str, is_package: bool,
             package_dir: Path = PACKAGE) -> Iterator[tuple[int, str]]:
    """Every module ``source`` imports, with its line, wherever the import stands (in a
    function, under ``TYPE_CHECKING``); ``from metaeval import vcs`` names
    ``metaeval.vcs`` when that is a module of the package at ``package_dir``."""
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
                as_path = package_dir.parent.joinpath(*candidate.split("."))
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
    """The package's modules; not ``scaffold/``, whose files are templates of a user's."""
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if "scaffold" not in p.relative_to(PACKAGE).parts[:1])


def import_graph(package_dir: Path, paths: Iterable[Path] | None = None
                 ) -> dict[str, dict[str, int]]:
    """Each module of the package at ``package_dir`` (a directory with ``__init__.py``;
    ``paths``: only these of its files) and the modules of the same package it
    imports, each with the first line that does; a name that is not a module counts
    for the module that defines it."""
    chosen = sorted(package_dir.rglob("*.py")) if paths is None else paths
    files = {module_name(p, package_dir): p for p in chosen}
    graph: dict[str, dict[str, int]] = {}
    for name, path in files.items():
        edges: dict[str, int] = {}
        for line, target in imported(path.read_text(encoding="utf-8"), name,
                                     path.name == "__init__.py", package_dir):
            while target and target not in files:  # metaeval.x.f: the module metaeval.x
                target = target.rpartition(".")[0]
            if target and target != name:
                edges[target] = min(line, edges.get(target, line))
        graph[name] = edges
    return graph


def cycles(graph: Mapping[str, Mapping[str, int]]) -> list[str]:
    """One line per group of modules that import one another (a strongly connected
    component of ``graph``): the shortest way round from its first module, each step
    with the line of the import, e.g. ``a:3 imports b, b:40 imports a``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(_way_round(graph, group) for group in groups)


def _way_round(graph: Mapping[str, Mapping[str, int]], group: set[str]) -> str:
    """The shortest cycle through the first module of ``group``, by breadth first."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for target in sorted(graph[node]):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    steps = [*reversed(path), start]
                    return ", ".join(f"{a}:{graph[a][b]} imports {b}"
                                     for a, b in itertools.pairwise(steps))
                if target in group and target not in came_from and target != start:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"{sorted(group)} is no cycle")  # Tarjan gave a group of one


def test_no_module_imports_a_layer_above_its_own() -> None:
    problems = [problem for path in sources()
                for problem in upward_imports(path.read_text(encoding="utf-8"),
                                              module_name(path), path.name == "__init__.py")]
    assert problems == []


def test_every_module_is_in_a_layer() -> None:
    for path in sources():
        layer_of(module_name(path))  # raises for a module no layer names


def commands_called(source: str, module: str, is_package: bool = False) -> list[str]:
    """Each import of ``source`` that takes from ``metaeval.commands`` anything but a
    class (a command's request or result): a renderer that called a command would run
    it. A name is looked up in the module it comes from, read with ``ast``."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found = [(node.lineno, a.name, "") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = next(name for _, name in imported(
                ast.unparse(ast.ImportFrom(node.module, [ast.alias("_")], node.level)),
                module, is_package))
            found = [(node.lineno, base, a.name) for a in node.names]
        else:
            continue
        for line, where, name in found:
            if not (where == "metaeval.commands" or where.startswith("metaeval.commands.")):
                continue
            path = PACKAGE.parent.joinpath(*where.split("."))
            path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
            classes = {c.name for c in ast.parse(path.read_text(encoding="utf-8")).body
                       if isinstance(c, ast.ClassDef)}
            if name not in classes:
                problems.append(f"{module}:{line} imports {f'{where}.{name}'.rstrip('.')}, "
                                "which is no class: rendering never runs a command")
    return problems


def test_the_report_layer_takes_only_values_from_the_commands() -> None:
    report = PACKAGE / "report"
    problems = [problem for path in sorted(report.rglob("*.py"))
                for problem in commands_called(path.read_text(encoding="utf-8"),
                                               module_name(path), path.name == "__init__.py")]
    assert problems == []


@pytest.mark.parametrize("source", [
    "from metaeval.commands.mutate import run_plan\n",
    "from metaeval.commands.mutate_values import MutateResult\n"
    "def f():\n    from metaeval.commands.mutate import run_plan\n",
    "from metaeval.commands import mutate\n",
    "import metaeval.commands.mutate\n",
    "from ..commands.judge_audit import judge_audit\n",
])
def test_a_renderer_that_calls_a_command_is_caught(source: str) -> None:
    (problem,) = commands_called(source, "metaeval.report.mutate_outcome")
    assert problem.startswith("metaeval.report.mutate_outcome:")


@pytest.mark.parametrize("source", [
    "from metaeval.commands.mutate_values import Message, MutateResult\n",
    "from ..commands.judge_audit_values import JudgeAuditResult\n",
    "from metaeval.mutation.run.runner import MutationRun\nimport json\n",
])
def test_a_renderer_may_take_a_commands_values(source: str) -> None:
    assert commands_called(source, "metaeval.report.mutate_outcome") == []


def test_no_modules_import_each_other() -> None:
    assert cycles(import_graph(PACKAGE, sources())) == []


def wings(graph: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """``graph`` folder by folder: each module as the folder right under the package
    it is in (``pkg.loaders.meta_set`` as ``pkg.loaders``; a top module as itself).
    The imports between two folders are the way a reader goes from one wing to
    another: two wings that import each other are one wing, or share a piece that
    belongs below both, even when no two modules do."""
    def wing(module: str) -> str:
        return ".".join(module.split(".")[:2])

    folded: dict[str, dict[str, int]] = {}
    for module, edges in graph.items():
        mine = folded.setdefault(wing(module), {})
        for target, line in edges.items():
            if wing(target) != wing(module):
                mine[wing(target)] = min(line, mine.get(wing(target), line))
    return folded


def test_no_two_wings_import_each_other() -> None:
    assert cycles(wings(import_graph(PACKAGE, sources()))) == []


def test_two_wings_that_import_each_other_without_a_module_cycle_are_caught(
        tmp_path: Path) -> None:
    # As loaders and importers did: loaders.meta_set used importers.runs, and
    # importers.common used a helper of loaders.meta_set.
    package = _package(tmp_path, {"loaders/__init__.py": "",
                                  "loaders/meta_set.py": "from pkg.importers.runs import g\n",
                                  "importers/__init__.py": "", "importers/runs.py": "",
                                  "importers/common.py": "from pkg.loaders.meta_set import f\n"})
    graph = import_graph(package)
    assert cycles(graph) == []
    assert cycles(wings(graph)) == [
        "pkg.importers:1 imports pkg.loaders, pkg.loaders:1 imports pkg.importers"]
    # One way round is no cycle.
    (package / "importers" / "common.py").write_text("import json\n", encoding="utf-8")
    assert cycles(wings(import_graph(package))) == []


MUTATION_FLOORS: tuple[tuple[str, ...], ...] = (
    ("model", "wire", "limits", "processes", "cache_files", "coverage"),
    ("find", "patches", "apart", "findings_file", "score"),
    ("caches",),
    ("isolation",),
    ("child",),
    ("subprocess",),
    ("fork",),
    ("run", "plan", "plugin"),
)
"""mutation/'s rooms (its folders, and its own modules), lowest floor first, as
ARCHITECTURE.md draws them: the values and files every folder uses; finding the
mutants; the coverage map and the caches; what both isolations are given and give
back (options, ``Ran``, a child's outcome and its status); the child side both
isolations share; each isolation, subprocess below fork (a mutant the fork cannot
place runs as subprocess isolation runs it); the run's order, the plan and the
pytest plugin on top. A room imports its own floor or one below, never one above."""


def rooms(graph: Mapping[str, Mapping[str, int]], package: str) -> dict[str, dict[str, int]]:
    """``graph`` inside ``package`` folded one level down: each module as the folder (or
    the module) right under ``package`` that holds it, named by its last part
    (``pkg.mutation.fork.parent`` as ``fork``); imports from outside ``package`` and
    ``package``'s own ``__init__`` are left out."""
    def room(module: str) -> str | None:
        if not module.startswith(package + "."):
            return None
        return module[len(package) + 1:].split(".")[0]

    folded: dict[str, dict[str, int]] = {}
    for module, edges in graph.items():
        mine = room(module)
        if mine is None:
            continue
        into = folded.setdefault(mine, {})
        for target, line in edges.items():
            theirs = room(target)
            if theirs is not None and theirs != mine:
                into[theirs] = min(line, into.get(theirs, line))
    return folded


def upward_rooms(folded: Mapping[str, Mapping[str, int]],
                 floors: Sequence[Sequence[str]]) -> list[str]:
    """Each import of ``folded`` from a room to one on a higher floor, and each room on
    no floor."""
    floor = {name: index for index, names in enumerate(floors) for name in names}
    problems = [f"{name!r} is on no floor; add it to MUTATION_FLOORS and ARCHITECTURE.md"
                for name in sorted(folded) if name not in floor]
    problems += [f"{name}:{line} imports {target}, a floor above it"
                 for name, edges in sorted(folded.items()) if name in floor
                 for target, line in sorted(edges.items())
                 if target in floor and floor[target] > floor[name]]
    return problems


def test_mutation_rooms_import_one_way() -> None:
    folded = rooms(import_graph(PACKAGE, sources()), "metaeval.mutation")
    assert cycles(folded) == []
    assert upward_rooms(folded, MUTATION_FLOORS) == []


def test_mutation_rooms_that_import_each_other_or_upward_are_caught(tmp_path: Path) -> None:
    # As child and fork did: child.plugin started fork's warm session, and fork's
    # modules put a mutant in place with child.apply.
    package = _package(tmp_path, {"mutation/__init__.py": "",
                                  "mutation/model.py": "",
                                  "mutation/child/__init__.py": "",
                                  "mutation/child/apply.py": "from pkg.mutation import model\n",
                                  "mutation/child/plugin.py":
                                      "def f():\n    from pkg.mutation.fork import warm\n",
                                  "mutation/fork/__init__.py": "",
                                  "mutation/fork/warm.py":
                                      "from pkg.mutation.child import apply\n"})
    graph = import_graph(package)
    assert cycles(graph) == []
    folded = rooms(graph, "pkg.mutation")
    assert cycles(folded) == ["child:2 imports fork, fork:1 imports child"]
    floors = (("model",), ("child",), ("fork",))
    assert upward_rooms(folded, floors) == ["child:2 imports fork, a floor above it"]
    # One way round, downward, is allowed; a room on no floor is named.
    (package / "mutation" / "child" / "plugin.py").write_text("", encoding="utf-8")
    folded = rooms(import_graph(package), "pkg.mutation")
    assert cycles(folded) == []
    assert upward_rooms(folded, floors) == []
    assert upward_rooms(folded, (("model",), ("fork",))) == [
        "'child' is on no floor; add it to MUTATION_FLOORS and ARCHITECTURE.md"]


def _package(root: Path, files: dict[str, str]) -> Path:
    """A package ``pkg`` under ``root`` with ``files`` (name: source) and its ``__init__``."""
    package = root / "pkg"
    for name, source in {"__init__.py": "", **files}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source, encoding="utf-8")
    return package


@pytest.mark.parametrize("files", [
    # The hidden kind: the way back is deferred into a function.
    {"a.py": "from pkg.b import g\n", "b.py": "def g():\n    from pkg.a import f\n"},
    # ... or kept for the type checker only.
    {"a.py": "from pkg.b import g\n",
     "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n"},
    # Relative imports, and a name that is a function of the module, not a module.
    {"a.py": "from .b import g\n", "b.py": "import pkg.a as a\n"},
])
def test_two_modules_that_import_each_other_are_a_cycle(tmp_path: Path,
                                                        files: dict[str, str]) -> None:
    graph = import_graph(_package(tmp_path, files))
    (cycle,) = cycles(graph)
    assert cycle.startswith("pkg.a:1 imports pkg.b, pkg.b:")
    assert cycle.endswith(" imports pkg.a")


def test_a_cycle_through_a_third_module_and_a_subpackage_is_caught(tmp_path: Path) -> None:
    package = _package(tmp_path, {"a.py": "from pkg.sub.c import h\n",
                                  "b.py": "x = 1\n\n\ndef g():\n    import pkg.a\n",
                                  "sub/__init__.py": "", "sub/c.py": "from pkg import b\n",
                                  "d.py": "from pkg import a\n"})
    assert cycles(import_graph(package)) == [
        "pkg.a:1 imports pkg.sub.c, pkg.sub.c:1 imports pkg.b, pkg.b:5 imports pkg.a"]


@pytest.mark.parametrize("files", [
    {"a.py": "from pkg.b import g\n", "b.py": "def g():\n    from pkg import c\n",
     "c.py": "import json\n"},
    # A module that imports its own package's __init__, which imports nothing back.
    {"a.py": "import pkg\nfrom pkg import b\n", "b.py": "from . import c\n", "c.py": ""},
    # A name that resembles a module of the package but belongs to another one.
    {"a.py": "from json import b\n", "b.py": "import pkg.a\n"},
])
def test_imports_one_way_are_no_cycle(tmp_path: Path, files: dict[str, str]) -> None:
    assert cycles(import_graph(_package(tmp_path, files))) == []


@pytest.mark.parametrize(("module", "source"), [
    ("metaeval.mutation.run.runner", "from metaeval.report.mutation import mutation_text\n"),
    ("metaeval.audit.bias_probes", "def f():\n    import metaeval.commands.judge_audit\n"),
    ("metaeval.commands.mutate", "from metaeval import cli\n"),
    ("metaeval.config", "from metaeval.mutation.find.operators import OPERATORS\n"),
    ("metaeval.report.mutation", "from ..cli import main\n"),
])
def test_an_import_up_the_layers_is_caught(module: str, source: str) -> None:
    (problem,) = upward_imports(source, module)
    assert problem.startswith(f"{module}:")


@pytest.mark.parametrize(("module", "source"), [
    ("metaeval.cli", "from metaeval.report.mutation import mutation_text\n"),
    ("metaeval.report.mutate_outcome", "from metaeval.commands.mutate_values import Message\n"),
    ("metaeval.commands.mutate", "from metaeval.mutation.run.runner import run_mutants\n"),
    ("metaeval.mutation.run.runner", "from metaeval.config import load_config\n"),
    ("metaeval.report.mutation", "from .findings import comparison_text\nimport json\n"),
])
def test_an_import_down_or_across_is_allowed(module: str, source: str) -> None:
    assert upward_imports(source, module) == []
