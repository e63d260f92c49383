"""Peak memory of `metaeval import` against the size of the log it reads.

Writes a log of about `--mb` megabytes in each format asked for (Anthropic
Messages requests, one a line; OTLP JSON, one trace a line, three GenAI spans a
trace; an inspect_ai `.eval` zip, one sample a member), runs `metaeval import`
on it in a process of its own and reads that process's peak RSS from `wait4`.
It prints the peak, the input's size and their ratio; SECURITY.md states the
bound this shows. `--check RATIO` exits 1 when a format's peak passes RATIO
times its input (the `.eval` zip is measured against what it decompresses to).

    python3 benchmarks/import_memory.py                      # 200 MB, every format
    python3 benchmarks/import_memory.py --mb 50 --formats anthropic,otel --check 1.0

It is not a test and nothing in `metaeval/` imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

PADDING = "The customer says the parcel arrived broken and asks for a refund. " * 12


def anthropic_log(path: Path, size: int) -> int:
    written, n = 0, 0
    with path.open("w") as f:
        while written < size:
            n += 1
            line = json.dumps({"id": f"run-{n}", "model": "claude-x", "max_tokens": 512,
                               "system": f"You are a support agent. {PADDING}",
                               "messages": [
                {"role": "user", "content": f"Order A-{n} arrived broken. {PADDING}"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": f"t{n}", "name": "get_order",
                     "input": {"order_id": f"A-{n}"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}",
                                              "content": json.dumps({"total": 49.99,
                                                                     "note": PADDING})}]}],
                "response": {"type": "message", "role": "assistant", "content": [
                    {"type": "text", "text": f"Refunded A-{n}."}]}}) + "\n"
            f.write(line)
            written += len(line)
    return written


def _attr(key: str, value: object) -> dict[str, object]:
    if isinstance(value, str):
        return {"key": key, "value": {"stringValue": value}}
    return {"key": key, "value": {"stringValue": json.dumps(value)}}


def otel_log(path: Path, size: int) -> int:
    written, n = 0, 0
    with path.open("w") as f:
        while written < size:
            n += 1
            trace = f"{n:032x}"
            user = {"role": "user", "parts": [{"type": "text", "content": f"Refund A-{n}. "
                                               + PADDING}]}
            ask = {"role": "assistant", "parts": [{"type": "tool_call", "id": f"c{n}",
                                                   "name": "get_order",
                                                   "arguments": {"order_id": f"A-{n}"}}]}
            answer = {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{n}",
                                                 "response": PADDING}]}
            done = {"role": "assistant", "parts": [{"type": "text", "content": "Refunded."}]}
            spans = [
                {"traceId": trace, "spanId": "1", "name": "chat", "startTimeUnixNano": "1",
                 "endTimeUnixNano": "2", "attributes": [
                     _attr("gen_ai.operation.name", "chat"),
                     _attr("gen_ai.conversation.id", f"conv-{n}"),
                     _attr("gen_ai.input.messages", [user]),
                     _attr("gen_ai.output.messages", [ask])]},
                {"traceId": trace, "spanId": "2", "name": "execute_tool",
                 "startTimeUnixNano": "3", "endTimeUnixNano": "4", "attributes": [
                     _attr("gen_ai.operation.name", "execute_tool"),
                     _attr("gen_ai.tool.name", "get_order"),
                     _attr("gen_ai.tool.call.id", f"c{n}")]},
                {"traceId": trace, "spanId": "3", "name": "chat", "startTimeUnixNano": "5",
                 "endTimeUnixNano": "6", "attributes": [
                     _attr("gen_ai.operation.name", "chat"),
                     _attr("gen_ai.input.messages", [user, ask, answer]),
                     _attr("gen_ai.output.messages", [done])]}]
            line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n"
            f.write(line)
            written += len(line)
    return written


def inspect_log(path: Path, size: int) -> int:
    written, n = 0, 0
    ids: list[str] = []
    members: list[tuple[str, bytes]] = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        while written < size:
            n += 1
            ids.append(f"s{n}")
            data = json.dumps({"id": f"s{n}", "epoch": 1, "input": f"Refund A-{n}. {PADDING}",
                               "target": "refunded", "messages": [
                {"role": "user", "content": f"Refund A-{n}. {PADDING}"},
                {"role": "assistant", "content": f"Refunded. {PADDING}"}],
                "scores": {"includes": {"value": "C"}}}).encode()
            z.writestr(f"samples/s{n}_epoch_1.json", data)
            written += len(data)
        members.append(("header.json", json.dumps({
            "version": 2, "status": "success", "eval": {
                "task": "refunds", "model": "mockllm/model",
                "dataset": {"sample_ids": ids}, "config": {"epochs": 1}}}).encode()))
        for name, data in members:
            z.writestr(name, data)
            written += len(data)
    return written


WRITERS = {"anthropic": (anthropic_log, "log.jsonl"), "otel": (otel_log, "spans.jsonl"),
           "inspect": (inspect_log, "log.eval")}


def measure(fmt: str, work: Path, size: int) -> tuple[int, int, float, int]:
    """(input bytes, peak RSS bytes, seconds, exit code) of one import."""
    writer, name = WRITERS[fmt]
    log = work / name
    read = writer(log, size)
    out = work / f"{fmt}.jsonl"
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", "from metaeval.cli import main; main()",
                              "import", fmt, str(log), "-o", str(out), "--format", "json"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    log.unlink()
    out.unlink(missing_ok=True)
    return read, usage.ru_maxrss * 1024, seconds, child.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--formats", default="anthropic,otel,inspect")
    parser.add_argument("--check", type=float, default=None,
                        help="exit 1 when a peak passes this many times its input")
    args = parser.parse_args()
    failed = False
    print(f"{'format':<10} {'input MB':>9} {'peak RSS MB':>12} {'ratio':>6} {'s':>6}  exit")
    for fmt in args.formats.split(","):
        with tempfile.TemporaryDirectory(prefix="metaeval-import-memory-") as tmp:
            read, peak, seconds, code = measure(fmt, Path(tmp), args.mb * 1_000_000)
        ratio = peak / read
        print(f"{fmt:<10} {read / 1e6:>9.1f} {peak / 1e6:>12.1f} {ratio:>6.2f} {seconds:>6.1f}"
              f"  {code}")
        failed |= code != 0 or (args.check is not None and ratio > args.check)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
