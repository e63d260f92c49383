"""The benchmark scripts under benchmarks/, loaded by path: they are scripts, not a
package metaeval ships, so the smoke tests import them as a file each."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as the module ``name``, loaded once: kept in
    ``sys.modules``, so a script that imports another by name gets the very module
    the tests hold (loading it again would give two ``SetupError`` classes, and an
    ``except`` in one script would miss the other's)."""
    path = BENCH / f"{name}.py"
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
