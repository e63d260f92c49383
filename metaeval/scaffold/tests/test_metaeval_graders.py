"""The graders of this project agree with the human labels in meta_sets/.

This is the test that kills a mutant in a grader: break a grader and its TPR
or TNR drops under the bar. The bars are those of [tool.metaeval.meta_eval] in
pyproject.toml, the same that `metaeval meta-eval` and `metaeval gate` read:
change them there, never here, so that the three cannot disagree.
"""

from pathlib import Path

from metaeval.testing import assert_graders

PROJECT = Path(__file__).resolve().parent.parent


def test_graders_meet_their_bars() -> None:
    assert_graders(project=PROJECT)
