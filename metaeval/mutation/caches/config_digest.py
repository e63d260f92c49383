"""What of a project's configuration a cached ``metaeval mutate`` result depends on.

A result depends on how pytest runs and on how the run is set up: pytest's own
configuration (``[tool.pytest.ini_options]``, or a ``pytest.ini``, ``tox.ini``
or ``setup.cfg``) and ``[tool.metaeval.mutate]``. It does not depend on the rest
of ``pyproject.toml``: a ``[tool.metaeval.gate]`` bar, a judge, a changelog
URL. So the run's dependency is those tables (``RUN_CONFIG``), not the file.

A test may read ``pyproject.toml`` itself (``metaeval.testing.assert_graders``
reads the meta-eval bars); then the file is a data dependency of that test
(``child.reads``), hashed as parsed TOML without ``[tool.metaeval.gate]``,
which only ``metaeval gate`` reads: a gate bar, a comment or a blank line
changes no test's outcome. A file that does not parse is hashed whole.
Opens only regular files inside the project (``data_paths``), never writes.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path, PurePosixPath

from metaeval.data_paths import SOURCE_LIMIT, checked_name, file_digest, read_bounded

RUN_CONFIG = "pyproject.toml[tool.pytest, tool.metaeval.mutate]"
"""The name of the run's configuration among a cache entry's dependencies."""
PYTEST_FILES = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg")
"""pytest's other configuration files, hashed whole ("missing" when absent)."""
PYPROJECT = "pyproject.toml"


def _parsed(root: Path, name: str, where: str) -> tuple[dict[str, object] | None, bytes]:
    """The TOML of ``name`` (None when it does not parse) and its bytes; raises
    ``FileNotFoundError`` for no file, ``InputError`` for one that is no regular file."""
    path = (root / checked_name(name, where)).resolve()
    data = read_bounded(path, SOURCE_LIMIT, where)
    try:
        return tomllib.loads(data.decode("utf-8")), data
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None, data


def _table(document: dict[str, object], *keys: str) -> object:
    for key in keys:
        if not isinstance(document, dict):
            return None
        document = document.get(key)  # type: ignore[assignment]
    return document


def _sha(value: object) -> str:
    # Dates and times (TOML has them) as their text: a digest, not a round trip.
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def config_digest(root: Path, name: str, where: str) -> str:
    """The digest of a dependency ``name``: the run's tables for ``RUN_CONFIG``, a
    ``pyproject.toml`` without its gate table, any other file whole
    (``data_paths.file_digest``); ``"missing"`` when there is no such file, an
    ``InputError`` for one that cannot be read as data."""
    pyproject = name == RUN_CONFIG or PurePosixPath(name).name == PYPROJECT
    if not pyproject or PurePosixPath(name).is_absolute():
        return file_digest(root, name, where)
    try:
        document, data = _parsed(root, PYPROJECT if name == RUN_CONFIG else name, where)
    except OSError:
        return "missing"
    if document is None:
        return hashlib.sha256(data).hexdigest()
    if name == RUN_CONFIG:
        return _sha({"pytest": _table(document, "tool", "pytest"),
                     "mutate": _table(document, "tool", "metaeval", "mutate")})
    metaeval = _table(document, "tool", "metaeval")
    if isinstance(metaeval, dict):
        metaeval.pop("gate", None)
    return _sha(document)


def run_config() -> tuple[str, ...]:
    """The names of the configuration every result depends on."""
    return (RUN_CONFIG, *PYTEST_FILES)

