"""A team's own judge (issue 16): its prompt template and its reply rule, served
MT-Bench style by the loopback stub."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.config import load_config
from metaeval.errors import InputError
from metaeval.judges.base import Choice, Mode, Scale
from metaeval.judges.reply import Preset, ReplyRule, reply_rule
from metaeval.judges.spec import build_judge

from .conftest import Stub

ITEMS = Path(__file__).resolve().parents[2] / "meta_sets" / "judge" / "position.ndjson"
MT_PAIR = ("[System]\nPlease act as an impartial judge.\n[User Question]\n{prompt}\n"
           "[The Start of Assistant A's Answer]\n{response_a}\n[The End of Assistant A's Answer]"
           "\n[The Start of Assistant B's Answer]\n{response_b}\n"
           "[The End of Assistant B's Answer]\nOutput your final verdict by strictly following "
           'this format: "[[A]]" if assistant A is better, "[[B]]" if assistant B is better, '
           'and "[[C]]" for a tie. Example JSON you must not send: {"winner": "A"}\n')
MT_REPLY = ("Assistant A states the policy exactly, while Assistant B is vague. "
            "Final verdict: [[A]]")
SCALE = Scale(1, 10, 8)


def _project(tmp_path: Path, stub: Stub, reply: str, template: str = MT_PAIR) -> None:
    (tmp_path / "judge").mkdir(exist_ok=True)
    (tmp_path / "judge" / "pair.txt").write_text(template)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.judges.mt]\n"
        f'type = "http"\nbase_url = "{stub.url}"\nmodel = "stub-model"\n'
        'prompt_template = "judge/pair.txt"\n'
        f"reply = {json.dumps(reply)}\n")
    shutil.copy(ITEMS, tmp_path / "position.ndjson")


def _audit() -> Result:
    return CliRunner().invoke(main, ["judge-audit", "--judge", "mt", "--items",
                                     "position.ndjson", "--no-cache", "--format", "json",
                                     "--probes", "files"])


def test_an_mt_bench_judge_is_read_under_mt_bench_and_unscored_under_json(
        stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stub.script = [(200, MT_REPLY)]
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, stub, "mt-bench")
    read = json.loads(_audit().stdout)
    # The template's file, filled in, is what the server was asked.
    asked = stub.requests[0]["messages"][0]["content"]  # type: ignore[index]
    assert asked.startswith("[System]\nPlease act as an impartial judge.\n[User Question]\n")
    assert '{"winner": "A"}' in asked and "{prompt}" not in asked
    assert read["judge"]["modes"] == ["pairwise"]
    assert read["position"]["headline"] == "FOUND — 12 of 12"  # always [[A]]: first shown
    assert read["agreement"]["unscored"] == 0
    _project(tmp_path, stub, "json")
    unread = json.loads(_audit().stdout)
    assert (unread["agreement"]["unscored"], unread["agreement"]["verdicts"]) == (24, 24)
    assert unread["position"]["status"] == "not run"
    assert unread["judge"]["version"] != read["judge"]["version"]


def test_one_character_of_the_template_changes_the_version(
        stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, stub, "mt-bench")
    first = build_judge("mt", judges=load_config().judges).identity
    _project(tmp_path, stub, "mt-bench", MT_PAIR.replace("impartial", "impartial!"))
    second = build_judge("mt", judges=load_config().judges).identity
    assert first.prompt_hash != second.prompt_hash and first.version != second.version
    _project(tmp_path, stub, "mt-bench")
    assert build_judge("mt", judges=load_config().judges).identity == first


def test_a_custom_judge_differs_from_metaevals_own(stub: Stub, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.metaeval.judges.a]\ntype = "http"\nbase_url = "{stub.url}"\nmodel = "m"\n'
        f'[tool.metaeval.judges.b]\ntype = "http"\nbase_url = "{stub.url}"\nmodel = "m"\n'
        'reply = "bare"\nname = "a"\n')
    judges = load_config().judges
    assert (build_judge("a", judges=judges).identity.version
            != build_judge("b", judges=judges).identity.version)


@pytest.mark.parametrize(("template", "message"), [
    ("Compare {response_a} and {response_b}.", "no {prompt} placeholder; a pairwise template "
     "needs {prompt}, {response_a}, {response_b}"),
    ("{prompt}: {response_a} or {respnse_b}?", "unknown placeholder {respnse_b} in a pairwise "
     "template"),
    ("Grade this: {prompt}", "no {response} placeholder; a pointwise template needs {prompt}, "
     "{response}"),
])
def test_a_template_missing_a_placeholder_is_a_config_error_naming_the_file(
        stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: str,
        message: str) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, stub, "mt-bench", template)
    with pytest.raises(InputError) as caught:
        build_judge("mt", judges=load_config().judges)
    assert f"tool.metaeval.judges.mt.prompt_template: {tmp_path / 'judge' / 'pair.txt'}: " \
        f"{message}" in str(caught.value)


def test_per_mode_templates_and_a_pattern_for_each(stub: Stub, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "point.txt").write_text("Rate {response} to {prompt}. Score: N")
    (tmp_path / "pair.txt").write_text("{prompt}\n(a) {response_a}\n(b) {response_b}")
    base = (f'[tool.metaeval.judges.own]\ntype = "http"\nbase_url = "{stub.url}"\n'
            'model = "m"\nprompt_template = {pointwise = "point.txt", pairwise = "pair.txt"}\n')
    (tmp_path / "pyproject.toml").write_text(base + "reply = 'Score: (?P<score>\\d+)'\n"
                                             'modes = ["pointwise", "pairwise"]\n')
    with pytest.raises(InputError, match="reply: the pattern has no 'winner' group"):
        build_judge("own", judges=load_config().judges)
    (tmp_path / "pyproject.toml").write_text(base + "reply = 'Score: (?P<score>\\d+)'\n")
    assert build_judge("own", judges=load_config().judges).modes == frozenset({Mode.POINTWISE})
    stub.script = [(200, "Score: 5"), (200, "on a scale of 1 to 10 I'd give it an 8")]
    judge = build_judge("own", judges=load_config().judges)
    assert judge.score("q", "r").value == 5.0
    assert stub.requests[0]["messages"][0]["content"] == "Rate r to q. Score: N"  # type: ignore[index]
    unread = judge.score("q", "r")
    assert unread.unscored and unread.raw == "on a scale of 1 to 10 I'd give it an 8"


@pytest.mark.parametrize("rule", ["json", "bare", "mt-bench", r"Score: (?P<score>\d+)"])
def test_a_reply_in_prose_is_unscored_under_every_rule(rule: str) -> None:
    text = "on a scale of 1 to 10 I'd give it an 8"
    reply = reply_rule(rule).pointwise(text, SCALE)
    assert reply.unscored and reply.raw == text and reply.reason


def test_the_presets_read_what_they_promise() -> None:
    mt, bare = ReplyRule(Preset.MT_BENCH), ReplyRule(Preset.BARE)
    assert mt.pairwise(MT_REPLY).value is Choice.A
    assert mt.pairwise("close call [[C]]").value is Choice.TIE
    assert mt.pairwise("[[A]] no wait [[B]]").unscored
    assert mt.pointwise("Rating: [[8]]", SCALE).value == 8.0
    assert mt.pointwise("[[11]]", SCALE).unscored
    assert mt.pointwise("I'd say 8", SCALE).unscored
    assert bare.pointwise(" 7 ", SCALE).value == 7.0
    assert bare.pointwise('{"explanation": "x", "score": 7}', SCALE).unscored
    assert bare.pairwise("tie").value is Choice.TIE
    assert bare.pairwise("A is better").unscored
    assert ReplyRule().pointwise('{"explanation": "x", "score": 7}', SCALE).value == 7.0


@pytest.mark.parametrize(("spec", "preset", "described"), [
    ("json", Preset.JSON, "json"), ("bare", Preset.BARE, "bare"),
    ("mt-bench", Preset.MT_BENCH, "mt-bench"), ("arena", Preset.ARENA, "arena"),
    (r"Score: (?P<score>\d+)", Preset.PATTERN,
     "pattern 'Score: (?P<score>\\\\d+)'; winner_map {a=a, b=b, tie=tie}"),
])
def test_a_rule_names_its_preset_as_the_enum_and_describes_itself_as_before(
        spec: str, preset: Preset, described: str) -> None:
    # describe() is part of the judge's identity: the enum must not change its text
    # (a Preset member in an f-string would read "Preset.JSON").
    rule = reply_rule(spec)
    assert rule.preset is preset
    assert rule.describe() == described


def test_a_winner_pattern_reads_through_its_map() -> None:
    rule = reply_rule(r"Output \((?P<winner>[ab])\)", {"a": "a", "b": "b"})
    assert rule.pairwise("Output (b)").value is Choice.B
    assert rule.pairwise("Output (a)").value is Choice.A
    assert rule.pairwise("Output (c)").unscored
    assert rule.pairwise("Both are fine").unscored
    assert rule.modes == frozenset({Mode.PAIRWISE})
    flipped = reply_rule(r"Winner: (?P<winner>\w+)", {"first": "a", "second": "b",
                                                      "neither": "tie"})
    assert flipped.pairwise("Winner: neither").value is Choice.TIE
    assert flipped.pairwise("Winner: both").unscored


@pytest.mark.parametrize(("spec", "winner_map", "message"), [
    ("Score: \\d+", None, "expected a pattern with a named group"),
    ("(?P<score>[", None, "not a regular expression"),
    ("mt-bench", {"a": "a"}, "winner_map: applies to a reply pattern"),
    ("(?P<winner>x)", {"x": "first"}, "expected a table from what the 'winner' group"),
    ("", None, "expected one of json, bare, mt-bench"),
])
def test_a_bad_reply_rule_is_a_config_error(spec: str, winner_map: object,
                                            message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        reply_rule(spec, winner_map, where="tool.metaeval.judges.x.reply")


def test_a_python_function_judge_may_take_a_template_and_a_reply_rule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pair.txt").write_text("{prompt} | {response_a} | {response_b}")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metaeval]\nallowed_modules = ["tests"]\n'
        '[tool.metaeval.judges.fn]\ntype = "python"\n'
        'target = "tests.judges.test_own_judge:echo_judge"\n'
        'prompt_template = "pair.txt"\nreply = "mt-bench"\n')
    config = load_config()
    judge = build_judge("fn", allowed=config.allowed_modules, judges=config.judges)
    assert judge.compare("q", "x", "y").value is Choice.B
    assert judge.modes == frozenset({Mode.PAIRWISE})


def echo_judge(prompt: str) -> str:
    """A function judge for the test above: [[B]] when the prompt was rendered."""
    return "[[B]]" if prompt == "q | x | y" else "?"


def test_a_reply_that_makes_the_pattern_backtrack_without_end_is_unscored() -> None:
    # The pattern is the project's, the reply the judge server's: a reply built to
    # make it backtrack must cost a bounded time and read as no verdict.
    rule = reply_rule(r"(?P<winner>(a|aa)+)$", {"a": "a"})
    started = time.process_time()
    reply = rule.pairwise("a" * 40 + "b")
    assert time.process_time() - started < 5
    assert reply.value is None and "took more than" in reply.reason
    # The same pattern still reads a reply it matches.
    assert rule.pairwise("aa").value is None  # captured "aa": not in winner_map
    assert rule.pairwise("a").value is not None


def test_the_arena_preset_reads_the_five_verdicts_and_their_strength() -> None:
    arena = reply_rule("arena")
    read = {label: arena.pairwise(f"Both are fine.\n\nMy final verdict is: [[{label}]]")
            for label in ("A>>B", "A>B", "A=B", "B>A", "B>>A")}
    assert {k: (r.value, r.strength) for k, r in read.items()} == {
        "A>>B": (Choice.A, "strong"), "A>B": (Choice.A, "slight"), "A=B": (Choice.TIE, None),
        "B>A": (Choice.B, "slight"), "B>>A": (Choice.B, "strong")}
    # The same label twice is one verdict; Arena-Hard reads the text upper-cased.
    assert arena.pairwise("[[b>a]] ... so, again: [[B>A]]").value is Choice.B
    for text in ("[[A>B]] or maybe [[A>>B]]", "[[A<B]]", "[[A]]", "A is better", ""):
        reply = arena.pairwise(text)
        assert reply.unscored and reply.raw == text and reply.reason, text
    assert arena.pointwise("[[A>B]]", SCALE).unscored
    assert arena.modes == frozenset({Mode.PAIRWISE})
    assert reply_rule("mt-bench").pairwise("[[A]]").strength is None


def test_an_arena_judge_is_read_live_and_refused_for_pointwise_use(
        stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stub.script = [(200, "Assistant A is clearly better.\n\nMy final verdict is: [[A>>B]]")]
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, stub, "arena")
    read = json.loads(_audit().stdout)
    assert read["judge"]["modes"] == ["pairwise"]
    assert read["agreement"]["unscored"] == 0
    assert read["position"]["headline"] == "FOUND — 12 of 12"  # always A: the first shown
    config = (tmp_path / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(  # metaeval's own templates, asked to score
        config.replace('prompt_template = "judge/pair.txt"\n', 'modes = ["pointwise"]\n'))
    with pytest.raises(InputError, match="the preset 'arena' reads pairwise verdicts only"):
        build_judge("mt", judges=load_config(tmp_path).judges)


def test_an_arena_judges_strength_is_reported_live_and_from_the_cache(
        stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stub.script = [(200, "A is a little better. [[A>B]]")]
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, stub, "arena")
    args = ["judge-audit", "--judge", "mt", "--items", "position.ndjson", "--format", "json",
            "--probes", "files", "--cache", str(tmp_path / "cache.sqlite")]
    live = json.loads(CliRunner().invoke(main, args).stdout)
    cached = json.loads(CliRunner().invoke(main, args).stdout)
    assert cached["calls"]["cached"] == live["calls"]["made"] == 24
    # Always A, slight: every preference slight, every position flip between slight ones.
    expected = {"orders": {"ab": {"strong": 0, "slight": 12, "unstated": 0},
                           "ba": {"strong": 0, "slight": 12, "unstated": 0}},
                "flips": {"strong": 0, "slight": 12, "unstated": 0}}
    assert live["position"]["strength"] == cached["position"]["strength"] == expected
