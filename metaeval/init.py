"""``metaeval init``: scaffold metaeval into a user's repository.

It adds an example patch mutant (``mutants/``), an example labelled meta-set
(``meta_sets/``), the test that holds the graders to it, ``[tool.metaeval]`` in
``pyproject.toml`` and a CI workflow. It is idempotent, and it never overwrites
a file without ``force``; the user's ``pyproject.toml`` is only ever appended to,
and never when it already has a ``[tool.metaeval]`` table.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from enum import Enum
from importlib import resources
from pathlib import Path

from metaeval.errors import InputError
from metaeval.files import write_atomic

# (where in the user's repository, which scaffold file)
FILES = (
    ("mutants/example.py", "mutants/example.py"),
    ("meta_sets/example.jsonl", "meta_sets/example.jsonl"),
    ("tests/test_metaeval_graders.py", "tests/test_metaeval_graders.py"),
    (".github/workflows/metaeval.yml", "workflows/metaeval.yml"),
)
PYPROJECT_SECTION = "pyproject_section.toml"


class Action(Enum):
    """What init did with one file."""

    CREATED = "created"
    """The file did not exist."""
    OVERWRITTEN = "overwritten"
    """The file existed and ``--force`` replaced it."""
    KEPT = "kept"
    """The file exists (or already has ``[tool.metaeval]``); left as it is."""
    APPENDED = "appended"
    """``[tool.metaeval]`` was added to the end of an existing ``pyproject.toml``."""


@dataclass(frozen=True, slots=True)
class Step:
    path: str
    action: Action


def _template(name: str) -> str:
    return resources.files("metaeval").joinpath("scaffold", name).read_text(encoding="utf-8")


def _pyproject(root: Path) -> Step:
    path = root / "pyproject.toml"
    section = _template(PYPROJECT_SECTION)
    if not path.exists():
        write_atomic(path, section.lstrip("\n"))
        return Step("pyproject.toml", Action.CREATED)
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML ({e}); fix it before metaeval init "
                         "adds [tool.metaeval]") from e
    if "metaeval" in data.get("tool", {}):
        return Step("pyproject.toml", Action.KEPT)
    write_atomic(path, text + ("" if text.endswith("\n") else "\n") + section)
    return Step("pyproject.toml", Action.APPENDED)


def scaffold(root: Path, *, force: bool = False) -> list[Step]:
    """Add the scaffold under ``root``; one Step per file, in a stable order."""
    if not root.is_dir():
        raise InputError(f"{root}: no such directory; expected the repository to scaffold")
    steps = []
    for target, name in FILES:
        path = root / target
        existed = path.exists()
        if existed and not force:
            steps.append(Step(target, Action.KEPT))
            continue
        write_atomic(path, _template(name))
        steps.append(Step(target, Action.OVERWRITTEN if existed else Action.CREATED))
    steps.append(_pyproject(root))
    steps.append(_gitignore(root))
    return steps


def _gitignore(root: Path) -> Step:
    """metaeval's reports and caches live in .metaeval/: keep them out of commits."""
    path = root / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if any(line.strip() in (".metaeval", ".metaeval/") for line in text.splitlines()):
        return Step(".gitignore", Action.KEPT)
    write_atomic(path, text + ("" if not text or text.endswith("\n") else "\n") + ".metaeval/\n")
    return Step(".gitignore", Action.APPENDED if text else Action.CREATED)
