"""The HTTP judge's key stays at its origin: no redirect is followed, and a reply
that echoes the key is redacted before it is cached, reported or shown.

Every case runs against real HTTP servers on 127.0.0.1 (``conftest.Stub``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.judges.adapters import REDACTED, HttpSettings, http_judge
from metaeval.judges.base import Choice, Judge
from metaeval.judges.cache import CachedJudge, ReplyCache

from .conftest import Stub

SECRET = "sk-test-redirect-bait-0451"
ITEMS = Path(__file__).resolve().parents[2] / "meta_sets" / "judge" / "position.ndjson"


def _judge(stub: Stub) -> Judge:
    return http_judge(HttpSettings(stub.url, "stub-model", "STUB_JUDGE_KEY", timeout_s=5.0,
                                   retries=2, backoff_s=0.001))


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_is_a_failed_call_and_nothing_reaches_it(
        stub: Stub, other_stub: Stub, status: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_JUDGE_KEY", SECRET)
    stub.script = [(status, "moved")]
    stub.location = f"{other_stub.url}/chat/completions"
    other_stub.script = [(200, "5")]  # what a followed redirect would have scored
    reply = _judge(stub).score("q", "an answer")
    assert reply.value is None and reply.call.failed
    assert f"HTTP {status} redirect" in reply.reason
    assert repr(stub.location) in reply.reason
    assert other_stub.paths == [] and other_stub.auth == []
    assert stub.paths == ["POST /v1/chat/completions"]  # not retried either
    assert stub.auth == [f"Bearer {SECRET}"]
    assert SECRET not in reply.reason + reply.raw


def test_a_redirect_on_the_same_origin_is_not_followed_either(
        stub: Stub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_JUDGE_KEY", SECRET)
    stub.script = [(302, "moved")]
    stub.location = "/v2/chat/completions"
    reply = _judge(stub).score("q", "an answer")
    assert reply.value is None and reply.call.failed
    assert "HTTP 302 redirect" in reply.reason and "'/v2/chat/completions'" in reply.reason
    assert stub.paths == ["POST /v1/chat/completions"]


def _configure(tmp_path: Path, stub: Stub, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.judges.house]\n"
        f'type = "http"\nbase_url = "{stub.url}"\nmodel = "stub-model"\n'
        'api_key_env = "HOUSE_JUDGE_KEY"\nretries = 0\nconcurrency = 2\n'
        'modes = ["pairwise"]\n')
    shutil.copy(ITEMS, tmp_path / "position.ndjson")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOUSE_JUDGE_KEY", SECRET)
    return ["judge-audit", "--judge", "house", "--items", "position.ndjson",
            "--cache", "cache.sqlite", "--format", "json", "--probes", "files"]


def test_the_audit_never_counts_what_a_redirect_target_answers(
        stub: Stub, other_stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = _configure(tmp_path, stub, monkeypatch)
    stub.script = [(302, "moved")]
    stub.location = f"{other_stub.url}/chat/completions"
    other_stub.script = [(200, "A")]  # always "A": a position bias, were it counted
    result = CliRunner().invoke(main, args)
    document = json.loads(result.stdout)
    location = f"{other_stub.url}/chat/completions"
    assert document["calls"] == {"made": 24, "cached": 0, "failed": 24, "failures": [
        {"calls": 24, "reason": f"HTTP 302 redirect from {stub.url}/chat/completions to "
                                f"{location!r} not followed (a redirect could carry the API "
                                "key elsewhere); set base_url to where the endpoint really is"}]}
    assert document["position"]["status"] != "FOUND"
    assert other_stub.paths == []
    assert SECRET not in result.output


def test_a_reply_echoing_the_key_is_redacted_before_the_cache_and_the_report(
        stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = _configure(tmp_path, stub, monkeypatch)
    stub.script = [(200, json.dumps({"explanation": f"your header said Bearer {SECRET}",
                                     "winner": "A"})),
                   (400, f"bad key {SECRET}"),
                   (200, json.dumps({"explanation": f"key {SECRET} again", "winner": "B"}))]
    result = CliRunner().invoke(main, args)
    document = json.loads(result.stdout)
    assert document["calls"]["made"] == 24 and document["calls"]["failed"] == 1
    cache_bytes = (tmp_path / "cache.sqlite").read_bytes()
    assert SECRET.encode() not in cache_bytes
    assert REDACTED.encode() in cache_bytes  # the replies were stored, without the key
    assert SECRET not in result.output
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert SECRET.encode() not in written


def test_redaction_keeps_the_decision_and_covers_failed_calls(
        stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_JUDGE_KEY", SECRET)
    stub.script = [(200, json.dumps({"explanation": f"saw {SECRET}", "winner": "B"})),
                   (403, f"key {SECRET} is revoked")]
    cache = ReplyCache(tmp_path / "c.sqlite")
    judge = CachedJudge(_judge(stub), cache)
    good = judge.compare("q", "one", "two")
    assert good.value is Choice.B
    assert SECRET not in good.raw and REDACTED in good.raw
    bad = judge.compare("q", "three", "four")
    assert bad.value is None and bad.call.failed
    assert SECRET not in bad.raw + bad.reason and REDACTED in bad.raw
    cache.close()
    assert SECRET.encode() not in (tmp_path / "c.sqlite").read_bytes()


def test_without_a_key_nothing_is_redacted(stub: Stub) -> None:
    # No key, nothing to hide: a reply that happens to contain "[redacted]"-like or
    # key-like text is kept as the judge wrote it.
    stub.script = [(200, json.dumps({"explanation": "sk-looks-like-a-key", "winner": "A"}))]
    reply = http_judge(HttpSettings(stub.url, "m", retries=0)).compare("q", "a", "b")
    assert reply.value is Choice.A and "sk-looks-like-a-key" in reply.raw


def test_why_calls_failed_reaches_every_output_without_the_key(
        stub: Stub, other_stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = [*_configure(tmp_path, stub, monkeypatch)[:-4], "--probes", "files"]
    stub.script = [(302, "moved")]
    stub.location = f"{other_stub.url}/chat/completions?token={SECRET}"
    result = CliRunner().invoke(main, [*args, "--html", "audit.html", "--summary", "s.md"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    shown = f"to '{other_stub.url}/chat/completions?token=[redacted]' not followed"
    assert "24 failed, because:\n  24 call(s): HTTP 302 redirect from " in result.stdout
    for text in (result.stdout, (tmp_path / "audit.html").read_text(encoding="utf-8"),
                 (tmp_path / "s.md").read_text(encoding="utf-8")):
        assert shown in text.replace("&#x27;", "'")
        assert SECRET not in text
    assert other_stub.paths == []


def test_answered_calls_show_no_failure_reason(
        stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = _configure(tmp_path, stub, monkeypatch)
    stub.script = [(200, json.dumps({"winner": "A"}))]
    document = json.loads(CliRunner().invoke(main, args).stdout)
    assert document["calls"]["failed"] == 0 and document["calls"]["failures"] == []


def test_a_key_ending_in_a_newline_is_refused_naming_its_variable_never_sent(
        stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = _configure(tmp_path, stub, monkeypatch)
    monkeypatch.setenv("HOUSE_JUDGE_KEY", SECRET + "\n")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: the API key in $HOUSE_JUDGE_KEY ends with "
                                    "whitespace or a control character")
    assert SECRET not in result.output and stub.requests == []
    monkeypatch.setenv("HOUSE_JUDGE_KEY", f"{SECRET[:4]} {SECRET[4:]}")  # inside, too
    assert CliRunner().invoke(main, args).exit_code == 2


def test_a_key_turning_bad_after_the_judge_was_built_fails_the_call_not_the_run(
        stub: Stub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_JUDGE_KEY", SECRET)
    judge = _judge(stub)
    monkeypatch.setenv("STUB_JUDGE_KEY", SECRET + "\r\n")
    reply = judge.score("q", "a")
    assert reply.value is None and reply.call.failed
    assert "$STUB_JUDGE_KEY ends with whitespace" in reply.reason
    assert SECRET not in reply.reason and stub.requests == []
