"""Putting a mutant in place in this process: rebinding copies, re-executing a module."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from metaeval.mutation.child.apply import apply_patch, apply_rewrite, rebind

PRICES = ("LIMIT = 3\n\n\ndef price():\n    return 1\n\n\n"
          "class Gate:\n    def open(self):\n        return True\n")
SHOP = "from demo_prices import LIMIT, price\n\nREGISTRY = {'price': price}\n"


@pytest.fixture()
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ModuleType,
                                                                                 ModuleType]]:
    (tmp_path / "demo_prices.py").write_text(PRICES, encoding="utf-8")
    (tmp_path / "demo_shop.py").write_text(SHOP, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))  # drop our finder afterwards
    import demo_prices  # type: ignore[import-not-found]
    import demo_shop  # type: ignore[import-not-found]

    yield demo_prices, demo_shop
    for name in ("demo_prices", "demo_shop"):
        sys.modules.pop(name, None)


def test_a_patch_reaches_from_imports_and_registry_dicts(
        modules: tuple[ModuleType, ModuleType]) -> None:
    prices, shop = modules
    apply_patch("demo_prices:price", "lambda: 2")
    assert prices.price() == 2
    assert shop.price() == 2  # the `from demo_prices import price` copy
    assert shop.REGISTRY["price"]() == 2


def test_a_patch_on_a_method_changes_the_class(modules: tuple[ModuleType, ModuleType]) -> None:
    prices, _ = modules

    def never_open(self: object) -> bool:
        return False

    apply_patch("demo_prices:Gate.open", never_open)
    assert prices.Gate().open() is False


def test_a_missing_target_names_module_and_attribute(
        modules: tuple[ModuleType, ModuleType]) -> None:
    with pytest.raises(AttributeError, match="'demo_prices' has no attribute 'cost'"):
        apply_patch("demo_prices:cost", "lambda: 0")


def test_a_rewrite_of_an_imported_module_re_executes_and_rebinds(
        modules: tuple[ModuleType, ModuleType]) -> None:
    prices, shop = modules
    apply_rewrite("demo_prices", prices.__file__ or "", PRICES.replace("return 1", "return 7"))
    assert prices.price() == 7
    assert shop.price() == 7
    assert shop.REGISTRY["price"]() == 7
    # A fresh import (after a reload) is served by the import hook, not the file.
    del sys.modules["demo_prices"]
    import demo_prices

    assert demo_prices.price() == 7
    assert Path(prices.__file__ or "").read_text(encoding="utf-8") == PRICES


def test_a_rewrite_that_does_not_compile_raises_before_anything_changes(
        modules: tuple[ModuleType, ModuleType]) -> None:
    prices, _ = modules
    with pytest.raises(SyntaxError):
        apply_rewrite("demo_prices", prices.__file__ or "", "def price(:\n")
    assert prices.price() == 1


def test_rebind_leaves_plain_values_alone(modules: tuple[ModuleType, ModuleType]) -> None:
    prices, shop = modules
    # 3 is shared by identity with every other small 3 in the process: never rebound.
    assert rebind(prices.LIMIT, 4) == 0
    assert shop.LIMIT == 3
