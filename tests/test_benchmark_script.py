"""Smoke test of benchmarks/mutation_speed.py: flags, summary math, detection probes.

Nothing is downloaded and no tool is run; the benchmark itself is run by hand.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


bt = _load("bench_tools")
ms = _load("mutation_speed")

FORGED = (
    "--- a/src/itsdangerous/signer.py",
    "+++ b/src/itsdangerous/signer.py",
    "@@ -229,7 +229,7 @@",
    "         try:",
    "             sig = base64_decode(sig)",
    "         except Exception:",
    "-            return False",
    "+            return True",
    " ",
)
# The same edit on the last `return False`, after the loop: tests kill it, it is not the gap.
LAST_RETURN = (
    "@@ -239,4 +239,4 @@",
    "                 return True",
    " ",
    "-        return False",
    "+        return True",
)


def test_flags_default_and_reject_unknown_tools(capsys: pytest.CaptureFixture[str]) -> None:
    args = ms.parse_args([])
    assert (args.runs, args.jobs, args.target, args.cosmic_ray_runs) == (3, 2, "both", 3)
    assert args.tools == ["metaeval", "mutmut", "cosmic-ray"]
    assert ms.parse_args(["--tools", "mutmut", "--runs", "2"]).cosmic_ray_runs == 2
    with pytest.raises(SystemExit) as exc:
        ms.parse_args(["--tools", "metaeval,pitest"])
    assert exc.value.code == 2
    assert "'metaeval,pitest'" in capsys.readouterr().err


def test_summary_takes_the_median_and_ratio_is_metaeval_over_other() -> None:
    mutants = tuple(bt.Mutant("f", "killed", ()) for _ in range(100))
    runs = [bt.ToolRun("mutmut", "t", i, wall, mutants) for i, wall in enumerate((30, 10, 20))]
    mm = ms.summarize(runs)
    assert (mm.median_wall, mm.min_wall, mm.max_wall, mm.mutants) == (20, 10, 30, 100)
    assert mm.per_second == pytest.approx(5.0)
    assert mm.ms_per_mutant == pytest.approx(200.0)
    me = ms.summarize([bt.ToolRun("metaeval", "t", 0, 4.0, mutants[:60])])
    assert ms.speed_ratio(me, mm) == pytest.approx(3.0)
    assert ms.speed_ratio(mm, me) == pytest.approx(1 / 3)


def test_forged_token_probe_finds_the_except_branch_only() -> None:
    forged = bt.Mutant("Signer.verify_signature", "Survived", FORGED)
    last = bt.Mutant("Signer.verify_signature", "Killed", LAST_RETURN)
    elsewhere = bt.Mutant("SigningAlgorithm.verify_signature", "Survived", FORGED)
    assert ms.forged_token([forged, last, elsewhere]) == [forged]
    assert ms.verdict([forged], ms.SURVIVED) == (True, "Survived")
    assert ms.verdict([last], ms.SURVIVED) == (False, "Killed")
    assert ms.verdict([], ms.SURVIVED) == (False, "no such mutant generated")


def test_expiry_probe_wants_the_inclusive_comparison() -> None:
    inclusive = bt.Mutant("TimestampSigner.unsign", "survived",
                          ("-            if age > max_age:", "+            if age >= max_age:"))
    negated = bt.Mutant("TimestampSigner.unsign", "killed",
                        ("-            if age > max_age:", "+            if age <= max_age:"))
    found = ms.expiry_boundary([inclusive, negated], "age > max_age", "age >= max_age")
    assert found == [inclusive]


def test_mutmut_names_map_to_qualnames() -> None:
    assert bt._mutmut_function("xǁSignerǁverify_signature__mutmut_12") == (
        "Signer.verify_signature")
    assert bt._mutmut_function("x_want_bytes__mutmut_3") == "want_bytes"
