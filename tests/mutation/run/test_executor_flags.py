"""``--executor`` and ``--ray-address`` as the default run can check them, Ray
installed or not: what cannot run is exit 2 before anything starts, and Ray
missing says how to install it. The runs themselves are in test_ray_executor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.mutation.conftest import tree_digest


def _main(project: Path, *args: str, without_ray: bool = False
          ) -> subprocess.CompletedProcess[str]:
    # ``sys.modules["ray"] = None``: ``import ray`` fails as it does where it is not installed.
    code = ("import sys\n"
            + ("sys.modules['ray'] = None\n" if without_ray else "")
            + "from metaeval.cli import main\n"
            f"main(['mutate', '--no-cache', *{list(args)!r}])\n")
    return subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True,
                          text=True, timeout=120)


def test_ray_not_installed_exits_2_saying_how_to_install_it(shop: Path) -> None:
    before = tree_digest(shop)
    done = _main(shop, "--executor", "ray", without_ray=True)
    assert done.returncode == 2, done.stderr
    assert "Ray is not installed" in done.stderr
    assert "pip install 'metaeval[ray]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert tree_digest(shop) == before


@pytest.mark.parametrize(("flags", "message"), [
    (("--ray-address", "127.0.0.1:1"),
     "--ray-address '127.0.0.1:1': expected it with --executor ray"),
    (("--executor", "ray", "--isolation", "subprocess"),
     "--executor ray: got --isolation 'subprocess'; expected fork"),
    (("--executor", "dask"), "Invalid value for '--executor'"),
])
def test_an_executor_that_cannot_run_exits_2(shop: Path, flags: tuple[str, ...],
                                             message: str) -> None:
    done = _main(shop, *flags, without_ray=True)  # said before Ray would be looked for
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
