"""ARCHITECTURE.md names every module of the package, so a new module cannot land
without a row saying what it does."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def named_in(architecture: str, module: Path) -> bool:
    """A row names the module by its path, by its file name beside its folder's path,
    or in a folder's list: `metaeval/judges/` (`base`, `parse`)."""
    path, folder = module.as_posix(), module.parent.as_posix()
    for row in (line for line in architecture.splitlines() if line.startswith("|")):
        if path in row:
            return True
        if folder + "/" in row and (f"`{module.name}`" in row
                                    or re.search(rf"`{re.escape(module.stem)}`", row)):
            return True
    return False


def test_every_module_has_a_row() -> None:
    architecture = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = [p.relative_to(ROOT) for p in sorted((ROOT / "metaeval").rglob("*.py"))
               if p.name != "__init__.py" and "scaffold" not in p.parts]
    assert len(modules) > 50
    assert [m.as_posix() for m in modules if not named_in(architecture, m)] == []


def test_a_module_no_row_names_is_found() -> None:
    row = "| run | `metaeval/judges/` (`base`, `parse`) | the judges |\n"
    assert named_in(row, Path("metaeval/judges/parse.py"))
    assert not named_in(row, Path("metaeval/judges/reply.py"))
    assert not named_in(row, Path("metaeval/graders/parse.py"))
