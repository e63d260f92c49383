"""Convert LLMBar (Zeng et al., ICLR 2024) into judge items and recorded verdicts.

A dataset file holds ``{"input", "output_1", "output_2", "label"}`` (label 1 or
2: the output a human expert judged better); a result file adds the judge's
``winner`` with the outputs in the original order (``swap = False``) and
swapped (``swap = True``, already mapped back to the original numbering). Items
become pairwise judge items (``a`` = output_1); verdicts become recorded
verdicts with ``order`` ``ab`` and ``ba``. The "Swap" strategy re-asks a pair
whose two orders disagreed, so ``results`` may hold two rounds: the last round
is the strategy's verdict and the one converted. Nothing is re-judged, and the
repository's own ``statistics.json`` is never read (its kappa codings are mixed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from metaeval.contract import JsonObject
from metaeval.errors import InputError
from metaeval.importers.common import json_array
from metaeval.loaders.judge_items import Order

_ORDERS = {"swap = False": Order.AB, "swap = True": Order.BA}
_LABELS = {1: "a", 2: "b", "1": "a", "2": "b"}


@dataclass(frozen=True, slots=True)
class Converted:
    items: tuple[JsonObject, ...]
    recorded: tuple[JsonObject, ...]


def convert_llmbar(dataset: Path, result: Path | None = None, *,
                   prefix: str = "llmbar") -> Converted:
    """Items from ``dataset``; recorded verdicts from ``result`` (when given), which
    must list the same pairs in the same order."""
    pairs = json_array(dataset)
    items: list[JsonObject] = []
    for i, pair in enumerate(pairs):
        where = f"{dataset}: [{i}]"
        if not isinstance(pair, dict) or pair.get("label") not in _LABELS:
            raise InputError(f"{where}.label: got {pair!r:.80}; expected 1 or 2")
        texts = [pair.get(k) for k in ("input", "output_1", "output_2")]
        if not all(isinstance(t, str) for t in texts):
            raise InputError(f"{where}: expected string input, output_1 and output_2")
        items.append({"id": f"{prefix}-{i:03d}", "prompt": texts[0], "response_a": texts[1],
                      "response_b": texts[2], "label": _LABELS[str(pair["label"])]})
    recorded: list[JsonObject] = []
    if result is not None:
        judged = json_array(result)
        if len(judged) != len(pairs):
            raise InputError(f"{result}: got {len(judged)} pairs; expected {len(pairs)}, "
                             f"as in {dataset}")
        for i, (pair, run) in enumerate(zip(pairs, judged, strict=True)):
            if not isinstance(run, dict) or not isinstance(pair, dict) or (
                    run.get("input"), run.get("output_1")) != (pair["input"], pair["output_1"]):
                raise InputError(f"{result}: [{i}]: not the same pair as {dataset} [{i}]")
            recorded.extend(_verdicts(str(items[i]["id"]), run, f"{result}: [{i}]"))
    return Converted(tuple(items), tuple(recorded))


def _verdicts(item_id: str, run: JsonObject, where: str) -> list[JsonObject]:
    results = run.get("results")
    if not isinstance(results, list):
        raise InputError(f"{where}.results: got {results!r:.80}; expected a list")
    if not results or not isinstance(results[-1], dict):
        raise InputError(f"{where}.results[-1]: got {results[-1:]!r:.80}; expected an object")
    out: list[JsonObject] = []
    entry = results[-1]
    for key, order in _ORDERS.items():
        verdict = entry.get(key)
        if not isinstance(verdict, dict):
            continue
        winner = verdict.get("winner")
        completion = verdict.get("completion")
        raw = completion[0] if isinstance(completion, list) and completion and isinstance(
            completion[0], str) else ""
        # A winner that is neither "1" nor "2" is recorded as null: unscored, not dropped.
        out.append({"id": item_id, "order": order.value, "sample": 0,
                    "verdict": _LABELS.get(str(winner)), "raw": raw})
    return out

