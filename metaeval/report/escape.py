"""Text from data escaped for the medium it reaches: one line of a terminal or CI
log, a Markdown code span or Markdown prose, an HTML page.

Every renderer that puts a name, path, id, reason or diff from another person's
file (or the user's code) into its output goes through here, so one place says
what each medium lets through. This module must never decide what is data and
what is ours (its callers do), never drop a character silently (what it cannot
show as is it shows as an escape: ``\\n``, ``\\x1b``) and never read or write
anything.

The CI-log rules are GitHub Actions': a line whose first non-blank characters are
``::`` is run as a workflow command (``::error::``, ``::add-mask::``), and the
runner's older syntax ``##[command]`` is found anywhere in a line.
"""

from __future__ import annotations

import re
from html import escape as _html_escape

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Control characters, Unicode line and paragraph separators, and the bidirectional
overrides that make a terminal show text in another order than it is."""
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_COMMAND = re.compile(r"^([^\S\n]*):(?=:)", re.MULTILINE)
_LEGACY = re.compile(r"##(?=(?:vso)?\[)", re.IGNORECASE)


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


# --- terminal and CI log ------------------------------------------------------------


def one_line(text: str) -> str:
    """``text`` for inside one printed line: every control character and line
    break replaced by its escape, so it cannot end the line, start another, move
    the cursor or colour the rest of the screen."""
    return _CONTROL.sub(_escape_char, text)


def lines(text: str) -> str:
    """A block that is several lines by design (a diff): each line kept, every other
    control character in it escaped (``\\r`` too, which a terminal shows as a line
    start), and no line able to be read as a workflow command."""
    return defuse("\n".join(one_line(line) for line in text.split("\n")))


def defuse(text: str) -> str:
    """Printed text with no line a CI runner reads as a command: a line starting
    (after blanks) with ``::`` gets its first colon as ``\\x3a``, and ``##[`` (or
    ``##vso[``) anywhere gets its second ``#`` as ``\\x23``. Every other control
    character but the line break is escaped too. Applied by the command line to
    everything it prints, after the renderers escaped each field."""
    text = "\n".join(one_line(line) for line in text.split("\n"))
    return _LEGACY.sub("#\\\\x23", _COMMAND.sub(lambda m: m.group(1) + "\\x3a", text))


# --- Markdown ------------------------------------------------------------------------

CLIP = 90
"""A code span holds at most this many characters of one line."""
_PROSE = re.compile(r"([\\`*_\[\]<>|#!~&$])")
_LINKISH = re.compile(r"://|www\.|@|\b(?:mailto|xmpp):", re.IGNORECASE)
"""A word GitHub's Markdown would make a link (a URL, ``www.``, an e-mail address)
or a mention (``@team``)."""


def md_code(text: str, *, clip: int = CLIP) -> str:
    """``text`` as one inline code span: one line (control characters as escapes,
    runs of blanks as one), clipped, fenced with a backtick run longer than any it
    holds and padded when it starts or ends with a backtick."""
    line = " ".join(one_line(text.replace("\t", " ")).split())
    if len(line) > clip:
        line = line[: clip - 1] + "…"
    if not line:
        return "(empty)"
    fence = "`" * (max((len(r) for r in re.findall(r"`+", line)), default=0) + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{fence}{pad}{line}{pad}{fence}"


def md_plain(text: str) -> str:
    """User text in Markdown prose: one line, Markdown's active characters escaped,
    and each word that would become a link or a mention put in a code span."""
    words = one_line(text).split()
    return " ".join(md_code(w, clip=len(w) + 1) if _LINKISH.search(w) else _PROSE.sub(r"\\\1", w)
                    for w in words)


# --- HTML ----------------------------------------------------------------------------


def html(text: str) -> str:
    """Text for an HTML element or a quoted attribute: ``& < > " '`` as entities."""
    return _html_escape(text, quote=True)
