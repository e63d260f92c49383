"""The baseline's probes record what a trace function records (every line a test
ran, more at most), keep the code's behaviour and line numbers, follow modules
imported while the tests run, and give way to a tracer when a module cannot be
probed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.mutation.child.conftest import PRICES

ROOT = Path(__file__).resolve().parents[3]

SHAPES = '''\
"""Statements whose lines a probe before each statement could miss."""
from __future__ import annotations

import contextlib


def header(a, b):
    if (a and
            b): return "both"
    return "not both"


def handlers(kind):
    try:
        raise kind("x")
    except (KeyError,
            IndexError):
        return "lookup"
    except ValueError:
        return "value"


def matching(value):
    match value:
        case {"kind": "a"}:
            return 1
        case [x, y] if (x >
                        y):
            return 2
        case _:
            return 3


def looping(n):
    found = []
    while (n >
           0):
        n -= 1
        if n % 2:
            continue
        found.append(n)
    return found


def nested(xs):
    def double(x):
        """Only a docstring and a return."""
        return x * 2

    class Box:
        size = len(xs)

        def get(self):
            return [double(x) for x in xs]
    return sorted(Box().get(), key=lambda v: -v)


@contextlib.contextmanager
def managed(log):
    log.append("in")
    yield
    log.append("out")


def only_docstring():
    """Nothing else."""


def raises():
    x = 1
    raise RuntimeError(x)


def lazy():
    from shop import later
    return later.LATER + later.twice(2)
'''

LATER = '''\
LATER = 10


def twice(n):
    return n * 2
'''

SCRIPT = r'''
import json, sys, traceback
sys.path[:0] = [ROOT, HERE]
from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.ctrace import OWN_FILES
from metaeval.mutation.child.line_probes import ProbeRecorder

TESTS = {
    "t::prices": lambda p, s: (p.total([1, 2]), p.guard(-1), list(p.evens(3))),
    "t::header": lambda p, s: (s.header(1, 0), s.header(0, 1)),
    "t::handlers": lambda p, s: (s.handlers(ValueError), s.handlers(IndexError)),
    "t::matching": lambda p, s: (s.matching([1, 2]), s.matching({"kind": "a"})),
    "t::looping": lambda p, s: s.looping(4),
    "t::nested": lambda p, s: s.nested([1, 3]),
    "t::managed": lambda p, s: s.managed([]).__enter__(),
    "t::docstring": lambda p, s: s.only_docstring(),
    "t::lazy": lambda p, s: s.lazy(),
    # A generator resumed by a later test goes round its loop's header there.
    "t::gen": lambda p, s: next(STATE.setdefault("gen", p.evens(4))),
    "t::gen_again": lambda p, s: list(STATE.pop("gen")),
}
STATE = {}

def record(kind):
    watcher = CallRecorder(("shop",))
    watcher.start()
    import shop.prices as prices, shop.shapes as shapes
    watcher.stop()
    recorder = watcher
    if kind == "probes":
        recorder = ProbeRecorder(watcher, OWN_FILES)
        assert recorder.prepare() == ""
    recorder.start()
    results = {}
    for name, test in TESTS.items():
        recorder.begin(name)
        results[name] = repr(test(prices, shapes))
        recorder.end()
    try:
        shapes.raises()
    except RuntimeError as e:
        results["traceback"] = [f.lineno for f in traceback.extract_tb(e.__traceback__)][1:]
    intact = recorder.intact()
    recorder.stop()
    runs = {}
    for r in recorder.runs():
        for numbers, tests in r.lines:
            for n in numbers:
                runs.setdefault(f"{r.module}:{n}", []).extend(r.tests[i] for i in tests)
        runs.setdefault(f"{r.module}:{r.name}@{r.line}", []).extend(r.tests)
    for name in [m for m in sys.modules if m.startswith("shop")]:
        del sys.modules[name]
    return {"runs": {k: sorted(set(v)) for k, v in runs.items()}, "results": results,
            "intact": intact}

print(json.dumps({"probes": record("probes"), "settrace": record("settrace")}))
'''


def _run(tmp_path: Path, script: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _shop(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "prices.py").write_text(PRICES)
    (tmp_path / "shop" / "shapes.py").write_text(SHAPES)
    (tmp_path / "shop" / "later.py").write_text(LATER)


def test_probes_record_every_line_the_trace_function_records(tmp_path: Path) -> None:
    _shop(tmp_path)
    script = SCRIPT.replace("ROOT", repr(str(ROOT))).replace("HERE", repr(str(tmp_path)))
    found = _run(tmp_path, script)
    probes, traced = found["probes"], found["settrace"]
    # The probed code computes what the original does, with the same line numbers.
    assert probes["results"] == traced["results"]
    raising = SHAPES.splitlines().index("    raise RuntimeError(x)") + 1
    assert probes["results"]["traceback"] == [raising]
    missed = {key: sorted(set(tests) - set(probes["runs"].get(key, [])))
              for key, tests in traced["runs"].items()
              if set(tests) - set(probes["runs"].get(key, []))}
    assert missed == {}
    # Not two empty records: the lines a probe placed naively would miss are there.
    runs = probes["runs"]
    assert runs[f"shop.shapes:{_at('b): return')}"] == ["t::header"]    # a header's 2nd line
    assert runs[f"shop.shapes:{_at('IndexError):')}"] == ["t::handlers"]  # a handler passed by
    assert "t::matching" in runs[f"shop.shapes:{_at('            y):')}"]  # a guard's 2nd line
    assert runs[f"shop.shapes:{_at('           0):')}"] == ["t::looping"]  # a loop's header
    assert runs["shop.later:5"] == ["t::lazy"]                           # imported under a test
    assert runs[f"shop.shapes:only_docstring@{_at('def only_docstring')}"] == ["t::docstring"]
    assert "t::nested" in runs[f"shop.shapes:get@{_at('def get')}"]
    loop = PRICES.splitlines().index("    for i in range(n):") + 1
    assert "t::gen_again" in runs[f"shop.prices:{loop}"]
    assert probes["intact"] is True


def _at(text: str) -> int:
    return next(n for n, line in enumerate(SHAPES.splitlines(), 1) if text in line)


FALLBACK = r'''
import os, py_compile, sys
sys.path[:0] = [ROOT, HERE]
from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.ctrace import LineRecorder
from metaeval.mutation.child.line_probes import ProbeRecorder
from metaeval.mutation.fork.baseline import baseline_recorder

watcher = CallRecorder(("shop",))
watcher.start()
import shop.prices
watcher.stop()
print(type(baseline_recorder(watcher)).__name__)
os.environ["METAEVAL_RECORDER"] = "ctrace"
print(type(baseline_recorder(watcher)).__name__)
del os.environ["METAEVAL_RECORDER"]

# A module imported while the tests run with no source to probe: the record goes
# blind from then on, and says so.
recorder = baseline_recorder(watcher)
recorder.start()
recorder.begin("t::before")
recorder.end()
print(recorder.intact())
recorder.begin("t::sourceless")
import shop.compiled
recorder.end()
print(recorder.intact(), shop.compiled.VALUE)

# The file no longer holds the code that was imported: nothing to pair it with.
with open(shop.prices.__file__, "a") as f:
    f.write("\ndef added():\n    return 1\n")
print(type(baseline_recorder(watcher)).__name__, ProbeRecorder(watcher, frozenset()).prepare())
'''


def test_a_module_that_cannot_be_probed_leaves_the_record_to_a_tracer(tmp_path: Path) -> None:
    _shop(tmp_path)
    compiled = tmp_path / "compiled_source.py"
    compiled.write_text("VALUE = 7\n")
    import py_compile

    py_compile.compile(str(compiled), str(tmp_path / "shop" / "compiled.pyc"))
    script = FALLBACK.replace("ROOT", repr(str(ROOT))).replace("HERE", repr(str(tmp_path)))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "ProbeRecorder", "LineRecorder", "True", "False 7", "LineRecorder shop.prices"]


REWRITTEN = r'''
import pytest
from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.ctrace import OWN_FILES
from metaeval.mutation.child.line_probes import ProbeRecorder


def test_a_module_pytest_rewrites_is_probed():
    recorder = ProbeRecorder(CallRecorder(("shop",)), OWN_FILES)
    assert recorder.prepare() == ""
    recorder.start()
    recorder.begin("t::later")
    from shop import later
    assert later.twice(2) == 4
    recorder.end()
    recorder.stop()
    assert type(later.__loader__).__name__ == "ProbeLoader"
    assert recorder.intact()
    assert [(r.name, r.tests) for r in recorder.runs() if r.name == "twice"] == [
        ("twice", ("t::later",))]
'''


def test_a_package_pytest_rewrites_is_probed_not_left_unseen(tmp_path: Path) -> None:
    # pytest's assertion rewriter takes every module of a package that ships a
    # pytest plugin (metaeval's own, in its mutation run of itself); a module it
    # loads while the tests run must be probed, else every later test is unseen.
    _shop(tmp_path)
    (tmp_path / "conftest.py").write_text('import pytest\npytest.register_assert_rewrite("shop")\n')
    (tmp_path / "test_rewritten.py").write_text(REWRITTEN)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_rewritten.py"], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": f"{ROOT}:{tmp_path}"})
    assert done.returncode == 0, done.stdout + done.stderr


SHARED = r'''
import os, sys, time
sys.path[:0] = [ROOT, HERE]
from metaeval.mutation.child import line_probes as p
from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.ctrace import OWN_FILES

watcher = CallRecorder(("shop",))
watcher.start()
import shop.prices, shop.shapes, shop.later
watcher.stop()

def recorded(share, base):
    recorder = p.ProbeRecorder(watcher, OWN_FILES, base)
    assert recorder.prepare(share) == ""
    return recorder

alone = recorded(None, 0)
# Two children compile a share each and read the other's.
pid = os.fork()
if pid == 0:
    recorded(p.Share(1, 2, PREFIX + "a"), 1 << 24)
    os._exit(0)
first = recorded(p.Share(0, 2, PREFIX + "a"), 0)
os.waitpid(pid, 0)
# A share that never comes is compiled here once the wait is over.
p.WAIT = 0.2
began = time.monotonic()
lonely = recorded(p.Share(0, 2, PREFIX + "b"), 0)
waited = time.monotonic() - began

def lines(recorder):
    return sorted(recorder.probes.table.values())

print(lines(first) == lines(alone), lines(lonely) == lines(alone),
      min(first.probes.table) == 0, max(first.probes.table) >= 1 << 24,
      set(first.swaps) == set(alone.swaps), 0.2 <= waited < 5)
'''


def test_baseline_children_compile_the_probes_in_shares(tmp_path: Path) -> None:
    _shop(tmp_path)
    script = (SHARED.replace("ROOT", repr(str(ROOT))).replace("HERE", repr(str(tmp_path)))
              .replace("PREFIX", repr(str(tmp_path / "probes"))))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"] * 6
