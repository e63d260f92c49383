"""Headless Chromium driven over the DevTools protocol, for the report pages' tests
and screenshots.

One Chromium per ``Browser``, with a fresh profile, no network (every host is
routed to a closed port, so a page that fetched anything would show it), and
the flags that keep it from calling home. A page is opened, its scripts run,
and JavaScript evaluated in it returns plain values; the shadow roots of a web
component are reachable from there, which ``--dump-dom`` does not show.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from base64 import b64decode
from pathlib import Path
from typing import Any

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--proxy-server=127.0.0.1:9", "--hide-scrollbars", "--remote-debugging-port=0")

DEEP_TEXT = """
(() => {
  const out = [];
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) { out.push(node.textContent); return; }
    if (node.nodeName === "SCRIPT" || node.nodeName === "STYLE") return;
    if (node.shadowRoot) walk(node.shadowRoot);
    for (const child of node.childNodes) walk(child);
  };
  walk(document.body);
  return out.join(" ").replace(/\\s+/g, " ");
})()
"""
"""Every text of the page, inside shadow roots too, in document order."""


def chromium() -> str | None:
    """The Chromium binary on PATH, if any."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """A headless Chromium showing one page; ``close`` ends it and removes its profile."""

    def __init__(self, binary: str, url: str, *, width: int = 1200, height: int = 900) -> None:
        import websocket

        self.profile = Path(tempfile.mkdtemp(prefix="metaeval-chromium-"))
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.next_id = 0
        try:
            port = self._port()
            pages: list[dict[str, Any]] = []
            deadline = time.monotonic() + 30
            while not pages and time.monotonic() < deadline:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                            timeout=5) as answer:
                    pages = [t for t in json.load(answer) if t["type"] == "page"]
                time.sleep(0.1)
            self.socket = websocket.create_connection(pages[0]["webSocketDebuggerUrl"],
                                                      timeout=30, suppress_origin=True)
            # Opened here, not on the command line: then the page asked about is the
            # one loaded, never the blank one before it.
            self.send("Page.navigate", url=url)
            # The viewer may set a #fragment of its own once it runs.
            self.wait_for(f'location.href.split("#")[0] === {json.dumps(url.split("#")[0])}'
                          ' && document.readyState === "complete"')
        except BaseException:
            self.close()
            raise

    def _port(self) -> int:
        active = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if active.is_file() and active.read_text().strip():
                return int(active.read_text().splitlines()[0])
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            time.sleep(0.05)
        raise TimeoutError("chromium did not open its DevTools port in 30 s")

    def send(self, method: str, **params: Any) -> Any:
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression: str) -> Any:
        """The value of ``expression`` in the page (a promise is awaited)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20) -> Any:
        """Poll ``expression`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"never true in {timeout} s: {expression}")

    def text(self) -> str:
        """All the text the page shows, shadow roots included."""
        return str(self.evaluate(DEEP_TEXT))

    def screenshot(self, path: Path, *, width: int = 1200) -> None:
        """The whole page, ``width`` CSS pixels wide, as a PNG."""
        height = int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)"))
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        shot = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(b64decode(shot["data"]))

    def close(self) -> None:
        if getattr(self, "socket", None) is not None:
            self.socket.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@pytest.fixture(scope="module")
def binary() -> str:
    """The Chromium binary; a skip without it (or without websocket-client), a
    failure when ``METAEVAL_REQUIRE_BROWSER`` is set, as in CI."""
    found = chromium()
    missing = None
    if found is None:
        missing = "Chromium is not installed (apt-get install chromium)"
    else:
        try:
            import websocket  # noqa: F401
        except ImportError:
            missing = "websocket-client is not installed (pip install -e '.[dev]')"
    if missing is not None:
        if os.environ.get("METAEVAL_REQUIRE_BROWSER"):
            pytest.fail(f"METAEVAL_REQUIRE_BROWSER is set but {missing}")
        pytest.skip(missing)
    assert found is not None
    return found
