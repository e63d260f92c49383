"""Target discovery: which files and qualnames, stable ids, pragmas, diffs, no writes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from textwrap import dedent

import libcst as cst
import pytest

import metaeval
from metaeval.errors import InputError
from metaeval.mutation.find.diffs import mutant_diff
from metaeval.mutation.find.operators import Variant, select_operators
from metaeval.mutation.find.resolve import (
    find_module_file,
    module_name,
    python_files,
    resolve_targets,
)
from metaeval.mutation.find.targets import NO_REASON, find_mutants, mutants_in_source
from metaeval.mutation.model import MutantKind, Span

GUARD = dedent('''\
    """Approval gate of a refund agent."""

    LIMIT = 100


    class Gate:
        def allows(self, amount: int) -> bool:
            if amount > LIMIT:
                return False
            return True

        def audit(self, amount: int) -> None:
            log(amount)


    def other(x):
        return x is None
''')


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def scan(source: str, *operators: str) -> list[tuple[str, str]]:
    """(id, ignored_reason) of every mutant of ``source`` as ``pkg/m.py``."""
    mutants = mutants_in_source(
        dedent(source), path="pkg/m.py", module="pkg.m",
        operators=select_operators(list(operators)),
    )
    return [(mt.id, mt.ignored_reason) for mt in mutants]


# --- ids -----------------------------------------------------------------------------


def test_ids_name_path_qualname_operator_and_index() -> None:
    source = '''\
        ok = a < b

        class Gate:
            def allows(self, x):
                def inner():
                    return x < 1
                return x < 2 or x > 9
    '''
    assert [i for i, _ in scan(source, "flip_comparison")] == [
        "pkg/m.py::<module>::flip_comparison::0",
        "pkg/m.py::Gate.allows.<locals>.inner::flip_comparison::0",
        "pkg/m.py::Gate.allows::flip_comparison::0",
        "pkg/m.py::Gate.allows::flip_comparison::1",
    ]


def test_adding_a_function_above_keeps_the_other_ids() -> None:
    before = "def check(x):\n    return x < 3 and x != 0\n"
    after = "def helper(y):\n    return y < 1 and y > 0\n\n\n" + before
    ids_before = [i for i, _ in scan(before)]
    ids_after = [i for i, _ in scan(after) if "::check::" in i]
    assert ids_before == ids_after
    assert len(ids_before) > 3
    assert len(scan(after)) > len(ids_after)  # the new function's mutants are there too


def test_mutant_fields_come_from_the_source() -> None:
    source = "def check(x):\n    if x < 1:\n        go()\n"
    [mutant] = mutants_in_source(source, path="pkg/m.py", module="pkg.m",
                                 operators=select_operators(["flip_comparison"]))
    assert mutant.kind is MutantKind.REWRITE
    assert mutant.module == "pkg.m"
    assert mutant.qualname == "check"
    assert mutant.span == Span(2, 8, 2, 13)  # ``x < 1``, 1-based columns
    assert (mutant.original, mutant.replacement) == ("x < 1", "x <= 1")
    assert mutant.mutated_source == "def check(x):\n    if x <= 1:\n        go()\n"
    assert mutant.ignored_reason == ""


def test_an_inserted_return_shows_as_added_code_at_the_first_statement() -> None:
    source = 'def ok(x) -> bool:\n    """Doc."""\n    return x > 1\n'
    first, _ = mutants_in_source(source, path="m.py", module="m",
                                 operators=select_operators(["return_constant"]))
    assert first.span == Span(3, 5, 3, 5)
    assert (first.original, first.replacement) == ("", "return True")


def test_order_is_deterministic() -> None:
    assert scan(GUARD) == scan(GUARD)


# --- pragmas ---------------------------------------------------------------------------


def test_line_pragma_ignores_that_line_only_with_its_reason() -> None:
    source = '''\
        def check(x):
            if x > 3:  # metaeval: skip boundary fixed by contract
                go()
            return x < 9
    '''
    found = dict(scan(source, "flip_comparison", "shift_constant"))
    assert found["pkg/m.py::check::flip_comparison::0"] == "boundary fixed by contract"
    assert found["pkg/m.py::check::shift_constant::0"] == "boundary fixed by contract"
    assert found["pkg/m.py::check::flip_comparison::1"] == ""
    assert found["pkg/m.py::check::shift_constant::2"] == ""


def test_def_pragma_covers_the_whole_function_and_what_is_nested_in_it() -> None:
    source = '''\
        @audited
        def legacy(
            x,
        ):  # metaeval: skip replaced in v2
            def inner():
                return x < 1
            return x == 2


        def kept(x):
            return x == 2
    '''
    found = scan(source)
    ignored = {i for i, reason in found if reason == "replaced in v2"}
    assert ignored == {i for i, _ in found if "::legacy" in i}
    assert "pkg/m.py::legacy::remove_decorator::0" in ignored
    assert "pkg/m.py::legacy.<locals>.inner::flip_comparison::0" in ignored
    kept = [reason for i, reason in found if "::kept::" in i]
    assert len(kept) == 5 and set(kept) == {""}


def test_class_pragma_covers_its_methods() -> None:
    source = '''\
        class Old:  # metaeval: skip kept for the v1 API
            def f(self, x):
                return x < 1
    '''
    assert scan(source, "flip_comparison") == [
        ("pkg/m.py::Old.f::flip_comparison::0", "kept for the v1 API"),
    ]


def test_pragma_without_reason_still_ignores_and_says_so() -> None:
    assert scan("ok = a < b  # metaeval: skip\n", "flip_comparison") == [
        ("pkg/m.py::<module>::flip_comparison::0", NO_REASON),
    ]


def test_pragma_text_inside_a_string_is_not_a_pragma() -> None:
    source = 'ok = a < b or "# metaeval: skip nope"\n'
    assert scan(source, "flip_comparison") == [("pkg/m.py::<module>::flip_comparison::0", "")]


# --- targets ---------------------------------------------------------------------------


def test_directory_search_leaves_out_tests_hidden_dirs_and_venvs(tmp_path: Path) -> None:
    for relative in ("pkg/__init__.py", "pkg/gate.py", "pkg/sub/rules.py",
                     "pkg/tests/test_gate.py", "pkg/test_x.py", "pkg/x_test.py",
                     "pkg/conftest.py", ".hidden/h.py", "env1/lib/v.py", "pkg/data.txt",
                     "node_modules/n.py"):
        write(tmp_path, relative, "")
    write(tmp_path, "env1/pyvenv.cfg", "home = /usr\n")
    assert [p.relative_to(tmp_path).as_posix() for p in python_files(tmp_path)] == [
        "pkg/__init__.py", "pkg/gate.py", "pkg/sub/rules.py",
    ]


def test_a_named_test_file_is_still_a_target(tmp_path: Path) -> None:
    path = write(tmp_path, "test_gate.py", "x = 1\n")
    assert [t.path for t in resolve_targets(["test_gate.py"], tmp_path)] == [path.resolve()]


@pytest.mark.parametrize(("spec", "message"), [
    ("nowhere.py", "'nowhere.py' does not exist"),
    ("notes.txt", "'notes.txt' is not a Python file"),
    ("pkg.missing:f", "module 'pkg.missing' not found"),
    ("pkg.gate:", "empty qualname"),
    ("pkg.gate:Nope", "no function or class 'Nope' in 'src/pkg/gate.py'"),
    ("pkg-x.gate:f", "'pkg-x.gate' is not a module name"),
    ("pkg.gate:Gate.1", "'Gate.1' is not a qualname"),
    ("src/pkg/nope.py:Gate", "'src/pkg/nope.py' is not a Python file"),
    ("src/pkg/gate.py:Nope", "no function or class 'Nope' in 'src/pkg/gate.py'"),
])
def test_bad_targets_are_input_errors_naming_them(tmp_path: Path, spec: str,
                                                   message: str) -> None:
    write(tmp_path, "notes.txt", "")
    write(tmp_path, "src/pkg/__init__.py", "")
    write(tmp_path, "src/pkg/gate.py", GUARD)
    with pytest.raises(InputError, match=re.escape(message)):
        find_mutants([spec], tmp_path)


def test_module_qualname_target_is_found_on_disk_without_importing(tmp_path: Path) -> None:
    write(tmp_path, "src/pkg/__init__.py", "")
    # If the module were imported, this would leave a file behind.
    write(tmp_path, "src/pkg/gate.py",
          GUARD + "\nopen(__file__ + '.imported', 'w').close()\n")
    path = find_module_file("pkg.gate", tmp_path)
    assert path == (tmp_path / "src/pkg/gate.py").resolve()
    assert module_name(path, tmp_path) == "pkg.gate"

    method = find_mutants(["pkg.gate:Gate.allows"], tmp_path)
    assert method and {m.qualname for m in method} == {"Gate.allows"}
    assert all(m.path == "src/pkg/gate.py" and m.module == "pkg.gate" for m in method)

    assert find_mutants(["src/pkg/gate.py:Gate.allows"], tmp_path) == method

    whole_class = find_mutants(["pkg.gate:Gate"], tmp_path)
    assert {m.qualname for m in whole_class} == {"Gate.allows", "Gate.audit"}
    whole_file = find_mutants(["src/pkg/gate.py"], tmp_path)
    assert {"<module>", "other"} <= {m.qualname for m in whole_file}
    assert not list(tmp_path.rglob("*.imported"))


def test_operators_restrict_what_is_found(tmp_path: Path) -> None:
    write(tmp_path, "gate.py", GUARD)
    found = find_mutants(["gate.py"], tmp_path, operators=["drop_guard_clause"])
    assert [m.id for m in found] == ["gate.py::Gate.allows::drop_guard_clause::0"]


def test_a_file_that_does_not_parse_is_an_input_error_naming_it(tmp_path: Path) -> None:
    write(tmp_path, "broken.py", "def f(:\n")
    with pytest.raises(InputError, match=re.escape("broken.py:1: cannot parse")):
        find_mutants(["broken.py"], tmp_path)


# --- real code, diffs, and the tree left alone ----------------------------------------


@pytest.fixture(scope="module")
def graders_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of metaeval's own graders: real code, never the repository's files."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(Path(metaeval.__file__).parent / "graders", root / "graders")
    return root


def test_every_mutant_of_real_graders_compiles_and_changes_the_module(
    graders_copy: Path,
) -> None:
    mutants = find_mutants(["graders"], graders_copy)
    assert len({m.operator for m in mutants}) >= 10
    originals = {m.path: (graders_copy / m.path).read_text() for m in mutants}
    for mutant in mutants:
        compile(mutant.mutated_source, mutant.path, "exec")
        assert mutant.mutated_source != originals[mutant.path], mutant.id
    assert len({m.id for m in mutants}) == len(mutants)


def test_finding_mutants_never_writes_the_files(graders_copy: Path) -> None:
    files = sorted(graders_copy.rglob("*"))
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files if p.is_file()}
    for mutant in find_mutants(["graders"], graders_copy):
        mutant_diff(mutant, graders_copy)
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files if p.is_file()}
    assert after == before
    assert sorted(graders_copy.rglob("*")) == files


def test_diff_is_headed_with_the_relative_path(tmp_path: Path) -> None:
    write(tmp_path, "pkg/gate.py", "def check(x):\n    return x < 3\n")
    [mutant] = find_mutants(["pkg/gate.py"], tmp_path, operators=["flip_comparison"])
    assert mutant_diff(mutant, tmp_path) == (
        "--- a/pkg/gate.py\n"
        "+++ b/pkg/gate.py\n"
        "@@ -1,2 +1,2 @@\n"
        " def check(x):\n"
        "-    return x < 3\n"
        "+    return x <= 3\n"
    )


def test_spliced_mutants_equal_whole_module_regeneration(
    graders_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast path (regenerate one statement) must give what libcst gives for the module."""
    from metaeval.mutation.find import splice

    spliced = find_mutants(["graders"], graders_copy)

    def whole_module(self: splice.Splicer, variant: Variant,
                     chain: tuple[cst.CSTNode, ...]) -> str:
        return self.tree.visit(splice.Replace(variant, frozenset(map(id, chain)))).code

    monkeypatch.setattr(splice.Splicer, "apply", whole_module)
    regenerated = find_mutants(["graders"], graders_copy)
    assert [m.mutated_source for m in spliced] == [m.mutated_source for m in regenerated]
    assert len(spliced) > 100


@pytest.mark.parametrize(("source", "expected"), [
    ("def f(x):\n    return x < 1", "def f(x):\n    return x <= 1"),
    ("def f(x):\r\n    if x:\r\n        return x < 1\r\n",
     "def f(x):\r\n    if x:\r\n        return x <= 1\r\n"),
    ("class C:\n\tdef f(self, x):\n\t\treturn x < 1\n",
     "class C:\n\tdef f(self, x):\n\t\treturn x <= 1\n"),
])
def test_newlines_and_indentation_are_kept(source: str, expected: str) -> None:
    [mutant] = mutants_in_source(source, path="m.py", module="m",
                                 operators=select_operators(["flip_comparison"]))
    assert mutant.mutated_source == expected
