"""The recorder pauses its trace function while a third-party module runs its top
level (``foreign``), and misses none of the project's functions called at import:
not one called by a third-party module that names the project, nor one called by
a project module a paused module imports. Run in a fresh interpreter: the recorder
installs itself as the trace function and wraps the import system."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from metaeval.mutation.child.foreign import is_foreign, library_dirs

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = r'''
import importlib, json, sys
sys.path[:0] = [ROOT, HERE, LIB]
bootstrap = importlib.import_module("importlib._bootstrap")
original = bootstrap._load_unlocked
from metaeval.mutation.child.apply import CallRecorder

recorder = CallRecorder(("shop",))
recorder.pause.library = (LIB + "/",)   # LIB stands for site-packages
recorder.start()
import shop.catalog
recorder.begin("t.py::test_late")       # under a test every call counts
import late
recorder.end()
recorder.stop()
import quiet, localhelper
print(json.dumps({
    "quiet_traced": quiet.TRACE is not None,
    "local_traced": localhelper.TRACE is recorder.tracer,
    "late_traced": late.TRACE is recorder.tracer,
    "callers": sorted(sorted(m) for c, m in recorder.callers.items() if c.co_name == "register"),
    "importers": {k: recorder.importers.get(k) for k in ("quiet", "localhelper", "plugin")},
    "after": [sys.gettrace() is None, bootstrap._load_unlocked is original],
    "codes": {name: [code.co_name, code.co_filename == sys.modules[name].__file__,
                     sorted(c.co_name for c in code.co_consts if hasattr(c, "co_name"))]
              for name, code in recorder.module_codes.items() if name.startswith("shop")},
}))
'''


def _project(tmp_path: Path) -> tuple[Path, Path]:
    here, lib = tmp_path / "project", tmp_path / "site-packages"
    (here / "shop").mkdir(parents=True)
    lib.mkdir()
    (here / "shop" / "__init__.py").write_text("")
    # A dataclass: its methods are code exec() runs in the module's namespace.
    (here / "shop" / "prices.py").write_text(
        "import dataclasses\nREGISTRY = []\n\ndef register(name):\n    REGISTRY.append(name)\n"
        "    return name\n\n@dataclasses.dataclass\nclass Price:\n    amount: int\n")
    (here / "shop" / "catalog.py").write_text(
        "import quiet\nimport plugin\nfrom shop.prices import register\n\nregister('catalog')\n")
    # A third-party module that never names the project: paused; it imports a
    # module of the project's tree, whose top level is traced again.
    (lib / "quiet.py").write_text("import sys\nTRACE = sys.gettrace()\nimport localhelper\n")
    (here / "localhelper.py").write_text(
        "import sys\nTRACE = sys.gettrace()\nfrom shop.prices import register\n"
        "register('localhelper')\n")
    # A third-party module that names the project (a plugin): traced.
    (lib / "plugin.py").write_text("from shop.prices import register\nregister('plugin')\n")
    (lib / "late.py").write_text("import sys\nTRACE = sys.gettrace()\n")
    return here, lib


def test_a_paused_import_misses_no_call_of_the_project(tmp_path: Path) -> None:
    here, lib = _project(tmp_path)
    script = (SCRIPT.replace("ROOT", repr(str(ROOT))).replace("HERE", repr(str(here)))
              .replace("LIB", repr(str(lib))))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["quiet_traced"] is False  # paused: the point of it
    assert found["local_traced"] is True
    assert found["late_traced"] is True
    assert found["callers"] == [["localhelper", "plugin", "shop.catalog"]]
    assert found["importers"] == {"quiet": "shop.catalog", "localhelper": "quiet",
                                  "plugin": "shop.catalog"}
    assert found["after"] == [True, True]
    # Each module's own top-level code, as its import ran it (not a dataclass's __init__).
    assert found["codes"] == {"shop": ["<module>", True, []],
                              "shop.catalog": ["<module>", True, []],
                              "shop.prices": ["<module>", True, ["Price", "register"]]}


def test_what_counts_as_foreign(tmp_path: Path) -> None:
    here, lib = _project(tmp_path)
    packages = frozenset({"shop"})
    library = (str(lib) + "/",)

    def spec(name: str, path: Path) -> importlib.machinery.ModuleSpec:
        found = importlib.util.spec_from_file_location(name, path)
        assert found is not None
        return found

    assert is_foreign(spec("quiet", lib / "quiet.py"), packages, library)
    assert not is_foreign(spec("plugin", lib / "plugin.py"), packages, library)  # names shop
    assert not is_foreign(spec("localhelper", here / "localhelper.py"), packages, library)
    assert not is_foreign(spec("shop.prices", here / "shop" / "prices.py"), packages, library)
    # The project's own package is never foreign, wherever it is installed.
    assert not is_foreign(spec("shop.x", lib / "quiet.py"), packages, library)
    json_spec, sys_spec = importlib.util.find_spec("json"), importlib.util.find_spec("sys")
    assert json_spec is not None and sys_spec is not None
    assert is_foreign(json_spec, packages, library_dirs())  # the standard library
    assert is_foreign(sys_spec, packages, library)  # built in: no Python code
    assert not is_foreign(json_spec, frozenset({"json"}), library_dirs())


REWRITING = r'''
import json, sys
sys.path[:0] = [ROOT]
import _pytest.assertion.rewrite as rewrite
seen = []

def probe(*args):  # stands for pytest's parse-rewrite-compile of a test module
    seen.append(sys.gettrace() is None)
    return "rewritten"

rewrite._rewrite_test = probe
from metaeval.mutation.child.apply import CallRecorder

recorder = CallRecorder(("shop",))
recorder.start()
result = rewrite._rewrite_test("test_x.py", None)  # collecting: paused
back = sys.gettrace() is recorder.tracer
recorder.begin("t.py::test_imports")  # under a test every call counts
rewrite._rewrite_test("test_y.py", None)
recorder.end()
recorder.stop()
print(json.dumps([seen, result, back, rewrite._rewrite_test is probe]))
'''


def test_pytests_assert_rewriting_runs_with_the_recorder_off_outside_tests() -> None:
    done = subprocess.run([sys.executable, "-c", REWRITING.replace("ROOT", repr(str(ROOT)))],
                          capture_output=True, text=True, timeout=60,
                          env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr
    # Off while collecting, on again after; traced under a test; unwrapped at stop.
    assert json.loads(done.stdout) == [[True, False], "rewritten", True, True]
