"""Every file metaeval writes for the user goes through ``write_atomic``.

A report, a findings file, a SARIF file, a calibration file, a cache: each is
written to a temporary file in the same directory, flushed to disk, then
renamed over the target, so a crash, a full disk or a kill mid-write leaves
either the old file or the new one, never half of one. A write that fails is
an ``OutputError`` naming the path and the operating system's reason; the
temporary file is removed. A temporary file a killed writer left (``kill -9``
cannot be cleaned up after) carries its writer's process id in its name, and
the next write of the same file removes it once that process is gone. This
module never decides what a failed write means for a command: the caller does
(a cache that cannot be written is a warning, a report that cannot be written
is exit code 2).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path

from metaeval.data_paths import kind_of
from metaeval.errors import OutputError

TEMP_SUFFIX = ".tmp"


def write_atomic(path: Path, text: str | Iterable[str], *, follow_links: bool,
                 links_in_repository: bool = False) -> None:
    """Replace ``path`` by ``text`` (UTF-8; or its parts, written as they come) in one
    step, creating its directory.

    An existing file keeps its mode. ``follow_links``: a path the user named (a
    ``--report``, an ``-o``) may be a symbolic link outside a repository, and the
    file it points at is replaced; inside a git work tree such a link is refused
    as metaeval's own are (a pull request that commits
    ``metaeval-reports/meta-eval.html`` as a link must not make a workflow
    replace a file outside the checkout), unless ``links_in_repository`` (the
    user's own linked pyproject.toml, which ``init`` edits, stays linked). A path
    metaeval chose (a cache, a report in ``.metaeval/``, the calibration or
    findings file, a shard manifest) is refused when it or its directory is a
    link (``follow_links=False``): a branch that links
    ``.metaeval/mutation-report.json`` to a source file must not get that file
    overwritten. An existing target that is not a regular file (a device, a fifo,
    a socket, a directory) is refused either way. Raises ``OutputError`` when the
    directory or the file cannot be written, naming why.
    """
    if follow_links and not links_in_repository:
        _refuse_link_in_repository(path)
    if path.is_symlink() or (not follow_links and path.parent.is_symlink()):
        if not follow_links:
            link = path if path.is_symlink() else path.parent
            raise OutputError(path, OSError(errno.ELOOP, f"{link} is a symbolic link; "
                                            "metaeval writes no file of its own through one"))
        path = path.resolve()  # a user's linked pyproject.toml stays linked
    try:
        info = path.stat()
    except OSError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise OutputError(path, OSError(None, f"it is {kind_of(info.st_mode)}; expected a "
                                        "regular file or none, refusing to replace it"))
    mode = info.st_mode & 0o7777 if info is not None else None
    try:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError as e:  # mkdir's word for "a parent is a file"
            raise NotADirectoryError(errno.ENOTDIR, f"{e.filename} is not a directory") from e
        _remove_stale(path)
        # Not tempfile.mkstemp: its 0600 mode would stick to a report or findings
        # file; this one gets the mode any new file gets (0666 less the umask).
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}{TEMP_SUFFIX}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as e:
        raise OutputError(path, e) from e
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            if isinstance(text, str):
                f.write(text)
            else:
                f.writelines(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise OutputError(path, e) from e
        raise
    _sync_directory(path.parent)


def check_output(path: Path) -> None:
    """Refuse, before anything is written, an output named on the command line that
    ``write_atomic(path, ..., follow_links=True)`` would refuse: a link inside a
    repository, or an existing folder, fifo, device or socket (links followed). A
    command with several outputs checks them all first, so a bad second one never
    leaves the first written. Raises ``OutputError``."""
    _refuse_link_in_repository(path)
    try:
        info = path.stat()
    except OSError:
        return  # not there yet (or unreadable): the write says why, if it fails
    if not stat.S_ISREG(info.st_mode):
        raise OutputError(path, OSError(None, f"it is {kind_of(info.st_mode)}; expected a "
                                        "regular file or none, refusing to replace it"))


def _refuse_link_in_repository(path: Path) -> None:
    link = _link_in_repository(path)
    if link is not None:
        raise OutputError(path, OSError(errno.ELOOP, (
            f"{link} is a symbolic link inside the repository {str(_repository(path))!r}; "
            "metaeval writes no output through one (name the file it points at)")))


def _repository(path: Path) -> Path | None:
    """The git work tree ``path`` lies in, by its text (links not followed): the
    nearest folder above it with a ``.git`` (a folder, or a worktree's file)."""
    for folder in path.absolute().parents:
        if (folder / ".git").exists() or (folder / ".git").is_symlink():
            return folder
    return None


def _link_in_repository(path: Path) -> Path | None:
    """The first symbolic link on the way from ``path``'s repository down to ``path``
    (``path`` itself included, dangling or not); None outside a repository."""
    root = _repository(path)
    if root is None:
        return None
    here = root
    for part in path.absolute().relative_to(root).parts:
        here = here / part
        if here.is_symlink():
            return here
    return None


def _remove_stale(path: Path) -> None:
    """Remove the temporary files of ``path`` whose writer is gone (killed mid-write:
    no ``finally`` ran). A temporary file of a live process is left alone, and so is
    every name this module did not make."""
    prefix = f".{path.name}."
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
            continue
        pid, dash, token = name[len(prefix):-len(TEMP_SUFFIX)].partition("-")
        if not (dash and pid.isascii() and pid.isdigit() and len(token) == 8) or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(path.parent / name)


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (ours, or another user's we may not signal)."""
    if pid <= 0 or pid > 1 << 22:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, someone else's
        return True
    return True


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable; best effort (not every platform opens a directory)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_ndjson(path: Path, records: Iterable[object]) -> None:
    """JSON records one a line (JSON Lines), written atomically; ``OutputError`` when
    they cannot be. The user named ``path``: a link there is followed."""
    write_atomic(path, "".join(json.dumps(record) + "\n" for record in records),
                 follow_links=True)
