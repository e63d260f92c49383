"""A module's private names stay in it: no module of the package imports another's
``_name`` (issue 46, item 7). A helper two modules need is public in one home."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "metaeval"


def private_imports(source: str, where: str) -> list[str]:
    """Each ``from metaeval... import _name`` (or a relative one) in ``source``."""
    return [f"{where}:{node.lineno} imports {alias.name} from {node.module or '.'}"
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom)
            and (node.level or (node.module or "").split(".")[0] == "metaeval")
            for alias in node.names
            if alias.name.startswith("_") and not alias.name.startswith("__")]


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
