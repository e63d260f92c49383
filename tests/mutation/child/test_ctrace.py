"""The baseline's recorder from coverage.py's C tracer records what the trace
function recorder does (the same functions, tests and lines), and the baseline's
tests' imports are preloaded in the warm process only when they start no thread."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.mutation.child.conftest import PRICES

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = r'''
import json, sys
sys.path[:0] = [ROOT, HERE]
from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.ctrace import LineRecorder, c_tracer

def record(line_recorder):
    watcher = CallRecorder(("shop",))
    watcher.start()
    import shop.prices as prices        # import time: seen by the trace function only
    watcher.stop()
    recorder = LineRecorder(watcher, c_tracer()) if line_recorder else watcher
    recorder.start()
    recorder.begin("t.py::test_loop")
    prices.total([1, 2, 3])
    recorder.end()
    recorder.begin("t.py::test_guard")
    prices.guard(-1)
    prices.guard(5)
    prices.total([])
    recorder.end()
    recorder.begin("t.py::test_gen")
    gen = prices.evens(4)
    next(gen)
    recorder.end()
    recorder.begin("t.py::test_gen_again")
    list(gen)
    recorder.end()
    recorder.begin("t.py::test_nothing")
    recorder.end()
    prices.guard(7)                     # between tests: no test's
    recorder.stop()
    runs = sorted([r.module, r.line, r.name, list(r.tests), [list(map(list, g)) for g in r.lines]]
                  for r in recorder.runs())
    for name in [m for m in sys.modules if m.startswith("shop")]:
        del sys.modules[name]
    return runs

print(json.dumps({"lines": record(True), "settrace": record(False)}))
'''


def test_thec_tracer_records_what_the_trace_function_records(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "prices.py").write_text(PRICES)
    script = SCRIPT.replace("ROOT", repr(str(ROOT))).replace("HERE", repr(str(tmp_path)))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["lines"] == found["settrace"]
    # Not two empty records: the loop's lines ran under their tests.
    total = next(r for r in found["lines"] if r[2] == "total")
    assert total[3] == ["t.py::test_guard", "t.py::test_loop"]
    assert {"t.py::test_gen", "t.py::test_gen_again"} <= {
        t for r in found["lines"] if r[2] == "evens" for t in r[3]}


PRELOAD = r'''
import sys
sys.path[:0] = [ROOT, HERE]
from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.fork.preload import preload

recorder = CallRecorder(("shop",))
recorder.start()
import shop.prices
recorder.stop()
done = preload(["shop.uses", "shop.missing", "json"], recorder)
print(done, "shop.uses" in sys.modules,
      sorted(m for c, ms in recorder.callers.items() if c.co_name == "guard" for m in ms))
print(preload(["shop.threads"], recorder), "shop.threads" in sys.modules)
'''


def test_preloading_imports_what_the_tests_did_unless_it_starts_a_thread(
        tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "prices.py").write_text(PRICES)
    # A module the tests import on first use, calling a function of the package.
    (tmp_path / "shop" / "uses.py").write_text("from shop.prices import guard\nSTATE = guard(1)\n")
    (tmp_path / "shop" / "threads.py").write_text(textwrap.dedent("""\
        import threading, time
        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
        """))
    script = PRELOAD.replace("ROOT", repr(str(ROOT))).replace("HERE", repr(str(tmp_path)))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    # json was imported already; a module that does not exist is left alone; the
    # call at shop.uses's import is recorded with its caller, as collection's are.
    assert first == "['shop.uses', 'shop.missing'] True ['shop.uses']"
    assert second == "[] False"


def test_records_are_written_as_asdict_would_write_them() -> None:
    # ``shallow`` and ``CodeRun.to_json`` replace dataclasses.asdict on the hot path
    # (a baseline holds thousands of records); the JSON must not change.
    from dataclasses import asdict

    from metaeval.mutation.fork.protocol import BaselinePart, WarmBaseline
    from metaeval.mutation.wire import CodeRun, shallow

    run = CodeRun("m", "f.py", 3, "g", ("t1", "t2"), (((3, 4), (0,)), ((5,), (0, 1))))
    assert json.dumps(run.to_json()) == json.dumps(asdict(run))
    part = BaselinePart(("x",), 2, (run, run), {"t": 1.0}, ("t",), ("u",), 1.5, ("mod",))
    assert json.dumps(shallow(part)) == json.dumps(asdict(part))
    baseline = WarmBaseline(("x",), 1, 2.0, (run,), ("t",), "", durations={"t": 1.0})
    assert json.dumps(shallow(baseline)) == json.dumps(asdict(baseline))
