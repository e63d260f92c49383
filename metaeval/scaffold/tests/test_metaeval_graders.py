"""The graders of this project agree with the human labels in meta_sets/.

This is the test that kills a mutant in a grader: break a grader and its TPR
or TNR drops under the bar.
"""

from pathlib import Path

from metaeval.testing import assert_graders

META_SETS = Path(__file__).resolve().parent.parent / "meta_sets"


def test_graders_meet_their_bars() -> None:
    assert_graders(META_SETS, min_tpr=1.0, min_tnr=1.0)
