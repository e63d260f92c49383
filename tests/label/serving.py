"""``metaeval label`` started as a user starts it, in a process of its own, for the
browser tests and the screenshot: its URL read from what it prints."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

METAEVAL = str(Path(sys.executable).parent / "metaeval")


def start_label(*args: str, cwd: Path) -> tuple[subprocess.Popen[str], str]:
    """The server process and the URL it printed (with its token)."""
    process = subprocess.Popen([METAEVAL, "label", *args, "--no-browser"], cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if line.startswith("open http://"):
            return process, line.split()[1]
    process.kill()
    _, errors = process.communicate(timeout=10)
    raise RuntimeError(f"metaeval label printed no URL: {errors}")
