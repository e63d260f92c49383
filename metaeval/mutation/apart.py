"""Patch-mutant files executed in a process of their own, for ``metaeval mutate``.

A mutants file is the user's Python: ``exit()`` at its top is caught where it
is executed, but ``os._exit`` (or a crash) cannot be, and would end metaeval
with that code and no output. So the runner's process never executes one: a
short-lived Python process (``python -c``, the same interpreter and
``sys.path``) loads them and writes back each declaration as text
(``Described``) on a pipe, one JSON line a file before it executes it, so a
process that ends early still says which file ended it. Costs one
interpreter start a run, only when there are mutants files. ``load_patch_mutants``
is the runner's way in: those declarations as ``Mutant`` values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from metaeval.errors import InputError
from metaeval.mutation.model import Mutant
from metaeval.mutation.patches import Described, load_declared, mutants_files, shown, to_mutant

_CHILD = "from metaeval.mutation.apart import main; main()"


def load_patch_mutants(directory: Path, root: Path) -> list[Mutant]:
    """The declared patch mutants under ``directory`` as ``Mutant`` values, the files
    executed in a process of their own: whatever they do, exiting included, ends
    that process, never this one.

    ``path`` and ``span`` point at the target's definition when its source can
    be found without importing the module; otherwise at the declaration.
    """
    # As pytest does with its rootdir: the project's own packages must resolve.
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    if not mutants_files(directory):
        return []
    return [to_mutant(d, root) for d in describe_apart(directory)]


def describe_apart(directory: Path) -> list[Described]:
    """The declarations under ``directory``, loaded in a process of their own;
    ``InputError`` for a bad file, or one that ends that process."""
    read, write = os.pipe()
    try:
        # The files' prints go to stderr: stdout may be --format json.
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(directory), str(write),
                                 json.dumps(sys.path)], stdin=subprocess.DEVNULL, stdout=2,
                                pass_fds=(write,))
    finally:
        os.close(write)
    try:
        with os.fdopen(read, "rb") as pipe:
            lines = pipe.read().decode("utf-8").splitlines()
    finally:
        status = proc.wait()  # the pipe is at its end: the process closed it, or ended
    said = [json.loads(line) for line in lines]
    if said and "declared" in said[-1]:
        return [Described(**{**d, "file": Path(d["file"])}) for d in said[-1]["declared"]]
    if said and "error" in said[-1]:
        raise InputError(said[-1]["error"])
    where = Path(said[-1]["loading"]) if said else directory
    how = f"exit status {status}" if status >= 0 else f"signal {-status}"
    raise InputError(f"{shown(where)}: ended the process ({how}) while loading; a mutants "
                     "file must only declare mutants")


def main() -> None:
    """The loading process: ``DIRECTORY FD SYS_PATH`` on its command line."""
    directory, fd, path = sys.argv[1:4]
    sys.path[:] = json.loads(path)
    with os.fdopen(int(fd), "w", encoding="utf-8") as out:

        def say(value: object) -> None:
            out.write(json.dumps(value) + "\n")
            out.flush()

        try:
            found = load_declared(Path(directory), lambda p: say({"loading": str(p)}))
        except InputError as e:
            say({"error": str(e)})
            return
        say({"declared": [{**asdict(Described.of(d)), "file": str(d.file)} for d in found]})
