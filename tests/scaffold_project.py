"""A small user project for the `metaeval init` tests: a package, its tests, a
pyproject that declares a test extra. One function is well tested, one is not."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

PYPROJECT = """\
    [project]
    name = "shop"
    version = "0.1"
    requires-python = ">=3.11"

    [project.optional-dependencies]
    test = ["pytest"]

    [build-system]
    requires = ["setuptools>=68"]
    build-backend = "setuptools.build_meta"

    [tool.setuptools]
    packages = ["shop"]
    """

GUARDS = """\
    LIMIT = 100


    def refund_allowed(amount, delivered):
        if not delivered:
            return False
        return amount <= LIMIT


    def clamp_quantity(quantity, limit=10):
        if quantity > limit:
            return limit
        return quantity
    """

TESTS = """\
    from shop.guards import clamp_quantity, refund_allowed


    def test_refund_allowed():
        assert refund_allowed(50, True)
        assert not refund_allowed(50, False)
        assert refund_allowed(100, True)
        assert not refund_allowed(101, True)


    def test_clamp_quantity():  # never reaches the limit: its mutants survive
        assert clamp_quantity(3) == 3
    """


def make_shop(root: Path) -> None:
    """The project under ``root`` (which exists)."""
    for path, text in (("pyproject.toml", PYPROJECT), ("shop/__init__.py", ""),
                       ("shop/guards.py", GUARDS), ("tests/test_guards.py", TESTS)):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(dedent(text), encoding="utf-8")
