"""A team's own judge: its prompt template and the rule its replies are read by.

``[tool.metaeval.judges.NAME]`` may name a ``prompt_template`` (a file with
placeholders) and a ``reply`` rule: a preset (``json``, today's strict rule and
the default; ``bare``; ``mt-bench``; ``arena``, pairwise only) or a regular
expression with a named group ``score`` (pointwise) or ``winner`` (pairwise, read
through ``winner_map``).
Both are part of the judge's identity: change a character of either and it is
another judge. A reply that does not match its rule is unscored with its text
kept, never guessed: "on a scale of 1 to 10 I'd give it an 8" is unscored under
every preset. A Python judge may read its own replies with ``reply_rule(...)``.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import regex

from metaeval.errors import InputError
from metaeval.judges.base import Choice, JudgeReply, Mode, Scale, unscored_reply
from metaeval.judges.parse import parse_pairwise, parse_pointwise

# What a Python judge of a user's own may call (docs/judge-own.md); the rest serves the config.
__all__ = ["ReplyRule", "render", "reply_rule"]


class Preset(Enum):
    """How a reply is read: one of the named rules, or the team's own pattern."""

    JSON = "json"
    """The strict rule and the default: a JSON object with a verdict or a score."""
    BARE = "bare"
    """The reply is a bare number (pointwise) or A, B or tie (pairwise)."""
    MT_BENCH = "mt-bench"
    """MT-Bench's ``[[N]]`` rating or ``[[A]]``/``[[B]]``/``[[C]]`` verdict."""
    ARENA = "arena"
    """Arena-Hard's ``[[A>>B]]``-style verdicts, pairwise only."""
    PATTERN = "pattern"
    """The rule's ``pattern``: a regular expression with a ``score`` or ``winner`` group."""


PRESETS = tuple(p.value for p in Preset if p is not Preset.PATTERN)
"""The named rules a config or ``--reply`` may give by name."""
PATTERN_SECONDS = 0.25
"""CPU time a reply pattern may take on one reply. The pattern is the project's,
the reply is not: as for ``answer_contains``, the ``regex`` engine bounds the
time, so a reply that makes a pattern backtrack without end is unscored, not a
hung audit."""
# ASCII digits only, as in the strict parser: a captured "\u0664" is no score.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)")
_BARE_CHOICES = {"a": Choice.A, "b": Choice.B, "tie": Choice.TIE}
_MT_VERDICT = re.compile(r"\[\[(A|B|C)\]\]")
_MT_SCORE = re.compile(r"\[\[([+-]?[0-9]+(?:\.[0-9]+)?)\]\]")
_MT_CHOICES = {"A": Choice.A, "B": Choice.B, "C": Choice.TIE}
# Arena-Hard's verdict labels, read as its own judging code reads them: the text
# upper-cased, every [[...]] of A, B, <, >, = found; two different labels are no verdict.
_ARENA_VERDICT = re.compile(r"\[\[([AB<>=]+)\]\]")
ARENA_LABELS: dict[str, tuple[Choice, str | None]] = {
    "A>>B": (Choice.A, "strong"), "A>B": (Choice.A, "slight"), "A=B": (Choice.TIE, None),
    "B>A": (Choice.B, "slight"), "B>>A": (Choice.B, "strong")}
"""The five verdicts of the arena form: the response shown first (A) or second (B),
and how strongly; any other label (``A<B``, ``A>>>B``) is unscored, never guessed."""
LABELS = {"a": Choice.A, "b": Choice.B, "tie": Choice.TIE}
"""What a ``winner_map`` maps to: the response shown first (``a``), second (``b``),
or neither (``tie``)."""
DEFAULT_WINNER_MAP: tuple[tuple[str, str], ...] = (("a", "a"), ("b", "b"), ("tie", "tie"))


def _score(number: float, scale: Scale, raw: str) -> JudgeReply:
    if not math.isfinite(number) or not scale.low <= number <= scale.high:
        return unscored_reply(f"score {number:g} outside {scale.low}..{scale.high}", raw)
    return JudgeReply(float(number), raw)


def _one(found: list[str], what: str, raw: str) -> str | JudgeReply:
    """The one value the reply gives, or an unscored reply: none, or two that differ."""
    distinct = sorted(set(found))
    if not distinct:
        return unscored_reply(f"reply has no {what}", raw)
    if len(distinct) > 1:
        return unscored_reply(f"reply gives more than one {what}: {', '.join(distinct)}", raw)
    return distinct[0]


@dataclass(frozen=True, slots=True)
class ReplyRule:
    """How a reply is read: ``preset`` (one of the named rules) or ``pattern`` (a regular
    expression with a ``score`` or ``winner`` group, under ``Preset.PATTERN``;
    ``winner_map`` maps what ``winner`` captures to ``a``/``b``/``tie``)."""

    preset: Preset = Preset.JSON
    pattern: str = ""
    winner_map: tuple[tuple[str, str], ...] = DEFAULT_WINNER_MAP

    @property
    def modes(self) -> frozenset[Mode]:
        """What replies this rule can read."""
        if self.preset is Preset.ARENA:
            return frozenset({Mode.PAIRWISE})
        if not self.pattern:
            return frozenset(Mode)
        groups = regex.compile(self.pattern).groupindex
        return frozenset(({Mode.POINTWISE} if "score" in groups else set())
                         | ({Mode.PAIRWISE} if "winner" in groups else set()))

    def describe(self) -> str:
        """The rule, whole: part of the judge's identity."""
        if not self.pattern:
            return self.preset.value
        pairs = ", ".join(f"{k}={v}" for k, v in self.winner_map)
        return f"pattern {self.pattern!r}; winner_map {{{pairs}}}"

    def pointwise(self, raw: str, scale: Scale) -> JudgeReply:
        """A score (or pass/fail under ``json``) read from ``raw``; else unscored."""
        if self.pattern:
            match = self._matches(raw, "score")
            if isinstance(match, JudgeReply):
                return match
            if not _NUMBER.fullmatch(match.strip()):
                return unscored_reply(f"'score' captured {match!r}; expected a number", raw)
            return _score(float(match), scale, raw)
        if self.preset is Preset.BARE:
            text = raw.strip()
            if not _NUMBER.fullmatch(text):
                return unscored_reply("reply is not a bare number", raw)
            return _score(float(text), scale, raw)
        if self.preset is Preset.MT_BENCH:
            one = _one(_MT_SCORE.findall(raw), "[[N]] rating", raw)
            return one if isinstance(one, JudgeReply) else _score(float(one), scale, raw)
        if self.preset is Preset.ARENA:
            return unscored_reply("the arena reply rule reads pairwise verdicts only", raw)
        return parse_pointwise(raw, scale)

    def pairwise(self, raw: str) -> JudgeReply:
        """The response shown first (A), second (B) or a tie; else unscored."""
        if self.pattern:
            match = self._matches(raw, "winner")
            if isinstance(match, JudgeReply):
                return match
            mapped = dict(self.winner_map).get(match)
            if mapped is None:
                return unscored_reply(f"'winner' captured {match!r}; winner_map maps "
                                      f"{', '.join(repr(k) for k, _ in self.winner_map)}", raw)
            return JudgeReply(LABELS[mapped], raw)
        if self.preset is Preset.BARE:
            text = raw.strip().lower()
            if text not in _BARE_CHOICES:
                return unscored_reply("reply is not A, B or tie", raw)
            return JudgeReply(_BARE_CHOICES[text], raw)
        if self.preset is Preset.MT_BENCH:
            one = _one(_MT_VERDICT.findall(raw), "[[A]], [[B]] or [[C]] verdict", raw)
            return one if isinstance(one, JudgeReply) else JudgeReply(_MT_CHOICES[one], raw)
        if self.preset is Preset.ARENA:
            return arena_verdict(raw)
        return parse_pairwise(raw)

    def _matches(self, raw: str, group: str) -> str | JudgeReply:
        try:
            found = [m.group(group) for m in regex.finditer(self.pattern, raw,
                                                            timeout=PATTERN_SECONDS)
                     if m.group(group) is not None]
        except TimeoutError:
            return unscored_reply(f"the reply pattern {self.pattern!r} took more than "
                                  f"{PATTERN_SECONDS:g} s of CPU on this reply", raw)
        if not found:
            return unscored_reply(f"reply does not match the reply pattern {self.pattern!r}",
                                  raw)
        return _one(found, f"'{group}'", raw)


JSON_REPLY = ReplyRule()


def arena_verdict(raw: str) -> JudgeReply:
    """``[[A>>B]]``, ``[[A>B]]``, ``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]`` anywhere in
    ``raw`` (the same label repeated is one verdict, two different ones none), with
    the preference's strength; anything else unscored with its text kept."""
    one = _one(_ARENA_VERDICT.findall(raw.upper()), "[[A>>B]]-style verdict", raw)
    if isinstance(one, JudgeReply):
        return one
    if one not in ARENA_LABELS:
        return unscored_reply(f"verdict [[{one}]] is none of "
                              + ", ".join(f"[[{k}]]" for k in ARENA_LABELS), raw)
    choice, strength = ARENA_LABELS[one]
    return JudgeReply(choice, raw, strength=strength)


def reply_rule(spec: object, winner_map: object = None, *, where: str = "reply") -> ReplyRule:
    """A rule from config: a preset name or a pattern (with ``winner_map`` for a
    ``winner`` group); raises InputError naming ``where``."""
    if not isinstance(spec, str) or not spec:
        raise InputError(f"{where}: got {spec!r}; expected one of {', '.join(PRESETS)}, or a "
                         "regular expression with a named group 'score' or 'winner'")
    if spec in PRESETS:
        if winner_map is not None:
            raise InputError(f"{where.rsplit('.', 1)[0]}.winner_map: applies to a reply "
                             f"pattern with a 'winner' group, not the preset {spec!r}")
        return ReplyRule(Preset(spec))
    try:
        groups = regex.compile(spec).groupindex
    except (regex.error, OverflowError, ValueError) as e:
        raise InputError(f"{where}: got {spec!r}, not a regular expression ({e}); expected "
                         f"one of {', '.join(PRESETS)} or a pattern") from None
    if "score" not in groups and "winner" not in groups:
        raise InputError(f"{where}: got {spec!r}; expected a pattern with a named group "
                         "(?P<score>...) or (?P<winner>...), or one of " + ", ".join(PRESETS))
    mapping = DEFAULT_WINNER_MAP
    if winner_map is not None:
        map_where = f"{where.rsplit('.', 1)[0]}.winner_map"
        if "winner" not in groups:
            raise InputError(f"{map_where}: the reply pattern has no 'winner' group")
        if (not isinstance(winner_map, Mapping) or not winner_map
                or not all(isinstance(k, str) and v in LABELS for k, v in winner_map.items())):
            raise InputError(f"{map_where}: got {winner_map!r}; expected a table from what "
                             "the 'winner' group captures to 'a', 'b' or 'tie'")
        mapping = tuple((str(k), str(v)) for k, v in winner_map.items())
    return ReplyRule(Preset.PATTERN, spec, mapping)


# --- prompt templates ---------------------------------------------------------------------

PLACEHOLDERS = {Mode.POINTWISE: ("prompt", "response", "reference", "criterion"),
                Mode.PAIRWISE: ("prompt", "response_a", "response_b")}
REQUIRED = {Mode.POINTWISE: ("prompt", "response"),
            Mode.PAIRWISE: ("prompt", "response_a", "response_b")}
_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def render(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each ``{name}`` replaced by its value (``{{``/``}}`` are
    literal braces); any other brace, a JSON example included, is left alone."""

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        return values.get(match.group(1), token)

    return _FIELD.sub(one, template)


def _placeholders(text: str) -> set[str]:
    return {m.group(1) for m in _FIELD.finditer(text) if m.group(1)}


@dataclass(frozen=True, slots=True)
class Templates:
    """A judge's own prompt per mode (None: metaeval's own template for that mode)."""

    pointwise: str | None = None
    pairwise: str | None = None

    @property
    def modes(self) -> frozenset[Mode]:
        return frozenset(({Mode.POINTWISE} if self.pointwise is not None else set())
                         | ({Mode.PAIRWISE} if self.pairwise is not None else set()))


NO_TEMPLATES = Templates()
"""metaeval's own template in every mode."""


def _read_template(value: object, base: Path, where: str, mode: Mode | None) -> tuple[Mode, str]:
    if not isinstance(value, str) or not value:
        raise InputError(f"{where}: got {value!r}; expected the path of a template file")
    path = base / value
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{where}: {path}: cannot read the template: {e}") from None
    names = _placeholders(text)
    if mode is None:  # one file: its placeholders say which question it asks
        mode = Mode.PAIRWISE if names & {"response_a", "response_b"} else Mode.POINTWISE
    unknown = sorted(names - set(PLACEHOLDERS[mode]))
    if unknown:
        raise InputError(f"{where}: {path}: unknown placeholder {{{unknown[0]}}} in a "
                         f"{mode.value} template; expected "
                         + ", ".join(f"{{{n}}}" for n in PLACEHOLDERS[mode])
                         + " (write {{ and }} for literal braces)")
    missing = [n for n in REQUIRED[mode] if n not in names]
    if missing:
        raise InputError(f"{where}: {path}: no {{{missing[0]}}} placeholder; a {mode.value} "
                         "template needs " + ", ".join(f"{{{n}}}" for n in REQUIRED[mode]))
    return mode, text


def read_templates(value: object, base: Path, where: str) -> Templates:
    """``prompt_template``: one file (its mode told by its placeholders) or a table
    ``{pointwise = "...", pairwise = "..."}``; paths relative to ``base``."""
    found: dict[Mode, str] = {}
    if isinstance(value, Mapping):
        if not value:
            raise InputError(f"{where}: got an empty table; expected 'pointwise' and/or "
                             "'pairwise' template paths")
        for key, path in value.items():
            if key not in (m.value for m in Mode):
                raise InputError(f"{where}.{key}: unknown key; expected pointwise, pairwise")
            mode, text = _read_template(path, base, f"{where}.{key}", Mode(key))
            found[mode] = text
    else:
        mode, text = _read_template(value, base, where, None)
        found[mode] = text
    return Templates(found.get(Mode.POINTWISE), found.get(Mode.PAIRWISE))


def custom_hash(templates: Templates, rule: ReplyRule, default_hash: str) -> str:
    """The prompt part of an identity: every template's text and the reply rule (a
    mode left to metaeval's template is named by ``default_hash``)."""
    parts = [templates.pointwise if templates.pointwise is not None else default_hash,
             templates.pairwise if templates.pairwise is not None else default_hash,
             rule.describe()]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:12]
