"""The ``sys.monitoring`` recorder (Python 3.12+) records what the trace-function
recorder does: the same functions, tests, lines and import-time callers. Run in
an interpreter of 3.12 or later: this one, else one found beside it (pyenv and
asdf keep versions side by side), else skipped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.monitor import recorder_for
from tests.mutation.child.conftest import PRICES

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = r'''
import json, sys
sys.path[:0] = [ROOT, HERE]
from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.monitor import MonitorRecorder, recorder_for

def record(recorder):
    recorder.start()
    import shop.prices as prices        # import time: callers and importers
    recorder.begin("t.py::test_loop")
    prices.total([1, 2, 3])             # a loop: every line once in the record
    recorder.end()
    recorder.begin("t.py::test_guard")
    prices.guard(-1)
    prices.guard(5)
    prices.total([])                    # again, under another test: its lines again
    recorder.end()
    recorder.begin("t.py::test_gen")
    gen = prices.evens(4)
    next(gen)                           # a generator started under one test...
    recorder.end()
    recorder.begin("t.py::test_gen_again")
    list(gen)                           # ...and resumed under the next
    recorder.end()
    recorder.stop()
    runs = sorted([r.module, r.line, r.name, list(r.tests), [list(map(list, g)) for g in r.lines]]
                  for r in recorder.runs())
    callers = sorted([c.co_name, sorted(m)] for c, m in recorder.callers.items())
    for name in [m for m in sys.modules if m.startswith("shop")]:
        del sys.modules[name]
    return {"runs": runs, "callers": callers,
            "importers": {k: v for k, v in recorder.importers.items() if k.startswith("shop")}}

monitor = recorder_for(("shop",))
assert isinstance(monitor, MonitorRecorder), type(monitor)
print(json.dumps({"monitor": record(monitor), "settrace": record(CallRecorder(("shop",)))}))
'''



def newer_python() -> str | None:
    """An interpreter of Python 3.12 or later: this one, or one beside it."""
    if sys.version_info >= (3, 12):
        return sys.executable
    versions = Path(sys.base_prefix).parent
    for candidate in sorted(versions.glob("3.1[2-9]*/bin/python3"), reverse=True):
        done = subprocess.run([str(candidate), "-c",
                               "import sys; print(sys.version_info >= (3, 12))"],
                              capture_output=True, text=True, timeout=30)
        if done.stdout.strip() == "True":
            return str(candidate)
    return None


def test_both_recorders_record_the_same_functions_tests_lines_and_callers(
        tmp_path: Path) -> None:
    python = newer_python()
    if python is None:
        pytest.skip("no Python 3.12 or later here for sys.monitoring")
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "shop" / "prices.py").write_text(PRICES, encoding="utf-8")
    script = SCRIPT.replace("ROOT", repr(str(ROOT))).replace("HERE", repr(str(tmp_path)))
    env = {k: v for k, v in os.environ.items() if k != "METAEVAL_RECORDER"}
    done = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=60,
                          env=env)
    assert done.returncode == 0, done.stderr
    both = json.loads(done.stdout)
    monitor, settrace = both["monitor"], both["settrace"]
    assert monitor == settrace
    # And the record says what happened: the loop's lines under test_loop, the
    # guard's refusing branch under test_guard, the generator under test_gen.
    total = next(r for r in monitor["runs"] if r[2] == "total")
    assert "t.py::test_loop" in total[3]
    guard = next(r for r in monitor["runs"] if r[2] == "guard")
    assert guard == [guard[0], 8, "guard", ["t.py::test_guard"], [[[9, 10, 11], [0]]]]
    evens = next(r for r in monitor["runs"] if r[2] == "evens")
    assert evens[3] == ["t.py::test_gen", "t.py::test_gen_again"]
    assert total[3] == ["t.py::test_guard", "t.py::test_loop"]
    assert ["total", ["shop.prices"]] in monitor["callers"]  # called by LIMIT's line


def test_this_interpreter_gets_the_cheapest_recorder(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = recorder_for(("shop",))
    assert (type(chosen) is CallRecorder) == (sys.version_info < (3, 12))
    monkeypatch.setenv("METAEVAL_RECORDER", "settrace")
    assert type(recorder_for(("shop",))) is CallRecorder
