"""Patch mutants for the judges: the strict reply parser, the quoting of data, and
the judge-backed grader. Each switches off one thing that keeps a model's reply
from being guessed at or a response from passing for instructions."""

from __future__ import annotations

import dataclasses

from metaeval.contract import EvalInput, Finding, Outcome
from metaeval.graders import judge_check
from metaeval.judges.base import JudgeReply, Scale
from metaeval.mutation.patches import PatchMutant, patch_mutant

_grade = judge_check.JudgeGrader.grade

MUTANTS = [
    PatchMutant(id="markers-not-neutralised", target="metaeval.judges.parse:quote",
                replacement='lambda text, label="RESPONSE": '
                            'f"<<<{label}>>>\\n{text}\\n<<<END {label}>>>"',
                breaks="A response containing <<<END RESPONSE>>> closes the data block and "
                       "its text passes for instructions."),
    PatchMutant(id="decision-before-explanation-accepted",
                target="metaeval.judges.parse:_explained_first",
                replacement='lambda obj, decision: ""',
                breaks="A JSON reply that decides before it explains (or never explains) "
                       "is read."),
    PatchMutant(id="score-out-of-range-accepted", target="metaeval.judges.parse:_in_scale",
                replacement="lambda number, scale, raw: JudgeReply(float(number), raw)",
                breaks="A score outside the judge's scale (11 of 1..10, NaN) is taken as is."),
    PatchMutant(id="pairwise-parser-accepts-anything",
                target="metaeval.judges.parse:parse_pairwise",
                replacement="lambda raw: JudgeReply(Choice.B if 'b' in raw.lower() else "
                            "Choice.A, raw)",
                breaks="Any pairwise reply is read as a choice, never unscored."),
]


@patch_mutant("strict-parser-accepts-anything", target="metaeval.judges.parse:parse_pointwise",
              breaks="The strict judge parser guesses: 'I would rate this 3 out of 10' "
                     "becomes 3, and a reply with no number becomes the top score.")
def parse_leniently(raw: str, scale: Scale) -> JudgeReply:
    import re

    found = re.search(r"\d+(?:\.\d+)?", raw)
    return JudgeReply(float(found.group()) if found else float(scale.high), raw)


@patch_mutant("judge-context-without-state-diff", target="metaeval.graders.judge_check:context",
              breaks="The judge is told only the instruction, not what changed in the world "
                     "nor what the tools returned, so it grades the agent's claim.")
def context_without_evidence(x: EvalInput) -> str:
    return x.task.instruction or "(no instruction recorded)"


@patch_mutant("unparseable-judge-reply-passes",
              target="metaeval.graders.judge_check:JudgeGrader.grade",
              breaks="A judge reply the parser could not read counts as a pass.")
def unscored_reply_passes(self: judge_check.JudgeGrader, x: EvalInput) -> Finding:
    finding = _grade(self, x)
    if finding.outcome is Outcome.UNSCORED and finding.reason.startswith("judge unscored"):
        return dataclasses.replace(finding, outcome=Outcome.PASS)
    return finding
