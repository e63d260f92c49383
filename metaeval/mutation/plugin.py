"""The pytest plugin that puts mutants in place in the user's test session.

Registered through the ``pytest11`` entry point and inert unless asked: without
``--metaeval-mutant ID`` or ``--metaeval-warm SPEC`` it adds two options and
imports nothing else, so a project's every pytest run stays as it was. With
``--metaeval-mutant`` it loads the subprocess child (``subprocess.child``); with
``--metaeval-warm``, the warm process that forks a child per mutant
(``fork.warm_session``).
Production code has no mutant mode; this plugin is the only thing that changes
behaviour, and only in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from metaeval.mutation.fork.warm_session import WarmSession
    from metaeval.mutation.subprocess.child import MutantSession

# Annotations are not evaluated (``annotations`` above), so neither module is imported.
_SESSION: pytest.StashKey[MutantSession] = pytest.StashKey()
_WARM: pytest.StashKey[WarmSession] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("metaeval", "metaeval mutation testing")
    group.addoption("--metaeval-mutant", metavar="ID", default=None,
                    help="apply the mutant ID described by $METAEVAL_MUTANT_SPEC "
                         "(used by `metaeval mutate`; inert without it)")
    group.addoption("--metaeval-warm", metavar="SPEC", default=None,
                    help="collect once, then fork one child per mutant of the warm-run "
                         "SPEC file (used by `metaeval mutate --isolation fork`)")


def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> None:
    warm = early_config.known_args_namespace.metaeval_warm
    if warm is not None:
        _start_warm(early_config, Path(warm))
        return
    mutant_id = early_config.known_args_namespace.metaeval_mutant
    if mutant_id is not None:
        from metaeval.mutation.subprocess import child as mutant_session
        early_config.stash[_SESSION] = mutant_session.start(mutant_id)


def _start_warm(early_config: pytest.Config, spec_path: Path) -> None:
    """Trace from before the first conftest: code that runs at import time must be
    known, since swapping its code afterwards would not redo what the import did."""
    from metaeval.mutation.child.monitor import recorder_for
    from metaeval.mutation.fork.protocol import WarmSpec
    from metaeval.mutation.fork.registries import Ledger, project_modules
    from metaeval.mutation.fork.warm_session import WarmSession
    from metaeval.mutation.processes import die_with_parent

    spec = WarmSpec.read(spec_path)
    die_with_parent(spec.parent_pid)
    # What the project's modules register at import, so that a child can execute
    # one again into registries as a fresh import finds them.
    ledger = Ledger(project_modules(Path(spec.root), spec.packages))
    ledger.start()
    recorder = recorder_for(spec.packages)
    recorder.start()
    early_config.stash[_WARM] = WarmSession(spec, recorder, ledger)


def pytest_configure(config: pytest.Config) -> None:
    warm = config.stash.get(_WARM, None)
    if warm is not None:
        config.pluginmanager.register(warm, "metaeval-warm-session")
        return
    session = config.stash.get(_SESSION, None)
    if session is not None:
        from metaeval.mutation.subprocess import child as mutant_session
        mutant_session.configure(session, config)
