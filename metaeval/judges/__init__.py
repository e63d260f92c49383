"""Judges: the protocol, the strict reply parser, fakes, adapters and the reply cache."""

from metaeval.judges.base import (
    CallInfo,
    Choice,
    Judge,
    JudgeIdentity,
    JudgeReply,
    Mode,
    Scale,
    Value,
    unscored_reply,
)
from metaeval.judges.fakes import AlwaysPassJudge, BiasedJudge, SteadyJudge
from metaeval.judges.spec import build_judge

__all__ = ["AlwaysPassJudge", "BiasedJudge", "CallInfo", "Choice", "Judge", "JudgeIdentity",
           "JudgeReply", "Mode", "Scale", "SteadyJudge", "Value", "build_judge",
           "unscored_reply"]
