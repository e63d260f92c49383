"""The mutation package's one real boundary: code that shares a process with the
user's tests (``mutation/child``, and each isolation's child side in ``fork/`` and
``subprocess/``) never loads libcst nor the finding side, and the
plugin every pytest session in the project loads imports nothing until asked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import metaeval.mutation
from tests.mutation.conftest import copy_shop

MUTATION = Path(metaeval.mutation.__file__).parent
CHILD_SIDE = ("child", "fork", "subprocess")
"""Where the code that runs in the user's pytest process lives; each isolation's
``parent.py`` runs in ``metaeval mutate`` instead."""


def loaded_after(statement: str) -> set[str]:
    """The modules a fresh interpreter has loaded after ``statement``."""
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    return set(json.loads(done.stdout))


def test_the_child_side_never_loads_libcst_nor_the_finding_side() -> None:
    modules = sorted(f"metaeval.mutation.{home}.{p.stem}" for home in CHILD_SIDE
                     for p in (MUTATION / home).glob("*.py")
                     if p.stem not in ("__init__", "parent"))
    modules.append("metaeval.mutation.plugin")  # above both isolations, outside their homes
    # the globs found the packages
    assert {"metaeval.mutation.fork.warm_session", "metaeval.mutation.subprocess.child",
            "metaeval.mutation.plugin"} <= set(modules)
    loaded = loaded_after("\n".join(f"import {m}" for m in modules))
    assert set(modules) <= loaded
    assert not {m for m in loaded if m == "libcst" or m.startswith(("libcst.",
                "metaeval.mutation.find"))}


def test_the_check_sees_libcst_when_it_is_loaded() -> None:
    assert "libcst" in loaded_after("import metaeval.mutation.find.targets")


def test_the_plugin_imports_no_mutation_machinery_until_asked() -> None:
    loaded = loaded_after("import metaeval.mutation.plugin")
    assert not {m for m in loaded if m.startswith("metaeval.mutation.")
                and m != "metaeval.mutation.plugin"}


HEAVY = ("sklearn", "scipy", "numpy", "matplotlib")
"""The measuring side's libraries: 0.8 s and 80 MiB to import, of no use to mutate."""


def test_a_whole_mutate_run_loads_none_of_the_measuring_libraries(tmp_path: Path) -> None:
    # A whole run, not an import list: the summary's import once came after the run.
    project = copy_shop(tmp_path)
    loaded = loaded_after(
        "import os, contextlib\n"
        f"os.chdir({str(project)!r})\n"
        "from metaeval.cli import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(None):\n"
        "    main(['mutate', 'shop/pricing.py', '--no-cache', '--jobs', '1'])")
    assert "metaeval.mutation.fork.parent" in loaded  # it did run
    assert not {m for m in loaded if m.partition(".")[0] in HEAVY}
    # Ray is an optional extra, imported by --executor ray alone.
    assert not {m for m in loaded if m.partition(".")[0] == "ray"
                or m == "metaeval.mutation.run.ray_executor"}


def test_the_check_sees_the_measuring_libraries_when_they_are_loaded() -> None:
    loaded = loaded_after("import metaeval.report.audit_summary")
    assert "sklearn" in loaded


def test_the_check_sees_ray_when_the_executor_is_loaded() -> None:
    pytest.importorskip("ray")
    assert "ray" in loaded_after("import metaeval.mutation.run.ray_executor")
