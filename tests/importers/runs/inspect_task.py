"""An inspect_ai eval, run by inspect_ai itself with its mock model, offline.

Run as a script (``python inspect_task.py LOG_DIR``) by the inspect importer's
tests, in a process of its own: inspect_ai sets up asyncio, logging and a display,
none of which should leak into the test session. Writes ``refunds.eval`` and the
same log as ``refunds.json`` (inspect_ai's own writer) into LOG_DIR.
"""

from __future__ import annotations

import sys
from pathlib import Path

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import write_eval_log
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import store

from tests.importers.runs.inspect_cases import CASES, EPOCHS

ORDERS = {"A-1182": 49.99, "A-2000": 20.0, "A-3000": 5.0}


@tool  # type: ignore[untyped-decorator]  # inspect_ai is skipped by mypy: an extra
def get_order() -> Tool:
    async def execute(order_id: str) -> str:
        """Look an order up.

        Args:
            order_id: the order's id.
        """
        store().set("looked_up", order_id)
        if order_id not in ORDERS:
            raise ToolError(f"no order {order_id}")
        return f'{{"order_id": "{order_id}", "total": {ORDERS[order_id]}}}'

    return execute




def main(log_dir: Path) -> None:
    # The mock model answers in turn; one sample at a time runs the samples in
    # dataset order, epoch after epoch (the log holds them by sample, then epoch).
    outputs = [output for _ in range(EPOCHS) for _, order, answer in CASES for output in (
        ModelOutput.for_tool_call("mockllm/model", "get_order", {"order_id": order}),
        ModelOutput.from_content("mockllm/model", answer))]
    task = Task(dataset=[Sample(input=f"Refund order {order}.", target="refunded", id=sid,
                                metadata={"tier": "gold" if sid == "refund-1" else "basic"})
                         for sid, order, _ in CASES],
                solver=[use_tools(get_order()), generate()], scorer=includes(),
                name="refunds", epochs=EPOCHS)
    log = eval(task, model=get_model("mockllm/model", custom_outputs=outputs),
               log_dir=str(log_dir), display="none", max_samples=1)[0]
    assert log.status == "success", log.error
    write_eval_log(log, str(log_dir / "refunds.json"), format="json")
    Path(log.location).rename(log_dir / "refunds.eval")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
