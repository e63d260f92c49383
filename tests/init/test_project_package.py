"""Finding the user's package for `metaeval init`: from the build config, the
project name, the layout; what is not on disk never counts; else ask for --package."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from metaeval.errors import InputError
from metaeval.init.project_package import Package, find_packages, first_function


def package(root: Path, relative: str, body: str = "") -> None:
    (root / relative).mkdir(parents=True, exist_ok=True)
    (root / relative / "__init__.py").write_text(body)


def found(root: Path, pyproject: str = "", given: str | None = None) -> list[Package]:
    return list(find_packages(root, tomllib.loads(pyproject), given))


def test_the_project_name_is_the_import_name_normalised(tmp_path: Path) -> None:
    package(tmp_path, "src/shop_guards")
    package(tmp_path, "other")  # a layout guess would be ambiguous: the name decides
    package(tmp_path, "src/zzz")
    assert found(tmp_path, '[project]\nname = "Shop-Guards"') == [
        Package("shop_guards", "src/shop_guards")]


def test_a_project_name_with_no_directory_falls_back_to_the_layout(tmp_path: Path) -> None:
    package(tmp_path, "shop")
    assert found(tmp_path, '[project]\nname = "shop-distribution"') == [Package("shop", "shop")]


def test_setuptools_packages_and_package_dir(tmp_path: Path) -> None:
    package(tmp_path, "lib/guards")
    package(tmp_path, "lib/guards/api")
    (tmp_path / "lib/cli.py").write_text("")
    config = ('[project]\nname = "x"\n[tool.setuptools]\npackages = ["guards", "guards.api"]\n'
              'py-modules = ["cli"]\npackage-dir = {"" = "lib"}')
    assert found(tmp_path, config) == [Package("guards", "lib/guards"),
                                       Package("cli", "lib/cli.py")]


def test_setuptools_find_with_where_include_and_exclude(tmp_path: Path) -> None:
    for name in ("shop", "shopx", "vendor", "tests"):
        package(tmp_path, f"src/{name}")
    config = ('[tool.setuptools.packages.find]\nwhere = ["src"]\ninclude = ["shop*"]\n'
              'exclude = ["shopx"]')
    assert found(tmp_path, config) == [Package("shop", "src/shop")]


def test_hatch_poetry_and_flit_name_their_packages(tmp_path: Path) -> None:
    package(tmp_path, "src/hatched")
    package(tmp_path, "poems")
    package(tmp_path, "flitted")
    assert found(tmp_path, '[tool.hatch.build.targets.wheel]\npackages = ["src/hatched"]') \
        == [Package("hatched", "src/hatched")]
    assert found(tmp_path, '[tool.poetry]\nname = "p"\npackages = [{include = "poems"}]') \
        == [Package("poems", "poems")]
    assert found(tmp_path, '[tool.flit.module]\nname = "flitted"') == [
        Package("flitted", "flitted")]


def test_a_configured_package_that_is_not_on_disk_does_not_count(tmp_path: Path) -> None:
    package(tmp_path, "real")
    assert found(tmp_path, '[tool.setuptools]\npackages = ["renamed"]') == [
        Package("real", "real")]


def test_the_src_layout_then_a_single_top_level_package(tmp_path: Path) -> None:
    package(tmp_path, "src/inside")
    package(tmp_path, "outside")
    assert found(tmp_path) == [Package("inside", "src/inside")]
    flat = tmp_path / "flat"
    for name in ("shop", "tests", "docs", ".venv", "_private"):
        package(flat, name)
    (flat / "notes").mkdir()  # a directory without __init__.py is no package
    assert found(flat) == [Package("shop", "shop")]


def test_several_candidates_or_none_ask_for_the_package(tmp_path: Path) -> None:
    package(tmp_path, "alpha")
    package(tmp_path, "beta")
    with pytest.raises(InputError, match=r"found several packages \(alpha, beta\); choose "
                                         r"the one to mutate: metaeval init --package NAME"):
        found(tmp_path)
    empty = tmp_path / "empty"
    (empty / "tests").mkdir(parents=True)
    (empty / "tests/__init__.py").write_text("")
    with pytest.raises(InputError, match=r"no package found .*name it: metaeval init "
                                         r"--package NAME"):
        found(empty)


def test_a_given_package_is_checked_to_exist(tmp_path: Path) -> None:
    package(tmp_path, "alpha")
    package(tmp_path, "src/beta")
    (tmp_path / "tool.py").write_text("")
    assert found(tmp_path, given="beta") == [Package("beta", "src/beta")]
    assert found(tmp_path, given="tool") == [Package("tool", "tool.py")]
    with pytest.raises(InputError, match=r"--package: got 'gamma'; expected the import "
                                         r"name of a package directory"):
        found(tmp_path, given="gamma")
    with pytest.raises(InputError, match=r"--package: got 'a/b'"):
        found(tmp_path, given="a/b")


def test_the_example_targets_the_first_public_function(tmp_path: Path) -> None:
    package(tmp_path, "shop", "def _helper():\n    pass\n")
    (tmp_path / "shop/guards.py").write_text("LIMIT = 1\n\n\nclass Gate:\n    pass\n\n\n"
                                             "async def allowed(x):\n    return True\n")
    (tmp_path / "shop/zz.py").write_text("def later():\n    pass\n")
    assert first_function(tmp_path, Package("shop", "shop")) == "shop.guards:allowed"
    (tmp_path / "tool.py").write_text("def main():\n    pass\n")
    assert first_function(tmp_path, Package("tool", "tool.py")) == "tool:main"
    package(tmp_path, "bare")
    assert first_function(tmp_path, Package("bare", "bare")) is None
