"""A mutants file is the user's code: it may be in another encoding, call exit() or
os._exit() while loading, or exit when its patch goes in. None of it ends
metaeval: each is a clear error naming the file, or that mutant's RuntimeError.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.errors import ExitCode, InputError
from metaeval.mutation.apart import load_patch_mutants
from metaeval.mutation.isolation.options import Isolation, RunOptions
from metaeval.mutation.model import Status
from metaeval.mutation.patches import shown
from tests.builders import run_here
from tests.mutation.conftest import SUBPROCESS_SLOW, calc_project, without_steps, write

METAEVAL = str(Path(sys.executable).with_name("metaeval"))
DECLARE = ("from metaeval.mutation.patches import PatchMutant\n"
           "MUTANTS = [PatchMutant(id='m', target='pkg_patches_demo.guards:allowed',\n"
           "                       replacement='lambda tool: True', breaks='All allowed.')]\n")


def test_a_file_not_in_utf8_is_named_with_its_line(guards_project: Path) -> None:
    path = guards_project / "mutants" / "latin.py"
    path.parent.mkdir()
    path.write_bytes(DECLARE.encode() + b"# caf\xe9\n")
    with pytest.raises(InputError) as caught:
        load_patch_mutants(guards_project / "mutants", guards_project)
    assert str(caught.value) == (f"{shown(path)}:4: not valid UTF-8 (byte 0xe9); save it as "
                                 "UTF-8, or declare its encoding on its first line "
                                 "(# -*- coding: latin-1 -*-)")


def test_a_file_that_declares_its_encoding_loads(guards_project: Path) -> None:
    path = guards_project / "mutants" / "latin.py"
    path.parent.mkdir()
    path.write_bytes(b"# -*- coding: latin-1 -*-\n" + DECLARE.encode() + b"# caf\xe9\n")
    assert [m.id for m in load_patch_mutants(guards_project / "mutants", guards_project)] == ["m"]


def test_exit_while_loading_is_an_error_naming_the_file_and_line(guards_project: Path) -> None:
    path = write(guards_project / "mutants", "leaves.py", "import sys\nsys.exit(4)\n")
    with pytest.raises(InputError) as caught:
        load_patch_mutants(guards_project / "mutants", guards_project)
    assert str(caught.value) == (f"{shown(path)}:2: called exit(4) while loading; a mutants "
                                 "file must only declare mutants")


def test_os_exit_while_loading_is_an_error_naming_the_file(guards_project: Path) -> None:
    write(guards_project / "mutants", "a_good.py", DECLARE)
    path = write(guards_project / "mutants", "b_gone.py", "import os\nos._exit(0)\n")
    with pytest.raises(InputError) as caught:
        load_patch_mutants(guards_project / "mutants", guards_project)
    assert str(caught.value) == (f"{shown(path)}: ended the process (exit status 0) while "
                                 "loading; a mutants file must only declare mutants")


def test_the_command_line_says_so_instead_of_ending_with_the_files_code(
        tmp_path: Path) -> None:
    root = calc_project(tmp_path, "from calc import double\n\n\ndef test_double():\n"
                                  "    assert double(2) == 4\n")
    write(root / "mutants", "calc_mutants.py", "import os\nos._exit(0)\n")
    done = subprocess.run([METAEVAL, "mutate"], cwd=root, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == ExitCode.BAD_INPUT, (done.stdout, done.stderr)
    assert without_steps(done.stderr) == ("error: mutants/calc_mutants.py: ended the process "
                           "(exit status 0) while loading; a mutants file must only declare "
                           "mutants\n")


@pytest.mark.parametrize("isolation", [Isolation.FORK, SUBPROCESS_SLOW])
def test_a_patch_that_exits_when_applied_is_a_runtime_error_with_the_reason(
        tmp_path: Path, isolation: Isolation) -> None:
    root = calc_project(tmp_path, "from calc import double, unused\n\n\ndef test_double():\n"
                                  "    assert double(2) == 4\n    assert unused(1) == 1\n")
    write(root / "mutants", "calc_mutants.py", """\
        from metaeval.mutation.patches import PatchMutant

        MUTANTS = [
            PatchMutant(id="exits", target="calc:unused",
                        replacement="__import__('sys').exit(4)", breaks="Ends the process."),
            PatchMutant(id="kept", target="calc:unused",
                        replacement="lambda x: 0", breaks="A plain kill beside it."),
        ]
        """)
    options = RunOptions(root, root / "mutants", jobs=2, isolation=isolation)
    results = run_here(load_patch_mutants(root / "mutants", root), options).results
    exits, kept = results
    assert exits.status is Status.RUNTIME_ERROR
    assert "SystemExit: 4" in exits.detail
    assert kept.status is Status.KILLED  # the other mutant of the run is unaffected
