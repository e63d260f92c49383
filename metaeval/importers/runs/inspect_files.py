"""inspect_ai log files, read sample by sample within bounds, before inspect_ai sees a sample.

inspect_ai's own file reader holds a whole ``.json`` log (one bad sample, one
byte that is not UTF-8 or one sample nested 100,000 deep loses every run) and
reads ``.eval`` zip members with no bound on what they decompress to (a 291 KB
zip reached 885 MB). Here a log is cut into its samples first, each read on its
own with the bounds of any data file (``untrusted_json``): a bad sample is one
error and the others are read. This module never imports inspect_ai; the
importer hands each sample's JSON to inspect_ai's sample model.

``.eval``: a zip of ``header.json`` (or ``_journal/start.json`` while the eval
runs) and ``samples/ID_epoch_N.json``, one member a sample. Two members of one
name are an error for the file (which would be read is not for us to guess);
every member, and all of them together, decompress to at most ``DATA_LIMIT``
bytes, checked on the sizes the zip declares, which Python's reader holds it to
(more bytes than declared fail its CRC check).

``.json``: one document whose ``samples`` array is cut into its elements by a
scan of the bytes (strings and brackets), each element decoded and parsed on
its own; the rest of the document is the header.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import clipped
from metaeval.untrusted_json import DATA_LIMIT, JsonInputError, parse_json, read_regular

__all__ = ["LogFileError", "RawSample", "log_samples"]

_HEADERS = ("header.json", "_journal/start.json")
_SAMPLE = re.compile(r"samples/(?P<id>.+)_epoch_(?P<epoch>[0-9]+)\.json")
# One token of a JSON text as bytes: a string (to its closing quote, or the end
# of an unterminated one) or a bracket, comma or colon.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{},:]', re.DOTALL)


class LogFileError(Exception):
    """The file as a whole cannot be read as a log; the message says why."""


@dataclass(frozen=True, slots=True)
class RawSample:
    """One sample's JSON, or why it cannot be read (``problem``); ``index``: where
    it stands in the file (the ``samples`` array of a ``.json`` log, the read order
    of a ``.eval`` one), as ``samples[N]`` in an error."""

    index: int
    value: JsonObject | None
    problem: str = ""


def _json(data: bytes, where: str) -> JsonValue:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise JsonInputError("", f"{where}: not UTF-8: byte {data[e.start]:#04x} at "
                             f"offset {e.start}; expected UTF-8 text") from e
    return parse_json(text)


def _sample(index: int, data: bytes, where: str) -> RawSample:
    try:
        value = _json(data, where)
    except JsonInputError as e:
        return RawSample(index, None, str(e))
    if not isinstance(value, dict):
        return RawSample(index, None, f"got {clipped(repr(value))}; expected a sample object")
    return RawSample(index, value)


def log_samples(path: Path) -> tuple[JsonObject, Iterator[RawSample]]:
    """The log's header (``eval``, ...) and its samples, one at a time, in the order
    of the header's sample ids and epochs; ``LogFileError`` when the file is no log."""
    if zipfile.is_zipfile(path):
        return _eval_log(path)
    return _json_log(path)


# --- .eval ---------------------------------------------------------------------------


def _eval_log(path: Path) -> tuple[JsonObject, Iterator[RawSample]]:
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as e:
        raise LogFileError(f"not a zip inspect_ai wrote: {e}") from e
    try:
        members = archive.infolist()
        seen: set[str] = set()
        for info in members:
            if info.filename in seen:
                raise LogFileError(f"two members named {info.filename!r}; expected each "
                                   "name once (which one is the log's is not ours to guess)")
            seen.add(info.filename)
            if info.file_size > DATA_LIMIT:
                raise LogFileError(f"member {info.filename!r} decompresses to "
                                   f"{info.file_size} bytes; expected at most {DATA_LIMIT}")
        total = sum(info.file_size for info in members)
        if total > DATA_LIMIT:
            raise LogFileError(f"its members decompress to {total} bytes; expected at most "
                               f"{DATA_LIMIT}")
        header = next((h for h in _HEADERS if h in seen), None)
        if header is None:
            raise LogFileError(f"no {' or '.join(_HEADERS)}; expected an inspect_ai .eval log")
        try:
            value = _json(archive.read(header), header)
        except JsonInputError as e:
            raise LogFileError(f"{header}: {e}") from e
        except (OSError, zipfile.BadZipFile, RuntimeError, ValueError) as e:
            raise LogFileError(f"{header}: cannot read it: {e}") from e
        if not isinstance(value, dict):
            raise LogFileError(f"{header}: got {clipped(repr(value))}; expected an object")
    except BaseException:
        archive.close()
        raise
    names = [i.filename for i in members if _SAMPLE.fullmatch(i.filename)]
    return value, _eval_samples(archive, sorted(names, key=_order(value)))


def _rank(header: JsonObject) -> dict[str, int]:
    """Each sample id's place in the header's list (inspect_ai's order: by sample id,
    then epoch)."""
    spec = header.get("eval")
    dataset = spec.get("dataset") if isinstance(spec, dict) else None
    ids = dataset.get("sample_ids") if isinstance(dataset, dict) else None
    return {str(i): k for k, i in enumerate(ids)} if isinstance(ids, list) else {}


def _order(header: JsonObject) -> Callable[[str], tuple[int, int, str]]:
    """A sort key for sample member names: the header's sample ids, then epochs."""
    rank = _rank(header)

    def key(name: str) -> tuple[int, int, str]:
        match = _SAMPLE.fullmatch(name)
        assert match is not None
        return (rank.get(match["id"], len(rank)), int(match["epoch"][:18]), name)

    return key


def _eval_samples(archive: zipfile.ZipFile, names: list[str]) -> Iterator[RawSample]:
    with archive:
        for index, name in enumerate(names):
            try:
                data = archive.read(name)  # held to the declared size, checked above
            except (OSError, zipfile.BadZipFile, RuntimeError, ValueError, EOFError) as e:
                yield RawSample(index, None, f"{name}: cannot read it: {e}")
                continue
            yield _sample(index, data, name)


# --- .json ---------------------------------------------------------------------------


def _json_log(path: Path) -> tuple[JsonObject, Iterator[RawSample]]:
    try:
        data = read_regular(path)
    except OSError as e:
        raise LogFileError(f"cannot read: {e}") from e
    except JsonInputError as e:
        raise LogFileError(str(e)) from e
    span = _samples_span(data)
    elements: list[tuple[int, int]] = []
    if span is None:
        rest = data
    else:
        start, end, elements = span
        rest = data[:start] + b"[]" + data[end:]
    try:
        header = _json(rest, "the log without its samples")
    except JsonInputError as e:
        raise LogFileError(f"not an inspect_ai log: {e}") from e
    if not isinstance(header, dict):
        raise LogFileError(f"got {clipped(repr(header))}; expected an inspect_ai log object")
    if span is None and isinstance(header.get("samples"), list):
        # Read whole after all (a layout the scan did not find): one sample at a time
        # from here on, the same checks.
        whole = header.pop("samples")
        assert isinstance(whole, list)
        return header, (RawSample(k, v) if isinstance(v, dict) else
                        RawSample(k, None, f"got {clipped(repr(v))}; expected a sample object")
                        for k, v in enumerate(whole))
    return header, _json_samples(data, elements, _rank(header))


def _json_samples(data: bytes, elements: list[tuple[int, int]], rank: dict[str, int]
                  ) -> Iterator[RawSample]:
    """The samples in inspect_ai's order (the header's ids, then epochs; a sample that
    cannot be read where it stands): each parsed once to find its place, let go,
    and parsed again when its turn comes, so one sample is held at a time."""
    def key(k: int) -> tuple[int, int, int]:
        raw = _sample(k, data[elements[k][0]:elements[k][1]], f"samples[{k}]").value
        sid, epoch = (raw.get("id"), raw.get("epoch")) if raw is not None else (None, None)
        place = rank.get(str(sid), len(rank)) if isinstance(sid, str | int) else len(rank)
        return (place, epoch if isinstance(epoch, int) else 0, k)

    for k in sorted(range(len(elements)), key=key):
        a, b = elements[k]
        yield _sample(k, data[a:b], f"samples[{k}]")


def _samples_span(data: bytes) -> tuple[int, int, list[tuple[int, int]]] | None:
    """Where the top-level ``samples`` array stands (its ``[`` to after its ``]``) and
    where each element stands; None when there is none or the text is not balanced
    there (then the whole text is the header, and its parse says what is wrong)."""
    key = b""
    depth, previous = 0, b""
    tokens = _TOKEN.finditer(data)
    for match in tokens:
        token = match.group()
        if token in (b"[", b"{"):
            if depth == 1 and token == b"[" and previous == b":" and key == b'"samples"':
                return _elements(data, tokens, match.start())
            depth += 1
        elif token in (b"]", b"}"):
            depth -= 1
        elif token == b":" and depth == 1:
            key = previous  # the key this value belongs to
        previous = token
    return None


def _elements(data: bytes, tokens: Iterator[re.Match[bytes]], start: int
              ) -> tuple[int, int, list[tuple[int, int]]] | None:
    elements: list[tuple[int, int]] = []
    depth, begin = 0, start + 1
    for match in tokens:
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
        elif token in (b"]", b"}"):
            if depth == 0:
                if data[begin:match.start()].strip():
                    elements.append((begin, match.start()))
                return start, match.end(), elements
            depth -= 1
        elif token == b"," and depth == 0:
            elements.append((begin, match.start()))
            begin = match.end()
    return None
