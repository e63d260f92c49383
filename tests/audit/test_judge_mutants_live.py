"""Template mutants against a judge served on loopback whose replies depend on the
prompt it is sent: it grades a response by the criteria listed in the template
(every "must say" word present), the reference shown, and the levels described;
without the "explain" line it checks only the first criterion. So each template
fault changes its verdicts on exactly the items that fault decides."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from tests.loopback import serving

TEMPLATE = """You grade a support reply.
- refund: the response must say "refund"
- polite: the response must say "please"
5: meets every criterion
1: misses a criterion
Explain your reasoning before you score.
Task: {prompt}
Reference: {reference}
<response>{response}</response>
Reply with Rating: [[N]].
"""


PAIR_TEMPLATE = """Which support reply is better?
- refund: the response must say "refund"
- polite: the response must say "please"
Explain your reasoning before you choose.
Task: {prompt}
<a>{response_a}</a>
<b>{response_b}</b>
Reply [[A]], [[B]] or [[C]] for a tie.
"""


def _met(words: list[str], text: str) -> int:
    return sum(w in text for w in words)


def grade(prompt: str) -> str:
    """The loopback judge: deterministic, and only as good as the prompt it is sent."""
    pair = re.search(r"<a>(.*?)</a>\s*<b>(.*?)</b>", prompt, re.DOTALL)
    if pair:  # the reply that meets more listed criteria; a tie when equal
        listed = re.findall(r'^- \w+: the response must say "(\w+)"', prompt, re.MULTILINE)
        a, b = _met(listed, pair.group(1)), _met(listed, pair.group(2))
        return "[[A]]" if a > b else "[[B]]" if b > a else "[[C]]"
    words = re.findall(r'^- \w+: the response must say "(\w+)"', prompt, re.MULTILINE)
    if "Explain" not in prompt:
        words = words[:1]  # told to score at once, it checks the first criterion only
    reference = re.search(r"^Reference: (\S+)$", prompt, re.MULTILINE)
    if reference and "Explain" in prompt:
        words.append(reference.group(1))
    shown = re.search(r"<response>(.*?)</response>", prompt, re.DOTALL)
    response = shown.group(1) if shown else ""
    levels = [int(n) for n in re.findall(r"^(\d+): ", prompt, re.MULTILINE)] or [1, 5]
    good = all(w in response for w in words)
    return f"Rating: [[{max(levels) if good else min(levels)}]]"


class Judge:
    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.lock = threading.Lock()
        self.url = ""


@pytest.fixture
def judge() -> Iterator[Judge]:
    state = Judge()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = body["messages"][0]["content"]
            with state.lock:
                state.prompts.append(prompt)
            data = json.dumps({"choices": [{"message": {"content": grade(prompt)}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serving(Handler) as url:
        state.url = f"{url}/v1"
        yield state


FILLER = "We looked into your order carefully. " * 8  # over 200 characters


def _items(labelled_polite: bool, label_polite: bool = True) -> list[dict[str, object]]:
    """Passing replies (long: "please" comes after 200 characters), replies that forget
    "please" (labelled or not) and replies with the wrong order id."""
    items: list[dict[str, object]] = [
        {"id": f"pass-{n}", "prompt": "Refund order A-1", "reference": "A-1",
              "response": f"Your refund for A-1 is done. {FILLER} Tell us, please, if not.",
              "label": "pass"} for n in range(5)]
    items += [{"id": f"rude-{n}", "prompt": "Refund order A-1", "reference": "A-1",
               "response": f"Your refund for A-1 is issued ({n}).",
               "label": "fail" if labelled_polite and label_polite else None}
              for n in range(5)]
    if labelled_polite:
        items += [{"id": f"wrong-{n}", "prompt": "Refund order A-1", "reference": "A-1",
                   "response": f"Your refund for A-2 is done ({n}), please check.",
                   "label": "fail"} for n in range(5)]
    return items


def _project(tmp_path: Path, url: str, items: list[dict[str, object]]) -> None:
    (tmp_path / "judge.txt").write_text(TEMPLATE)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.judges.house]\n"
        f'type = "http"\nbase_url = "{url}"\nmodel = "grader"\nretries = 0\n'
        'prompt_template = "judge.txt"\nreply = "mt-bench"\nscale = [1, 5]\npass_at = 4\n'
        'modes = ["pointwise"]\n')
    (tmp_path / "items.ndjson").write_text("".join(json.dumps(i) + "\n" for i in items))


def _run(*flags: str, code: int) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["judge-mutants", "--judge", "house", "--items",
                                       "items.ndjson", *flags, "--format", "json"])
    assert result.exit_code == code, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _status(document: dict[str, Any]) -> dict[str, str]:
    return {m["id"]: m["status"] for m in document["mutants"]}


def test_each_template_fault_is_killed_on_labels_that_cover_it(
        tmp_path: Path, judge: Judge, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, judge.url, _items(labelled_polite=True))
    assert grade(TEMPLATE.format(prompt="p", reference="A-1", response="refund A-1 please")
                 ) == "Rating: [[5]]"
    document = _run("--operators", "drop_criterion,drop_level,drop_placeholder,"
                    "truncate_response,weaken_must,drop_explanation", code=0)
    status = _status(document)
    for killed in ("drop_criterion.pointwise.2",  # "please" no longer asked: rude-* pass
                   "weaken_must.pointwise.2",  # "please" only suggested: the same
                   "drop_explanation.pointwise.1",  # scores at once on "refund" alone
                   "drop_placeholder.pointwise.2",  # no reference: wrong-* pass
                   "truncate_response.pointwise.1",  # "please" cut off: pass-* fail
                   "drop_level.pointwise.1", "drop_level.pointwise.2"):
        assert status[killed] == "Killed", (killed, document)
    # Every reply says "refund", and the judge ignores the task: no label can tell.
    for same in ("drop_criterion.pointwise.1", "weaken_must.pointwise.1",
                 "drop_placeholder.pointwise.1"):
        assert status[same] == "Equivalent", same
    assert document["calls"]["made"] == len(judge.prompts) <= document["calls"]["estimated"]


FLIPS = {
    "drop_criterion.pointwise.2": ("rude",),  # "please" no longer asked
    "weaken_must.pointwise.2": ("rude",),  # "please" only suggested
    "drop_explanation.pointwise.1": ("rude", "wrong"),  # "refund" alone decides
    "drop_placeholder.pointwise.2": ("wrong",),  # the order id no longer shown
    "truncate_response.pointwise.1": ("pass",),  # "please" cut off
    "drop_level.pointwise.1": ("pass",),  # no level 5 to give
    "drop_level.pointwise.2": ("rude", "wrong"),  # no level 1 to give
}
"""Each template mutant and the replies whose verdict it moves."""


def _labelled(unlabelled: tuple[str, ...]) -> list[dict[str, object]]:
    """Every reply kind, those named left unlabelled ("label": null)."""
    return [{**item, "label": None} if str(item["id"]).split("-")[0] in unlabelled else item
            for item in _items(labelled_polite=True)]


@pytest.mark.parametrize("mutant", sorted(FLIPS))
def test_a_fault_the_labels_miss_survives_names_the_items_and_dies_once_they_are_labelled(
        tmp_path: Path, judge: Judge, monkeypatch: pytest.MonkeyPatch, mutant: str) -> None:
    monkeypatch.chdir(tmp_path)
    flipped = FLIPS[mutant]
    _project(tmp_path, judge.url, _labelled(flipped))
    ops = ("--operators", mutant.split(".")[0])
    first = {m["id"]: m for m in _run(*ops, code=1)["mutants"]}[mutant]
    assert first["status"] == "Survived" and first["killed_by"] == []
    named = sorted(f"{kind}-{n}" for kind in flipped for n in range(5))
    assert first["unlabelled"] == first["disagree"] == named
    asked = len(judge.prompts)

    # Label the items it names as a person would: killed, and no call is made again.
    _project(tmp_path, judge.url, _labelled(()))
    second = _run(*ops, code=0)
    assert _status(second)[mutant] == "Killed"
    assert len(judge.prompts) == asked and second["calls"]["made"] == 0


def test_a_survivors_diff_shows_the_line_dropped(
        tmp_path: Path, judge: Judge, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, judge.url, _labelled(("rude",)))
    dropped = {m["id"]: m for m in _run("--operators", "drop_criterion", code=1)["mutants"]
               }["drop_criterion.pointwise.2"]
    assert dropped["diff"]["line"] == 3
    assert "please" in dropped["diff"]["before"] and "please" not in dropped["diff"]["after"]


def test_the_cost_is_said_first_and_a_run_over_max_calls_is_refused_before_any_call(
        tmp_path: Path, judge: Judge, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, judge.url, _items(labelled_polite=True))
    result = CliRunner().invoke(main, ["judge-mutants", "--judge", "house", "--items",
                                       "items.ndjson", "--operators", "drop_criterion",
                                       "--max-calls", "32"])
    assert result.exit_code == 2, result.output
    # 11 distinct prompts a template (the five passing replies are alike), for the judge
    # and its two drop_criterion mutants: 33.
    assert "33 call(s) to make" in result.stderr
    assert "more than --max-calls 32; nothing was asked" in result.stderr
    assert judge.prompts == []
    ok = CliRunner().invoke(main, ["judge-mutants", "--judge", "house", "--items",
                                   "items.ndjson", "--operators", "drop_criterion",
                                   "--max-calls", "33"])
    assert ok.exit_code == 0, ok.output
    assert ok.stderr.startswith("judge-mutants: ") and "33 call(s)" in ok.stderr.split("\n")[0]
    assert len(judge.prompts) == 33  # no call beyond the estimate


def test_an_unreachable_judge_is_exit_3_with_the_cause(
        tmp_path: Path, judge: Judge, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, "http://127.0.0.1:9/v1", _items(labelled_polite=True))
    result = CliRunner().invoke(main, ["judge-mutants", "--judge", "house", "--items",
                                       "items.ndjson", "--no-cache"])
    assert result.exit_code == 3, result.output
    assert "could not be reached" in result.output and "refused" in result.output.lower()
    assert "nothing measured" in result.output


def test_a_pair_shown_in_one_fixed_order_is_killed_by_the_position_probe_without_labels(
        tmp_path: Path, judge: Judge, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pair.txt").write_text(PAIR_TEMPLATE)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.judges.pairs]\n"
        f'type = "http"\nbase_url = "{judge.url}"\nmodel = "grader"\nretries = 0\n'
        'prompt_template = "pair.txt"\nreply = "mt-bench"\nmodes = ["pairwise"]\n')
    # Polite and rude replies, the polite one sometimes a, sometimes b; nobody labelled them.
    polite, rude = "Your refund is done, please check.", "Your refund is done."
    pairs = [{"id": f"p{n}", "prompt": "Refund", "response_a": f"{polite} ({n})" if n % 2
              else f"{rude} ({n})", "response_b": f"{rude} ({n})" if n % 2
              else f"{polite} ({n})", "label": None} for n in range(8)]
    (tmp_path / "items.ndjson").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    result = CliRunner().invoke(main, ["judge-mutants", "--judge", "pairs", "--items",
                                       "items.ndjson", "--operators",
                                       "fix_pair_order,drop_criterion", "--format", "json"])
    document = json.loads(result.stdout)
    assert result.exit_code == 1, result.output
    status = {m["id"]: m for m in document["mutants"]}
    fixed = status["fix_pair_order.pairwise.1"]
    # Asked both ways, it sees one order twice: the better reply "wins" once as a and
    # once as b, every pair flips with its order, and the position probe finds it.
    assert fixed["status"] == "Killed" and fixed["killed_by"] == ["position bias FOUND"]
    # Dropping "please" makes every pair a tie in both orders: consistent, so nothing
    # unlabelled can tell; the pairs it names are the ones to label.
    dropped = status["drop_criterion.pairwise.2"]
    assert dropped["status"] == "Survived"
    assert dropped["unlabelled"] == [f"p{n}" for n in range(8)]
