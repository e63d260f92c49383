"""Judges backed by something outside metaeval: a Python callable, a command, an
OpenAI-compatible chat-completions endpoint.

Each renders the prompt templates of ``parse``, obtains reply text, and reads it
with the strict parser. A failed call (timeout, bad exit, HTTP error, exhausted
retries) is an unscored reply with the reason, never an exception and never a
value. The HTTP judge reads its API key from the environment at call time and
must never write it anywhere: not to its identity, a cache, a log or a report. It
follows no redirect (urllib would resend the key to wherever one points), and it
redacts the key from every text a server sends back before anyone keeps it.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

from metaeval.errors import InputError
from metaeval.judges.base import (
    DEFAULT_SCALE,
    CallInfo,
    JudgeIdentity,
    JudgeReply,
    Mode,
    Scale,
    unscored_reply,
)
from metaeval.judges.parse import (
    pairwise_prompt,
    pointwise_prompt,
    template_hash,
)
from metaeval.judges.reply import (
    JSON_REPLY,
    NO_TEMPLATES,
    ReplyRule,
    Templates,
    custom_hash,
    render,
)
from metaeval.untrusted_json import JsonInputError, parse_json


@dataclass(frozen=True, slots=True)
class Completion:
    """Reply text from a backend, or the reason there is none (``failure``)."""

    text: str
    call: CallInfo
    failure: str = ""


Backend = Callable[[str, int], Completion]
"""Prompt text and sample index in, completion out; never raises."""


def _reply(completion: Completion, read: Callable[[str], JudgeReply]) -> JudgeReply:
    if completion.failure:
        return unscored_reply(completion.failure, completion.text, completion.call)
    reply = read(completion.text)
    return JudgeReply(reply.value, reply.raw, reply.reason, completion.call,
                      reply.strength)


@dataclass(frozen=True, slots=True)
class PromptedJudge:
    """A judge that renders the templates and asks a text ``backend``."""

    name: str
    backend: Backend
    model: str = ""
    temperature: float = 0.0
    scale: Scale = DEFAULT_SCALE
    modes: frozenset[Mode] = frozenset(Mode)
    concurrency: int = 1
    endpoint: str = ""
    """Where the backend asks (see ``JudgeIdentity.endpoint``)."""
    templates: Templates = NO_TEMPLATES
    """The judge's own prompt per mode; metaeval's for a mode it does not give."""
    reply: ReplyRule = JSON_REPLY
    """How its replies are read."""

    @property
    def identity(self) -> JudgeIdentity:
        prompt = template_hash()
        if self.templates != NO_TEMPLATES or self.reply != JSON_REPLY:
            prompt = custom_hash(self.templates, self.reply, prompt)
        return JudgeIdentity(self.name, self.model, prompt, self.temperature, self.endpoint)

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        if Mode.POINTWISE not in self.modes:
            return unscored_reply(f"judge {self.name!r} does not score pointwise",
                                  call=CallInfo(called=False))
        if self.templates.pointwise is not None:
            text = render(self.templates.pointwise, {
                "prompt": prompt, "response": response, "reference": reference or "",
                "criterion": criterion})
        else:
            text = pointwise_prompt(prompt, response, reference, criterion, self.scale)
        return _reply(self.backend(text, sample),
                      lambda raw: self.reply.pointwise(raw, self.scale))

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        if Mode.PAIRWISE not in self.modes:
            return unscored_reply(f"judge {self.name!r} does not compare pairs",
                                  call=CallInfo(called=False))
        if self.templates.pairwise is not None:
            text = render(self.templates.pairwise, {
                "prompt": prompt, "response_a": response_a, "response_b": response_b})
        else:
            text = pairwise_prompt(prompt, response_a, response_b)
        return _reply(self.backend(text, sample), self.reply.pairwise)


# --- a Python callable ------------------------------------------------------------------


def callable_backend(function: Callable[[str], object]) -> Backend:
    """``function(prompt) -> str``; an exception or a non-string is a failed call."""

    def complete(prompt: str, sample: int) -> Completion:
        start = time.perf_counter()
        try:
            text = function(prompt)
        except Exception as e:  # the user's code failed; that is this call's result
            return Completion("", CallInfo(time.perf_counter() - start, failed=True),
                              f"callable raised {e!r}")
        info = CallInfo(time.perf_counter() - start)
        if not isinstance(text, str):
            return Completion("", CallInfo(info.latency_s, failed=True),
                              f"callable returned {text!r}; expected a string")
        return Completion(text, info)

    return complete


# --- a command ----------------------------------------------------------------------------


def _check(name: str, value: float, *, at_least: float, above: bool = False) -> None:
    """Raise ValueError unless ``value`` is finite and ``> at_least`` (``above``) or
    ``>= at_least``: a programming error, since a user's config is checked first."""
    if not math.isfinite(value) or (value <= at_least if above else value < at_least):
        raise ValueError(f"{name}: got {value!r}; expected a finite number "
                         f"{'>' if above else '>='} {at_least:g}")


def command_backend(command: tuple[str, ...], timeout_s: float) -> Backend:
    """Runs ``command`` once per call: ``{"prompt", "sample"}`` as JSON on stdin,
    the reply text on stdout. A non-zero exit or a timeout is a failed call."""
    _check("timeout_s", timeout_s, at_least=0, above=True)

    def complete(prompt: str, sample: int) -> Completion:
        request = json.dumps({"prompt": prompt, "sample": sample})
        start = time.perf_counter()
        try:
            # Its own session, so a timeout can kill everything it started: a
            # grandchild must not outlive the call (nor metaeval).
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True,
                                       start_new_session=True)
        except OSError as e:
            return Completion("", CallInfo(failed=True), f"command could not run: {e}")
        try:
            stdout, stderr = process.communicate(request, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            return Completion("", CallInfo(timeout_s, failed=True),
                              f"command timed out after {timeout_s:g}s")
        except BaseException:
            _kill_group(process)
            raise
        latency = time.perf_counter() - start
        if process.returncode != 0:
            return Completion(stdout, CallInfo(latency, failed=True),
                              f"command exited {process.returncode}: {stderr.strip()[:200]}")
        return Completion(stdout, CallInfo(latency))

    return complete


def _kill_group(process: subprocess.Popen[str]) -> None:
    """Kill the command and everything in its process group, then reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # already gone
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        # Something left the group (its own setsid) and holds the pipes open.
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        process.wait()


# --- an OpenAI-compatible chat-completions endpoint ---------------------------------------


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Where and how to call; ``api_key_env`` names the variable, never the key."""

    base_url: str
    model: str
    api_key_env: str = ""
    timeout_s: float = 60.0
    retries: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    concurrency: int = 4
    temperature: float = 0.0
    semaphore: threading.BoundedSemaphore = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        _check("timeout_s", self.timeout_s, at_least=0, above=True)
        _check("retries", self.retries, at_least=0)
        _check("backoff_s", self.backoff_s, at_least=0)
        _check("max_backoff_s", self.max_backoff_s, at_least=0)
        _check("concurrency", self.concurrency, at_least=1)
        _check("temperature", self.temperature, at_least=0)
        object.__setattr__(self, "semaphore", threading.BoundedSemaphore(self.concurrency))


REDACTED = "[redacted]"
"""What stands in for the API key in any text a server sent back."""


def _key_problem(env: str, key: str) -> str:
    """Why the key in ``$env`` cannot be sent, or "" when it can. Never quotes the
    key: a trailing newline (``echo key > file``) would otherwise end up in
    http.client's "Invalid header value" and from there in a report."""
    bad = [c for c in key if c.isspace() or not c.isprintable()]
    if not bad:
        return ""
    where = "ends with" if key and key[-1] in bad else "holds"
    return (f"the API key in ${env} {where} whitespace or a control character "
            f"({len(bad)} of {len(key)} characters, e.g. {bad[0]!r}); expected the key alone "
            "(strip the newline a file or an echo added)")


def check_key(settings: HttpSettings) -> None:
    """Refuse (``InputError``) the key ``api_key_env`` names when it holds whitespace
    or a control character, before any call is built; an unset variable is left to
    the calls (they go without a key, as the server decides)."""
    if settings.api_key_env:
        why = _key_problem(settings.api_key_env, os.environ.get(settings.api_key_env, ""))
        if why:
            raise InputError(why)


def redact(text: str, key: str) -> str:
    """``text`` with every copy of ``key`` (plain or JSON-escaped) replaced by
    ``REDACTED``: a server that echoes the key must not get it into a cache,
    a report or an error message."""
    if not key:
        return text
    for form in (key, json.dumps(key)[1:-1]):
        text = text.replace(form, REDACTED)
    return text


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """Follow no redirect, even on the same origin: urllib resends every header,
    the key included, to wherever a Location points. A refused redirect reaches
    the caller as an HTTPError with the 3xx status."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int,
                         msg: str, headers: http.client.HTTPMessage, newurl: str
                         ) -> urllib.request.Request | None:
        return None


_OPENER = urllib.request.build_opener(_RefuseRedirects)


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    text: str
    retry_after: str | None = None
    location: str = ""


def _retry_after(value: str | None, default: float) -> float:
    """Seconds to wait before the next try: the server's Retry-After (seconds, or
    an HTTP-date) when it says something usable, else ``default``. Never raises:
    the header is whatever the server sent, nan, -1 and 1e400 included. The
    caller caps the result."""
    if value is None:
        return default
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return default
        if when.tzinfo is None:  # RFC 9110 dates are GMT
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return seconds if math.isfinite(seconds) and seconds >= 0 else default


def http_backend(settings: HttpSettings) -> Backend:
    """POST ``{base_url}/chat/completions``; retries 429 and 5xx with exponential
    backoff (or the server's Retry-After, capped); at most ``concurrency`` calls at
    once. Everything else that goes wrong is a failed call with the reason."""
    url = settings.base_url.rstrip("/") + "/chat/completions"

    def attempt(body: bytes, key: str) -> _Answer:
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(url, body, headers, method="POST")
        try:
            with _OPENER.open(request, timeout=settings.timeout_s) as response:
                return _Answer(response.status, response.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            return _Answer(e.code, text, e.headers.get("Retry-After"),
                           e.headers.get("Location") or "")

    def complete(prompt: str, sample: int) -> Completion:
        body = json.dumps({"model": settings.model, "temperature": settings.temperature,
                           "seed": sample,
                           "messages": [{"role": "user", "content": prompt}]}).encode()
        key = os.environ.get(settings.api_key_env, "") if settings.api_key_env else ""
        start = time.perf_counter()
        why = _key_problem(settings.api_key_env, key)
        if why:  # changed since check_key ran: the call is not built, the key not sent
            return Completion("", CallInfo(failed=True), why)
        delay = settings.backoff_s
        answer = _Answer(0, "")
        with settings.semaphore:
            for tries in range(settings.retries + 1):
                try:
                    answer = attempt(body, key)
                except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
                    return Completion("", CallInfo(time.perf_counter() - start, failed=True),
                                      redact(f"request to {url} failed: {e}", key))
                except ValueError as e:  # a header http.client refuses; its text quotes it
                    return Completion("", CallInfo(time.perf_counter() - start, failed=True),
                                      f"request to {url} could not be built "
                                      f"({type(e).__name__}; a header value was refused)")
                if answer.status != 429 and answer.status < 500:
                    break
                if tries < settings.retries:
                    time.sleep(min(_retry_after(answer.retry_after, delay),
                                   settings.max_backoff_s))
                    delay *= 2
        latency = time.perf_counter() - start
        text = redact(answer.text, key)
        if 300 <= answer.status < 400:
            location = _shorten(redact(answer.location, key))
            return Completion(text[:500], CallInfo(latency, failed=True),
                              f"HTTP {answer.status} redirect from {url} to {location!r} not "
                              "followed (a redirect could carry the API key elsewhere); set "
                              "base_url to where the endpoint really is")
        if answer.status != 200:
            return Completion(text[:500], CallInfo(latency, failed=True),
                              f"HTTP {answer.status} from {url} after {tries + 1} attempt(s)")
        return _read_chat(text, latency, key)

    return complete


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read_chat(text: str, latency: float, key: str) -> Completion:
    try:
        # Any, as json.loads gave: the lookups below are checked by the except clause.
        document: Any = parse_json(text)  # a body nested too deep is no chat completion
        content = document["choices"][0]["message"]["content"]
    except (JsonInputError, KeyError, IndexError, TypeError):
        return Completion(text[:500], CallInfo(latency, failed=True),
                          "endpoint reply is not a chat completion")
    usage = document.get("usage") if isinstance(document, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    prompt_tokens = usage.get("prompt_tokens")
    completion_tokens = usage.get("completion_tokens")
    info = CallInfo(latency,
                    prompt_tokens if isinstance(prompt_tokens, int) else None,
                    completion_tokens if isinstance(completion_tokens, int) else None)
    if not isinstance(content, str):
        return Completion("", CallInfo(latency, failed=True),
                          f"endpoint message content is {_shorten(redact(repr(content), key))}; "
                          "expected "
                          "a string")
    # Redacted again after decoding: JSON may have spelled the key with escapes.
    return Completion(redact(content, key), info)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def endpoint_of(base_url: str) -> str:
    """``base_url`` normalised for a judge's identity: scheme and host lower-cased,
    a default port and trailing slashes dropped. Raises ValueError (without
    echoing the URL, which may hold a secret) for a URL that is not plain
    ``http(s)://host[:port]/path``: credentials, a query or a fragment have no
    place in a judge's address, and would be written into its identity."""
    try:
        parts = urllib.parse.urlsplit(base_url)
        port = parts.port
    except ValueError as e:
        raise ValueError(f"is not a URL ({e})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError("expected an http(s) URL: http(s)://host[:port]/path")
    if parts.username is not None or parts.password is not None:
        raise ValueError("holds credentials (user:password@); put the key in an "
                         "environment variable and name it in 'api_key_env'")
    if parts.query or parts.fragment or base_url.rstrip().endswith(("?", "#")):
        raise ValueError("has a query or a fragment; expected http(s)://host[:port]/path")
    host = parts.hostname or ""
    if not host:
        raise ValueError("names no host; expected http(s)://host[:port]/path")
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def http_judge(settings: HttpSettings, *, name: str = "openai-compatible",
               scale: Scale = DEFAULT_SCALE) -> PromptedJudge:
    """The judge at ``settings.base_url``; ``InputError`` when the key it would send
    holds whitespace or a control character (``check_key``)."""
    check_key(settings)
    return PromptedJudge(name, http_backend(settings), settings.model, settings.temperature,
                         scale, concurrency=settings.concurrency,
                         endpoint=endpoint_of(settings.base_url))
