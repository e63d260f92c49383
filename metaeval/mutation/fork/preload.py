"""Import, in the warm process, the modules the baseline's tests imported, before
the mutants' children are forked from it.

A module a test imports on first use (an evaluation loop, a syntax highlighter)
is imported again by every forked child that runs such a test: on inspect_ai's
scorers that was most of a survivor's first test. Imported once in the warm
process, every child shares it, as every test after the first shares it in a
plain pytest run. The imports run under the warm process's recorder, as
collection's did, so a function of the mutated packages that such a module
calls at import is planned as collection's are (its module executed again).

Nothing is imported that would start a thread, a Python one or a native one
(a forked child has only the thread that forked it, and a lock another one
held stays locked): a forked probe imports the modules first and says whether
one did. A module that fails to import is left alone; the tests that import it
fail as they did.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Iterable

from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.processes import die_with_parent, forked_ok

PROBE_SECONDS = 30.0
"""How long the probe may import for; longer, and nothing is imported."""


def _wanted(names: Iterable[str]) -> list[str]:
    """The modules of ``names`` not imported here yet, in their order."""
    return [name for name in names if name not in sys.modules and not name.startswith("__")]


def preload(names: Iterable[str], recorder: CallRecorder) -> list[str]:
    """Import ``names`` here under ``recorder`` when a probe finds that they start no
    thread; the names it tried (none when the probe said no)."""
    todo = _wanted(names)
    if not todo or not _threadless(todo):
        return []
    recorder.start()
    try:
        _import_all(todo)
    finally:
        recorder.stop()
    return todo


def _import_all(names: list[str]) -> None:
    for name in names:
        if name in sys.modules:  # imported by one before it
            continue
        try:
            importlib.import_module(name)
        except (Exception, SystemExit):
            pass  # its tests import it again, and fail as they did


def _threadless(names: list[str]) -> bool:
    """Whether importing ``names`` leaves no more threads running than before: asked
    of a forked probe, so that this process imports nothing to find out."""
    parent = os.getpid()

    def probe() -> bool:
        die_with_parent(parent)
        before = _threads()
        _import_all(names)
        return _threads() <= before

    return forked_ok(probe, PROBE_SECONDS)


def _threads() -> int:
    """This process's threads: the kernel's count (native ones too, a numerical
    library's pool say) where there is one, else Python's."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()
