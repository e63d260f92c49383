"""An HTTP judge's identity is where it points: its config name, endpoint and model.

Two judges that differ only by base_url must never share cached replies or a
calibration entry (a dead staging URL was served the production judge's replies).
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from metaeval.audit.calibration import calibration_for, entry
from metaeval.audit.collect import VerdictTable
from metaeval.audit.controls import Controls
from metaeval.audit.judge_decision import AuditSource, audit_judge
from metaeval.config import load_config
from metaeval.errors import InputError
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity
from metaeval.judges.cache import CachedJudge, ReplyCache
from metaeval.judges.spec import build_judge
from metaeval.loaders.judge_items import JudgeItems

from .conftest import Stub


def _table(url: str, **extra: object) -> dict[str, object]:
    return {"type": "http", "base_url": url, "model": "stub-model", "retries": 0, **extra}


def test_judges_at_two_endpoints_never_share_cached_replies(
        stub: Stub, other_stub: Stub, tmp_path: Path) -> None:
    stub.script, other_stub.script = [(200, "5")], [(200, "2")]
    path = tmp_path / "cache.sqlite"
    first = CachedJudge(build_judge(_table(stub.url)), ReplyCache(path))
    assert first.score("q", "an answer").value == 5.0
    second = CachedJudge(build_judge(_table(other_stub.url)), ReplyCache(path))
    reply = second.score("q", "an answer")
    assert reply.value == 2.0 and not reply.call.cached
    assert len(stub.requests) == 1 and len(other_stub.requests) == 1
    # The same endpoint again is the same judge: served from the cache.
    again = CachedJudge(build_judge(_table(stub.url)), ReplyCache(path)).score("q", "an answer")
    assert again.call.cached and again.value == 5.0 and len(stub.requests) == 1


def test_endpoint_and_model_are_part_of_the_version(stub: Stub) -> None:
    here = build_judge(_table(stub.url)).identity
    assert here.endpoint == stub.url
    assert build_judge(_table("http://127.0.0.1:9/v1")).identity.version != here.version
    other_model = build_judge({**_table(stub.url), "model": "another-model"}).identity
    assert other_model.version != here.version
    assert stub.url in here.describe()


@pytest.mark.parametrize(("one", "two"), [
    ("http://judge.example:8000/v1", "HTTP://Judge.Example:8000/v1/"),
    ("http://judge.example/v1", "http://judge.example:80/v1"),
    ("https://judge.example/v1", "https://judge.example:443/v1//"),
])
def test_spellings_of_one_endpoint_are_one_judge(one: str, two: str) -> None:
    assert build_judge(_table(one)).identity == build_judge(_table(two)).identity


@pytest.mark.parametrize(("one", "two"), [
    ("http://judge.example/v1", "https://judge.example/v1"),
    ("http://judge.example:8000/v1", "http://judge.example:8001/v1"),
    ("http://judge.example/v1", "http://judge.example/v2"),
])
def test_different_endpoints_are_different_judges(one: str, two: str) -> None:
    assert build_judge(_table(one)).identity.version != build_judge(_table(two)).identity.version


@pytest.mark.parametrize("url", ["http://user:sk-secret@judge.example/v1",
                                 "http://judge.example/v1?key=sk-secret",
                                 "http://judge.example/v1#frag", "http://:80/v1"])
def test_a_base_url_that_could_hold_a_secret_or_names_no_host_is_refused(url: str) -> None:
    with pytest.raises(InputError, match="base_url") as info:
        build_judge(_table(url))
    assert "sk-secret" not in str(info.value)


def test_a_configured_judge_is_named_by_its_key(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.judges.staging]\n"
        'type = "http"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
        "[tool.metaeval.judges.prod]\n"
        'type = "http"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
        "[tool.metaeval.judges.named]\n"
        'type = "http"\nname = "house"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    monkeypatch.chdir(tmp_path)
    judges = load_config().judges
    staging = build_judge("staging", judges=judges).identity
    prod = build_judge("prod", judges=judges).identity
    assert (staging.name, prod.name) == ("staging", "prod")
    assert staging.version != prod.version
    assert build_judge("named", judges=judges).identity.name == "house"  # an explicit name wins


def test_a_calibration_entry_names_the_endpoint_and_applies_to_it_alone(tmp_path: Path) -> None:
    prod = JudgeIdentity("house", "m", "abc", 0.0, "https://judge.example/v1")
    staging = JudgeIdentity("house", "m", "abc", 0.0, "https://staging.example/v1")
    audit = audit_judge(prod, DEFAULT_SCALE, JudgeItems(), VerdictTable(),
                        source=AuditSource.LIVE,
                        controls=Controls(()))
    written = entry(audit, date(2026, 1, 1))
    assert written["judge"] == {"name": "house", "model": "m", "prompt_hash": "abc",
                                "temperature": 0.0, "endpoint": "https://judge.example/v1",
                                "version": prod.version}
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"format_version": 1, "entries": [written]}))
    assert calibration_for(path, prod) is not None
    assert calibration_for(path, staging) is None


def test_a_judge_without_an_endpoint_keeps_its_version() -> None:
    # Fakes and python judges have no endpoint: their versions (and calibration
    # entries already written) do not change.
    assert JudgeIdentity("steady", "fake").version == "9248cd433b7d"


def test_two_command_judges_are_told_apart_by_their_command() -> None:
    one = build_judge({"type": "command", "command": ["python", "judge_a.py"]}).identity
    two = build_judge({"type": "command", "command": ["python", "judge_b.py"]}).identity
    assert one.name == two.name == "command"
    assert one.endpoint == "python judge_a.py" and one.version != two.version
