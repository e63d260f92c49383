"""Files named by data: a path another job or person wrote, checked before it is read.

A findings file, a cache or a manifest comes from a branch, another CI job or
another person, and some of its fields name files metaeval then reads or
hashes. Such a name reaches only a regular file of bounded size, and where its
text ends up in an output (a report page), only one inside the repository,
symlinks resolved: ``/proc/self/environ``, ``../../etc/passwd``, a link out of
the tree, ``/dev/zero`` or a fifo are refused, never opened for reading.

``checked_name`` is the check a loader makes on the text alone; ``inside_root``
adds the file system's view; ``read_bounded`` opens without following a final
link and reads a regular file only, at most ``limit`` bytes; ``file_digest``
is the hash a cache compares. This module never writes and never decides what
a refused name means for a command: the caller does (an error for a findings
file, a stale entry for a cache).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path, PurePosixPath

from metaeval.errors import InputError, shown

SOURCE_LIMIT = 16 * 1024 * 1024
"""Bytes of one source, test or config file metaeval reads or hashes because a
data file named it: far past any real module, far short of memory's end."""

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a fifo"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words, for an error message."""
    return next((word for test, word in _KINDS if test(mode)), "not a regular file")


def checked_name(name: str, where: str) -> str:
    """``name`` when it is a relative path that stays inside whatever directory it
    is read from (no ``..`` part, not absolute, not empty, no NUL); else an
    ``InputError`` naming ``where`` and the value. Looks at the text only."""
    pure = PurePosixPath(name)
    if not name or "\0" in name or pure.is_absolute() or ".." in pure.parts:
        raise InputError(f"{where}: got {shown(name)}; expected a path inside the "
                         "repository, relative to its root, with no '..' part")
    return name


def inside_root(root: Path, name: str, where: str) -> Path:
    """The file ``name`` (from a data file) names under ``root``, with every symbolic
    link resolved, when it stays inside ``root``; else an ``InputError`` naming
    ``where``. The file need not exist (``read_bounded`` says when it does not)."""
    checked_name(name, where)
    base = root.resolve()
    try:
        path = (base / name).resolve()
    except (OSError, RuntimeError, ValueError) as e:  # a link loop, a bad name
        raise InputError(f"{where}: got {shown(name)}; cannot resolve it ({e})") from e
    if not path.is_relative_to(base):
        raise InputError(f"{where}: got {shown(name)}; expected a path inside the repository "
                         f"{str(base)!r}, but it leads to {shown(str(path))}")
    return path


def read_bounded(path: Path, limit: int, where: str) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    The file is opened without following a final symbolic link and without
    blocking (a fifo would wait for a writer forever), and checked to be a
    regular file on the open descriptor before a byte is read, so a device, a
    fifo or a link swapped in after a check is never read. A file that is not
    regular, or larger than ``limit``, is an ``InputError`` naming ``where``; a
    missing or unreadable file raises the ``OSError`` (``FileNotFoundError``...).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(
        os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if os.path.islink(path):  # O_NOFOLLOW's ELOOP: the last part is a link
            raise InputError(f"{where}: {str(path)!r} is a symbolic link; refusing to "
                             "read through it") from e
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{where}: {str(path)!r} is {kind_of(info.st_mode)}; expected "
                             "a regular file")
        if info.st_size > limit:
            raise InputError(f"{where}: {str(path)!r} holds {info.st_size} bytes; expected "
                             f"at most {limit}")
        chunks: list[bytes] = []
        left = limit + 1  # one past the limit: a file that grew since fstat is caught
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise InputError(f"{where}: {str(path)!r} holds more than {limit} bytes; expected at "
                         f"most {limit}")
    return data


def file_digest(root: Path, name: str, where: str, limit: int = SOURCE_LIMIT) -> str:
    """The sha256 of the file a cache or manifest names, ``"missing"`` when there is
    none (or it cannot be read): the value a cache compares with what it recorded.

    A relative name must stay under ``root`` by its text (no ``..``); an absolute
    one is allowed, since metaeval itself records the files outside the project
    its tests ran (a package installed from a sibling checkout) by their
    absolute path. Either way only a regular file within ``limit`` is read,
    through its links; anything else is an ``InputError`` naming ``where``, which
    a cache turns into a stale entry and a warning.
    """
    if name and "\0" not in name and PurePosixPath(name).is_absolute():
        path = Path(name)
    else:
        path = root / checked_name(name, where)
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as e:  # a link loop: nothing to hash
        raise InputError(f"{where}: got {shown(name)}; cannot resolve it ({e})") from e
    try:
        return hashlib.sha256(read_bounded(real, limit, where)).hexdigest()
    except OSError:
        return "missing"
