"""Loading `mutants/*.py`: both declaration forms, and errors that name file, line, field."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaeval.errors import InputError
from metaeval.mutation.apart import load_patch_mutants
from metaeval.mutation.model import MutantKind, Status
from metaeval.mutation.subprocess.parent import settle
from tests.mutation.conftest import write


def test_list_and_decorator_forms_load_in_line_order(guards_project: Path) -> None:
    write(guards_project / "mutants", "guards.py", """\
        from metaeval.mutation.patches import PatchMutant, patch_mutant

        MUTANTS = [
            PatchMutant(id="gate-is-average", target="pkg_patches_demo.guards:Gate.open",
                        replacement="lambda results: sum(results) >= len(results) / 2",
                        breaks="A failed gate is averaged away."),
        ]


        @patch_mutant("guard-allows-all", target="pkg_patches_demo.guards:allowed",
                      breaks="The guard lets every tool through.")
        def allow_everything(tool):
            return True
        """)
    mutants = load_patch_mutants(guards_project / "mutants", guards_project)
    assert [m.id for m in mutants] == ["gate-is-average", "guard-allows-all"]
    gate, guard = mutants
    assert gate.kind is MutantKind.PATCH
    assert gate.target == "pkg_patches_demo.guards:Gate.open"
    assert gate.breaks == "A failed gate is averaged away."
    # The location is the target's definition (decorator line first), not the declaration.
    assert (gate.path, gate.span.start_line, gate.span.end_line) == (
        "pkg_patches_demo/guards.py", 9, 11)
    assert gate.original.startswith("@staticmethod\ndef open(results):")
    assert gate.replacement == "open = lambda results: sum(results) >= len(results) / 2\n"
    assert (guard.path, guard.span.start_line) == ("pkg_patches_demo/guards.py", 4)
    assert guard.replacement == "def allow_everything(tool):\n    return True\n"


def test_a_target_that_cannot_be_found_points_at_the_declaration(guards_project: Path) -> None:
    write(guards_project / "mutants", "gone.py", """\
        from metaeval.mutation.patches import PatchMutant

        MUTANTS = [
            PatchMutant(id="gone", target="pkg_patches_demo.guards:renamed",
                        replacement="None", breaks="Nothing: the target was renamed."),
        ]
        """)
    (mutant,) = load_patch_mutants(guards_project / "mutants", guards_project)
    assert (mutant.path, mutant.span.start_line, mutant.original) == ("mutants/gone.py", 4, "")


def test_every_bad_field_is_named_with_file_and_line(guards_project: Path) -> None:
    path = write(guards_project / "mutants", "bad.py", """\
        from metaeval.mutation.patches import PatchMutant

        MUTANTS = [
            PatchMutant(id="no target", target="allowed",
                        replacement="lambda tool: (", breaks=""),
            PatchMutant(id="ok", target="pkg_patches_demo.guards:allowed",
                        replacement=42, breaks="Fine otherwise."),
        ]
        """)
    with pytest.raises(InputError) as caught:
        load_patch_mutants(guards_project / "mutants", guards_project)
    message = str(caught.value)
    assert f"{path}:4: id: got 'no target'; expected a non-empty string without spaces" \
        in message
    assert f"{path}:4: target: got 'allowed'; expected 'package.module:attr'" in message
    assert f"{path}:4: replacement: got 'lambda tool: ('; not a Python expression" in message
    assert f"{path}:4: breaks: got ''; expected one sentence" in message
    assert f"{path}:6: replacement: got 42; expected an expression string or a callable" \
        in message


def test_a_duplicate_id_names_both_places(guards_project: Path) -> None:
    text = """\
        from metaeval.mutation.patches import PatchMutant

        MUTANTS = [PatchMutant(id="same", target="pkg_patches_demo.guards:allowed",
                               replacement="None", breaks="Breaks the guard.")]
        """
    first = write(guards_project / "mutants", "a.py", text)
    second = write(guards_project / "mutants", "b.py", text)
    with pytest.raises(InputError, match=f"{second}:3: id: got 'same'; already declared "
                                         f"at {first}:3"):
        load_patch_mutants(guards_project / "mutants", guards_project)


def test_a_file_that_raises_is_named_with_its_line(guards_project: Path) -> None:
    path = write(guards_project / "mutants", "boom.py", "x = 1\nraise RuntimeError('no')\n")
    with pytest.raises(InputError, match=f"{path}:2: raised RuntimeError"):
        load_patch_mutants(guards_project / "mutants", guards_project)


def test_a_syntax_error_is_named_with_its_line(guards_project: Path) -> None:
    path = write(guards_project / "mutants", "syntax.py", "x = (\n")
    with pytest.raises(InputError, match=f"{path}:1: not valid Python"):
        load_patch_mutants(guards_project / "mutants", guards_project)


def test_loading_writes_no_bytecode_next_to_the_file(guards_project: Path) -> None:
    write(guards_project / "mutants", "quiet.py", "MUTANTS = []\n")
    write(guards_project / "mutants", "_helpers.py", "raise RuntimeError('never loaded')\n")
    assert load_patch_mutants(guards_project / "mutants", guards_project) == []
    assert sorted(p.name for p in (guards_project / "mutants").iterdir()) == ["_helpers.py",
                                                                      "quiet.py"]


def test_no_directory_means_no_patch_mutants(tmp_path: Path) -> None:
    assert load_patch_mutants(tmp_path / "missing", tmp_path) == []


def test_a_skipped_patch_mutant_is_ignored_with_its_reason_and_never_run(
        guards_project: Path) -> None:
    write(guards_project / "mutants", "guards.py", """\
        from metaeval.mutation.patches import PatchMutant, patch_mutant

        MUTANTS = [
            PatchMutant(id="left-out", target="pkg_patches_demo.guards:allowed",
                        replacement="lambda tool: True", breaks="The guard allows all.",
                        skip="example: edit me"),
            PatchMutant(id="runs", target="pkg_patches_demo.guards:allowed",
                        replacement="lambda tool: True", breaks="The guard allows all."),
        ]


        @patch_mutant("decorated", target="pkg_patches_demo.guards:allowed",
                      breaks="The guard allows all.", skip="  decided elsewhere  ")
        def allow_everything(tool):
            return True
        """)
    by_id = {m.id: m for m in load_patch_mutants(guards_project / "mutants", guards_project)}
    assert by_id["left-out"].ignored_reason == "example: edit me"
    assert by_id["decorated"].ignored_reason == "decided elsewhere"
    assert by_id["runs"].ignored_reason == ""  # the default runs
    result = settle(by_id["left-out"])
    assert result is not None
    assert (result.status, result.detail) == (Status.IGNORED, "example: edit me")
    assert settle(by_id["runs"]) is None


def test_a_skip_that_is_not_text_is_named(guards_project: Path) -> None:
    path = write(guards_project / "mutants", "bad.py", """\
        from metaeval.mutation.patches import PatchMutant

        MUTANTS = [PatchMutant(id="x", target="pkg_patches_demo.guards:allowed",
                               replacement="None", breaks="Breaks the guard.", skip=True)]
        """)
    with pytest.raises(InputError, match=f"{path}:3: skip: got True; expected a string"):
        load_patch_mutants(guards_project / "mutants", guards_project)
