"""Built-in graders and the registry that builds graders from check specs."""

from metaeval.graders.base import RuleGrader
from metaeval.graders.registry import BUILTINS, build_grader, build_graders

__all__ = ["BUILTINS", "RuleGrader", "build_grader", "build_graders"]
