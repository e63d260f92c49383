"""A module's private names stay in it: no module of the package imports another's
``_name`` (issue 46, item 7). A helper two modules need is public in one home."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "metaeval"


def private_imports(source: str, where: str) -> list[str]:
    """Each ``from metaeval... import _name`` (or a relative one) in ``source``, and
    each ``_name`` read off a module of the package it imports (``m._name``)."""
    tree = ast.parse(source)
    found = [f"{where}:{node.lineno} imports {alias.name} from {node.module or '.'}"
             for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom)
             and (node.level or (node.module or "").split(".")[0] == "metaeval")
             for alias in node.names
             if alias.name.startswith("_") and not alias.name.startswith("__")]
    modules = {alias.asname or alias.name.split(".")[0]: alias.name
               for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names if alias.name.split(".")[0] == "metaeval"}
    modules |= {alias.asname or alias.name: f"{node.module}.{alias.name}"
                for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and not node.level
                and (node.module or "").split(".")[0] == "metaeval"
                for alias in node.names
                if (PACKAGE.parent.joinpath(*f"{node.module}.{alias.name}".split("."))
                    .with_suffix(".py").is_file())}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                found.append(f"{where}:{node.lineno} reads {node.attr} of "
                             f"{modules[base.id]}")
    return found


def test_no_module_imports_another_modules_private_name() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "scaffold" in path.relative_to(PACKAGE).parts:
            continue  # templates with placeholders, not package code
        found += private_imports(path.read_text(encoding="utf-8"),
                                 str(path.relative_to(PACKAGE)))
    assert found == []


def test_the_check_finds_a_private_import_and_passes_a_public_one() -> None:
    assert private_imports("from metaeval.loaders.meta_set import _str, data_files\n",
                           "x.py") == ["x.py:1 imports _str from metaeval.loaders.meta_set"]
    assert len(private_imports("from .render import _rows\n", "x.py")) == 1
    assert private_imports("from metaeval.loaders.fields import text_field\n"
                           "from os import _exit\nfrom x import __version__\n", "x.py") == []
    assert private_imports("import metaeval.judges.reply as r\nr._score(1)\n", "x.py") == [
        "x.py:2 reads _score of metaeval.judges.reply"]
    assert private_imports("from metaeval.judges import reply\nreply._one([])\n",
                           "x.py") == ["x.py:2 reads _one of metaeval.judges.reply"]
    assert private_imports("import metaeval.judges.reply as r\nimport os\n"
                           "r.render('', {})\nos._exit\nself._x\n", "x.py") == []
