from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from metaeval.errors import InputError
from metaeval.importing import AllowedModules
from metaeval.judges.adapters import HttpSettings, http_judge
from metaeval.judges.base import Choice, Judge, JudgeReply
from metaeval.judges.cache import CachedJudge, ReplyCache
from metaeval.judges.spec import build_judge

from .conftest import Stub

SECRET = "sk-test-not-a-real-key-123"


def _http(stub: Stub, **overrides: object) -> Judge:
    settings = {"base_url": stub.url, "model": "stub-model", "api_key_env": "STUB_JUDGE_KEY",
                "timeout_s": 5.0, "retries": 3, "backoff_s": 0.001, "concurrency": 2}
    settings.update(overrides)
    return http_judge(HttpSettings(**settings))  # type: ignore[arg-type]


def test_http_prose_reply_is_unscored_never_a_score(stub: Stub) -> None:
    stub.script = [(200, "I would rate this 3 out of 10")]
    reply = _http(stub).score("q", "an answer")
    assert reply.value is None
    assert reply.raw == "I would rate this 3 out of 10"
    assert not reply.call.failed  # the call worked; the reply could not be read


def test_http_retries_429_then_scores(stub: Stub) -> None:
    stub.script = [(429, "slow down"), (429, "slow down"), (200, "4")]
    reply = _http(stub).score("q", "an answer")
    assert reply.value == 4.0
    assert len(stub.requests) == 3
    assert reply.call.prompt_tokens == 11


def test_http_gives_up_after_bounded_retries(stub: Stub) -> None:
    stub.script = [(503, "down")]
    reply = _http(stub, retries=2).score("q", "an answer")
    assert reply.value is None and reply.call.failed
    assert "HTTP 503" in reply.reason
    assert len(stub.requests) == 3


def test_http_client_error_is_not_retried(stub: Stub) -> None:
    stub.script = [(400, "bad request")]
    reply = _http(stub).score("q", "an answer")
    assert reply.value is None and "HTTP 400" in reply.reason
    assert len(stub.requests) == 1


def test_http_unreachable_is_unscored() -> None:
    judge = http_judge(HttpSettings("http://127.0.0.1:9/v1", "m", timeout_s=1, retries=0))
    reply = judge.score("q", "a")
    assert reply.value is None and reply.call.failed


def test_http_pairwise_and_request_shape(stub: Stub) -> None:
    stub.script = [(200, '{"explanation": "B cites the order", "winner": "B"}')]
    reply = _http(stub).compare("q", "first", "second", sample=2)
    assert reply.value is Choice.B
    body = stub.requests[0]
    assert body["model"] == "stub-model" and body["seed"] == 2
    assert isinstance(body["messages"], list)


def test_http_key_goes_in_the_header_and_nowhere_else(stub: Stub, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_JUDGE_KEY", SECRET)
    cache = ReplyCache(tmp_path / "cache.sqlite")
    judge = CachedJudge(_http(stub), cache)
    judge.score("q", "an answer")
    cache.close()
    assert stub.auth == [f"Bearer {SECRET}"]
    assert SECRET not in repr(judge)
    assert SECRET not in judge.identity.describe()
    assert SECRET.encode() not in (tmp_path / "cache.sqlite").read_bytes()


def test_http_concurrency_is_limited(stub: Stub) -> None:
    from concurrent.futures import ThreadPoolExecutor

    # The stub holds the first requests until two are in flight at once: a delay
    # alone (even 0.25 s) let a loaded machine serialise them (flaky).
    stub.overlap = 2
    judge = _http(stub, concurrency=2)
    with ThreadPoolExecutor(max_workers=6) as pool:
        replies = list(pool.map(lambda i: judge.score("q", f"answer {i}"), range(6)))
    assert all(r.value == 4.0 for r in replies)
    assert stub.most_active == 2


def test_second_run_against_the_cache_makes_no_calls(stub: Stub, tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    first = CachedJudge(_http(stub), ReplyCache(path))
    one = [first.score("q", f"answer {i}", sample=s) for i in range(3) for s in range(2)]
    assert len(stub.requests) == 6 and not any(r.call.cached for r in one)
    second = CachedJudge(_http(stub), ReplyCache(path))
    two = [second.score("q", f"answer {i}", sample=s) for i in range(3) for s in range(2)]
    assert len(stub.requests) == 6
    assert all(r.call.cached for r in two)
    assert [r.value for r in two] == [r.value for r in one]


def test_failed_calls_are_not_cached(stub: Stub, tmp_path: Path) -> None:
    stub.script = [(500, "down"), (200, "5")]
    judge = CachedJudge(_http(stub, retries=0), ReplyCache(tmp_path / "c.sqlite"))
    assert judge.score("q", "a").value is None
    assert judge.score("q", "a").value == 5.0
    assert judge.score("q", "a").call.cached


def test_changed_identity_misses_the_cache(stub: Stub, tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    CachedJudge(_http(stub), ReplyCache(path)).score("q", "a")
    CachedJudge(_http(stub, temperature=0.7), ReplyCache(path)).score("q", "a")
    assert len(stub.requests) == 2


def _script(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "judge.py"
    script.write_text(body)
    return [sys.executable, str(script)]


def test_command_judge_reads_stdin_and_replies_on_stdout(tmp_path: Path) -> None:
    command = _script(tmp_path, "import json, sys\n"
                      "request = json.load(sys.stdin)\n"
                      "print('5' if 'refund' in request['prompt'] else '1')\n")
    judge = build_judge({"type": "command", "command": command, "timeout": 10})
    assert judge.score("q", "I issued the refund").value == 5.0
    assert judge.score("q", "I did nothing").value == 1.0


def test_command_judge_failures_are_unscored(tmp_path: Path) -> None:
    slow = build_judge({"type": "command", "timeout": 0.2,
                        "command": _script(tmp_path, "import time; time.sleep(5)")})
    reply = slow.score("q", "a")
    assert reply.value is None and "timed out" in reply.reason
    crash = build_judge({"type": "command", "command": [sys.executable, "-c", "exit(3)"]})
    assert "exited 3" in crash.score("q", "a").reason


def replies_in_prose(prompt: str) -> str:
    return "I would rate this 3 out of 10"


def test_python_callable_judge_by_import_path() -> None:
    judge = build_judge(f"{__name__}:replies_in_prose", allowed=AllowedModules((__name__,)))
    reply = judge.score("q", "a")
    assert reply.value is None and reply.raw == "I would rate this 3 out of 10"


@pytest.mark.parametrize(("spec", "message"), [
    ("gpt-judge", "expected one of biased, steady, always-pass"),
    ({"type": "http", "base_url": "http://x", "model": "m", "api_key": SECRET}, "secret"),
    ({"type": "http", "base_url": "ftp://x", "model": "m"}, "http(s) URL"),
    ({"type": "smoke"}, "expected 'http', 'command' or 'python'"),
    ({"type": "command", "command": [], "timeout": 1}, "expected a list of strings"),
    ({"type": "command", "command": ["x"], "colour": 1}, "unknown key"),
])
def test_bad_judge_specs_say_what_was_expected(spec: object, message: str) -> None:
    with pytest.raises(InputError, match=None) as info:
        build_judge(spec)
    assert message in str(info.value)
    assert SECRET not in str(info.value)


def test_fakes_by_name() -> None:
    for name in ("biased", "steady", "always-pass"):
        judge = build_judge(name)
        assert isinstance(judge, Judge)
        assert judge.identity.name == name
    assert isinstance(build_judge("steady").score("q", "a"), JudgeReply)


def test_another_scale_is_another_question_for_the_cache(stub: Stub, tmp_path: Path) -> None:
    from metaeval.judges.base import Scale

    path = tmp_path / "c.sqlite"
    one_to_five = http_judge(HttpSettings(stub.url, "m", retries=0))
    one_to_ten = http_judge(HttpSettings(stub.url, "m", retries=0), scale=Scale(1, 10, 7))
    CachedJudge(one_to_five, ReplyCache(path)).score("q", "a")
    CachedJudge(one_to_ten, ReplyCache(path)).score("q", "a")
    assert len(stub.requests) == 2
    assert "from 1 (worst) to 10 (best)" in str(stub.requests[1]["messages"])


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting for its parent to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_timed_out_command_judge_leaves_no_process_behind(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    # The command forks a grandchild that would outlive it (and metaeval) unless the
    # whole process group is killed on timeout.
    command = ["sh", "-c", f"sleep 60 & echo $! > {pid_file}; sleep 60"]
    judge = build_judge({"type": "command", "command": command, "timeout": 1})
    reply = judge.score("q", "a")
    assert reply.value is None and "timed out" in reply.reason
    pid = int(pid_file.read_text())
    try:
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
