"""Which functions of a file changed, and where the unchanged lines moved."""

from __future__ import annotations

from textwrap import dedent

from metaeval.mutation.caches.source_shape import LineMap, Shape, shape_of

BEFORE = dedent("""\
    LIMIT = 3


    def first(x):
        return x + 1


    class Box:
        size = 2

        @property
        def area(self):
            return self.size * self.size


    def last(x):
        if x:
            return LIMIT
        return 0
    """)


def shape(text: str) -> Shape:
    found = shape_of(text)
    assert found is not None
    return found


def test_functions_and_methods_are_found_with_their_decorators() -> None:
    functions = shape(BEFORE).functions
    assert sorted(functions) == ["Box.area", "first", "last"]
    assert (functions["Box.area"].start, functions["Box.area"].end) == (11, 13)
    assert (functions["last"].start, functions["last"].end) == (16, 19)


def test_a_grown_function_changes_itself_and_moves_what_is_below() -> None:
    after = BEFORE.replace("    return x + 1\n", "    y = x\n    return y + 1\n")
    assert after != BEFORE
    lines = LineMap(shape(BEFORE), shape(after))
    assert not lines.unchanged(5)           # the body of first()
    assert lines.unchanged(12) and lines.unchanged(18)
    assert lines.moved(12) == 13 and lines.moved(18) == 19
    assert lines.moved(9) == 10             # a class attribute below first()
    assert lines.moved(1) == 1              # nothing above it moved


def test_code_outside_functions_changes_every_record_of_the_file() -> None:
    lines = LineMap(shape(BEFORE), shape(BEFORE.replace("LIMIT = 3", "LIMIT = 4")))
    assert not lines.unchanged(5) and not lines.unchanged(18) and not lines.unchanged(1)
    # A default value or a decorator is outside the body: it runs at import.
    decorated = BEFORE.replace("@property", "@staticmethod")
    assert not LineMap(shape(BEFORE), shape(decorated)).unchanged(5)


def test_the_same_text_is_the_same_shape() -> None:
    lines = LineMap(shape(BEFORE), shape(BEFORE))
    assert all(lines.unchanged(n) and lines.moved(n) == n for n in range(1, 20))


def test_a_name_defined_twice_is_matched_by_its_order() -> None:
    text = "if X:\n    def f():\n        return 1\nelse:\n    def f():\n        return 2\n"
    found = shape(text).functions
    assert sorted(found) == ["f", "f#2"]
    changed = LineMap(shape(text), shape(text.replace("return 2", "return 3")))
    assert changed.unchanged(3) and not changed.unchanged(6)


def test_a_file_that_does_not_parse_has_no_shape() -> None:
    assert shape_of("def f(:\n") is None


def test_a_shape_survives_json() -> None:
    assert Shape.from_json(shape(BEFORE).to_json()) == shape(BEFORE)
