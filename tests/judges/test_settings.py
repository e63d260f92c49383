"""Every number a judge is configured with is checked where it is read, and a
server's Retry-After never raises out of the backend, whatever it says."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.errors import InputError
from metaeval.judges.adapters import HttpSettings, _retry_after, command_backend, http_judge
from metaeval.judges.spec import build_judge

from .conftest import Stub

NAN, INF = float("nan"), float("inf")


def _http(**extra: object) -> dict[str, object]:
    return {"type": "http", "base_url": "http://127.0.0.1:9/v1", "model": "m", **extra}


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("timeout", -1, "a finite number > 0"),
    ("timeout", 0, "a finite number > 0"),
    ("timeout", NAN, "a finite number > 0"),
    ("timeout", INF, "a finite number > 0"),
    ("timeout", "60", "a finite number > 0"),
    ("retries", -1, "an integer >= 0"),
    ("retries", 1.5, "an integer >= 0"),
    ("retries", True, "an integer >= 0"),
    ("backoff", -0.5, "a finite number >= 0"),
    ("backoff", NAN, "a finite number >= 0"),
    ("backoff", INF, "a finite number >= 0"),
    ("concurrency", 0, "an integer >= 1"),
    ("concurrency", -3, "an integer >= 1"),
    ("temperature", -0.1, "a finite number >= 0"),
    ("temperature", NAN, "a finite number >= 0"),
    ("temperature", INF, "a finite number >= 0"),
])
def test_an_http_judge_number_out_of_range_is_refused(key: str, value: object,
                                                      expected: str) -> None:
    with pytest.raises(InputError) as info:
        build_judge(_http(**{key: value}), where="tool.metaeval.judges.house")
    assert str(info.value) == (f"tool.metaeval.judges.house.{key}: got {value!r}; "
                               f"expected {expected}")


@pytest.mark.parametrize("value", [-1, 0, NAN, INF, -INF])
def test_a_command_judge_timeout_out_of_range_is_refused(value: float) -> None:
    with pytest.raises(InputError, match=r"\.timeout: got .*; expected a finite number > 0"):
        build_judge({"type": "command", "command": ["true"], "timeout": value})


@pytest.mark.parametrize(("key", "value"), [("type", ["http"]), ("modes", [["pointwise"]]),
                                            ("modes", [{}])])
def test_a_list_where_a_name_belongs_is_refused(key: str, value: object) -> None:
    # A list is no dict key nor set member: TypeError (found by tests/fuzz).
    with pytest.raises(InputError, match=rf"tool\.metaeval\.judges\.house\.{key}: got "):
        build_judge(_http(**{key: value}), where="tool.metaeval.judges.house")


def test_numbers_in_range_are_accepted() -> None:
    judge = build_judge(_http(timeout=0.5, retries=0, backoff=0, concurrency=1,
                              temperature=0.7))
    assert judge.identity.temperature == 0.7
    assert build_judge({"type": "command", "command": ["true"], "timeout": 0.01})


@pytest.mark.parametrize(("field", "value"), [
    ("timeout_s", 0.0), ("timeout_s", NAN), ("retries", -1), ("backoff_s", NAN),
    ("max_backoff_s", -1.0), ("concurrency", 0), ("temperature", INF),
])
def test_http_settings_refuse_what_the_backend_cannot_use(field: str, value: object) -> None:
    # retries=-1 used to pass here and raise UnboundLocalError at the first call.
    with pytest.raises(ValueError, match=field):
        HttpSettings("http://127.0.0.1:9/v1", "m", **{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0.0, -1.0, NAN, INF])
def test_command_backend_refuses_a_timeout_it_cannot_use(value: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        command_backend(("true",), value)


def test_a_nan_timeout_in_pyproject_is_a_clear_error_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metaeval.judges.house]\ntype = "http"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "m"\ntimeout = nan\n')
    items = tmp_path / "items.ndjson"
    items.write_text('{"id": "p", "prompt": "q", "response": "r", "label": "pass"}\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["judge-audit", "--judge", "house", "--items",
                                       str(items), "--no-cache"])
    assert result.exit_code == 2
    assert "tool.metaeval.judges.house.timeout: got nan; expected a finite number > 0" \
        in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("header", ["nan", "-1", "inf", "-inf", "1e400", "1e9", "soon", "",
                                    "Wed, 21 Oct 2015 07:28:00 GMT",
                                    "Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 99 Foo 2015"])
def test_any_retry_after_waits_a_bounded_time_then_retries(stub: Stub, header: str) -> None:
    stub.script = [(429, "busy"), (200, "4")]
    stub.retry_after = header
    judge = http_judge(HttpSettings(stub.url, "m", timeout_s=5, retries=2, backoff_s=0.001,
                                    max_backoff_s=0.05))
    start = time.perf_counter()
    reply = judge.score("q", "an answer")
    assert reply.value == 4.0, reply.reason
    assert len(stub.requests) == 2
    assert time.perf_counter() - start < 3  # capped at max_backoff_s, not the header's 1e9


@pytest.mark.parametrize(("header", "seconds"), [
    ("2.5", 2.5), ("0", 0.0), (None, 0.25), ("nan", 0.25), ("-1", 0.25), ("inf", 0.25),
    ("1e400", 0.25), ("soon", 0.25), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
])
def test_retry_after_is_read_or_falls_back_to_the_backoff(header: str | None,
                                                          seconds: float) -> None:
    assert _retry_after(header, 0.25) == seconds


def test_retry_after_as_an_http_date_is_the_time_until_then() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    wait = _retry_after(when, 0.25)
    assert math.isfinite(wait) and 100 < wait <= 120
