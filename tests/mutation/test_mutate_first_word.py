"""End to end: `metaeval mutate` says what it does within seconds, and keeps saying it.

Before the first mutant a run imports, finds the mutants, collects and traces
the baseline: on a slow suite that was a silent minute. In a CI log (stderr not
a terminal) the first line must come within 2 s of the start, and one at least
every 10 s until the mutants run, the baseline's counted in tests.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from textwrap import dedent

import pytest

METAEVAL = str(Path(sys.executable).parent / "metaeval")
FIRST = 2.0
EVERY = 10.0
TESTS = 8
SLEEP = 1.6
"""Each slow test's seconds: the baseline, one job, takes about 13 s."""

SLOW_TESTS = dedent(f"""\
    import time

    import pytest

    from calc import double


    @pytest.mark.parametrize("n", range({TESTS}))
    def test_slow(n):
        time.sleep({SLEEP})


    def test_double():
        assert double(2) == 4
    """)


# A whole mutate run (seconds of wall time): in CI's slow step, not the README's run.
@pytest.mark.slow
def test_a_log_hears_within_2_s_and_every_10_s_until_the_first_mutant(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n',
                                             encoding="utf-8")
    (tmp_path / "calc.py").write_text("def double(x):\n    return x * 2\n", encoding="utf-8")
    (tmp_path / "test_calc.py").write_text(SLOW_TESTS, encoding="utf-8")
    started = time.monotonic()
    proc = subprocess.Popen([METAEVAL, "mutate", "calc.py", "--jobs", "1", "--no-cache"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.monotonic() - started, line.rstrip("\n")))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        proc.wait(timeout=90)
    finally:
        proc.kill()
        reader.join()
        assert proc.stderr is not None
        proc.stderr.close()
    said = "\n".join(f"{t:5.1f} {line}" for t, line in lines)
    assert lines and lines[0][0] < FIRST, said
    steps = [(t, line) for t, line in lines if line.startswith("metaeval mutate: ")
             and "mutants done" not in line]
    tracing = [t for t, line in steps if "tracing the baseline" in line]
    # The step is named, and the baseline counted in tests of the tests collected.
    assert any(re.search(r"tracing the baseline: \d+/9 tests", line) for _, line in steps), said
    prepared = next(t for t, line in steps if "preparing the mutants" in line)
    assert tracing and prepared - tracing[0] > EVERY, said  # a baseline worth hearing from
    times = [t for t, _ in steps if t <= prepared]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert max(gaps) <= EVERY, said
    # A log gets whole lines, never a terminal's carriage returns.
    assert not any("\r" in line or "\x1b" in line for _, line in lines), said
