"""The public surface: the modules a user imports from, each with ``__all__``, and
docs that import nothing else (issue 46, item 6).

A name is promised when it is in the ``__all__`` of a module of ``PUBLIC``;
everything else may change without notice. A docs page (README.md, docs/**.md)
that imports a name, or names a function of a module in a code span
(`metaeval.contract.evaluate(x, graders)`), must take it from that promise, so a
user copying the docs never ends up on an internal name.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PUBLIC = ("metaeval", "metaeval.contract", "metaeval.importers.runs", "metaeval.judges",
          "metaeval.judges.reply", "metaeval.mutation.patches", "metaeval.testing")
"""The modules whose ``__all__`` is a promise; ARCHITECTURE.md lists the same."""

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`(metaeval(?:\.\w+)+)[^`]*`")
_IMPORT_LINE = re.compile(
    r"^\s*(?:>>>|\.\.\.)?\s*(from\s+metaeval[\w.]*\s+import\b.*|import\s+metaeval\b.*)$",
    re.MULTILINE)


def module_path(module: str, root: Path = ROOT) -> Path | None:
    """The file of ``module`` in the package under ``root``, or None (nothing imported)."""
    base = root.joinpath(*module.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def declared_all(module: str, root: Path = ROOT) -> tuple[str, ...] | None:
    """The names of ``module``'s ``__all__``, read from its source (None: it has none)."""
    path = module_path(module, root)
    if path is None:
        return None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (isinstance(node, ast.Assign | ast.AnnAssign)
                and any(isinstance(t, ast.Name) and t.id == "__all__"
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
                and node.value is not None):
            value = ast.literal_eval(node.value)
            return tuple(value)
    return None


def _imports_in_code(code: str, page: str, first: int
                     ) -> Iterator[tuple[str, str, str | None]]:
    """(page:line, module, name) for each ``metaeval`` import in a code block whose
    first line is line ``first`` of the page; a name of None is ``import module``. A
    block that is not Python (a console session, a fragment) is read line by line
    for the import statements it shows."""
    try:
        trees = [(0, ast.parse(code))]
    except SyntaxError:
        trees = []
        for m in _IMPORT_LINE.finditer(code):
            statement = m.group(1).split("#")[0].strip()
            if not statement.endswith("("):  # a parenthesised list cut off: unreadable
                trees.append((code.count("\n", 0, m.start()), ast.parse(statement)))
    for offset, tree in trees:
        for node in ast.walk(tree):
            where = f"{page}:{first + offset + getattr(node, 'lineno', 1) - 1}"
            if (isinstance(node, ast.ImportFrom)
                    and (node.module or "").split(".")[0] == "metaeval"):
                for alias in node.names:
                    yield where, node.module or "", alias.name
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "metaeval":
                        yield where, alias.name, None


def references(text: str, where: str, root: Path = ROOT
               ) -> Iterator[tuple[str, str, str | None]]:
    """(where, module, name) for each import a page's code blocks show and each code
    span naming a module's attribute (`metaeval.x.y.name(...)`). A span naming only a
    module (`metaeval.audit.stats`) or a file (`metaeval.sarif`) points at a place,
    not a name to import, and is left alone."""
    for match in _FENCE.finditer(text):
        yield from _imports_in_code(match.group(2), where,
                                    text.count("\n", 0, match.start()) + 2)
    prose = _FENCE.sub("", text)
    for match in _SPAN.finditer(prose):
        parts = match.group(1).split(".")
        for cut in range(len(parts) - 1, 1, -1):  # the longest prefix that is a module
            module = ".".join(parts[:cut])
            if module_path(module, root) is not None:
                if module_path(f"{module}.{parts[cut]}", root) is None:
                    yield where, module, parts[cut]
                break


def outside_the_surface(refs: Iterator[tuple[str, str, str | None]], root: Path = ROOT
                        ) -> list[str]:
    """Each reference that takes a name the public surface does not promise."""
    bad = []
    for where, module, name in refs:
        if module not in PUBLIC:
            bad.append(f"{where}: {module} is not a public module (one of {PUBLIC})")
        elif name is not None and name != "*" and name not in (declared_all(module, root) or ()):
            bad.append(f"{where}: {name!r} is not in the __all__ of {module}")
    return bad


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_every_public_module_declares_all_and_each_name_is_there() -> None:
    missing = []
    for module in PUBLIC:
        names = declared_all(module)
        if not names:
            missing.append(f"{module}: no __all__")
            continue
        loaded = importlib.import_module(module)
        missing += [f"{module}.{n}" for n in names if not hasattr(loaded, n)]
        missing += [f"{module}: {n} twice" for n in set(names) if names.count(n) > 1]
    assert missing == []


def test_the_docs_import_only_the_public_surface() -> None:
    found = [ref for page in pages()
             for ref in references(page.read_text(encoding="utf-8"),
                                   str(page.relative_to(ROOT)))]
    assert len(found) >= 10  # the pages do import: a reader that saw nothing would pass
    assert outside_the_surface(iter(found)) == []


def test_architecture_lists_the_public_modules() -> None:
    architecture = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = architecture.split("## Public surface", 1)[1].split("\n## ", 1)[0]
    assert sorted(set(re.findall(r"`(metaeval(?:\.\w+)*)`", section)) & set(PUBLIC)
                  ) == sorted(PUBLIC)


def test_the_check_refuses_an_internal_name_and_passes_a_public_one() -> None:
    page = ("```python\nfrom metaeval.testing import assert_graders, TEST_RESAMPLES\n"
            "from metaeval.loaders.meta_set import load_meta_set\nimport metaeval.contract\n"
            "```\n\n```console\n$ python -c 'x'\n>>> from metaeval.judges.reply import "
            "render, PRESETS\n```\n\nCall `metaeval.contract.evaluate(x, gs)` or "
            "`metaeval.judges.reply.custom_hash(t)`; see `metaeval.audit.stats` and "
            "`metaeval.sarif`.\n")
    assert outside_the_surface(references(page, "p.md")) == [
        "p.md:2: 'TEST_RESAMPLES' is not in the __all__ of metaeval.testing",
        "p.md:3: metaeval.loaders.meta_set is not a public module (one of "
        f"{PUBLIC})",
        "p.md:9: 'PRESETS' is not in the __all__ of metaeval.judges.reply",
        "p.md: 'custom_hash' is not in the __all__ of metaeval.judges.reply",
    ]
    assert outside_the_surface(references(
        "```python\nfrom metaeval.testing import Bars\n```\n`metaeval.testing.assert_graders`\n",
        "ok.md")) == []


def test_a_module_without_all_is_no_surface(tmp_path: Path) -> None:
    (tmp_path / "metaeval").mkdir()
    (tmp_path / "metaeval" / "__init__.py").write_text('"""x"""\n', encoding="utf-8")
    (tmp_path / "metaeval" / "face.py").write_text('__all__ = ["a", "b"]\na = b = 1\n',
                                                   encoding="utf-8")
    assert declared_all("metaeval", tmp_path) is None
    assert declared_all("metaeval.face", tmp_path) == ("a", "b")
    assert declared_all("metaeval.gone", tmp_path) is None
