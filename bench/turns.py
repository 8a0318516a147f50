"""Benchmark: a phase's turn list from a 2,000-request, 200 MB recorded stream.

A synthetic Claude Code ``stream-json`` stream: 2,000 answers, each with a tool call and its
usage, each followed by a tool result of ~100 KB (file reads and command output), every tenth
answer a subagent's (its ``Task`` call's id as ``parent_tool_use_id``). The turn list is built
from it (:func:`promptdeck.core.flight.build_turns`, the bounded line reader included); then
the same at half the size, to show the time grows linearly with the stream.

Run: .venv/bin/python bench/turns.py
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from promptdeck.core.flight import build_turns

REQUESTS = 2_000
TARGET_BYTES = 206 * 1024 * 1024  # what the results come to; the stream is a little over 200 MB


def _write_stream(folder: Path, requests: int, result_bytes: int) -> Path:
    run = folder / ".promptdeck" / "runs" / "20250101-000000-000000-dev-1-2-bench0"
    run.mkdir(parents=True)
    body = ("x" * 79 + "\n") * (result_bytes // 80)
    half = ("y" * 71 + "\n") * (result_bytes // 160)
    numbered = "".join(f"{n:>6}\t{text}\n" for n, text in enumerate(half.splitlines(), 1))
    with (run / "stream.jsonl").open("w", encoding="utf-8") as out:
        out.write(json.dumps({"type": "system", "subtype": "init", "session_id": "bench"}) + "\n")
        for n in range(requests):
            task = f"toolu_task{n // 10}"
            parent = task if n % 10 == 9 else None
            call = f"toolu_{n}"
            name, args = (
                ("Read", {"file_path": f"src/m{n}.py"})
                if n % 2
                else ("Bash", {"command": f"pytest -k t{n}"})
            )
            if n % 10 == 8:
                name, args, call = "Task", {"prompt": "check", "description": "d"}, task
            usage = {
                "input_tokens": 5,
                "cache_read_input_tokens": 1000 + n * 10,
                "cache_creation_input_tokens": 10,
                "output_tokens": 50,
            }
            message = {
                "id": f"msg_{n}",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "tool_use", "id": call, "name": name, "input": args}],
                "usage": usage,
            }
            out.write(
                json.dumps({"type": "assistant", "message": message, "parent_tool_use_id": parent})
                + "\n"
            )
            line: dict[str, object] = {"type": "user", "parent_tool_use_id": parent}
            shown = body
            if name == "Read":  # as the client writes a read: numbered, and the file's text
                shown = numbered
                line["tool_use_result"] = {"type": "text", "file": {"content": half}}
            result = {"type": "tool_result", "tool_use_id": call, "content": shown}
            line["message"] = {"content": [result]}
            out.write(json.dumps(line) + "\n")
    return run


def _measure(requests: int, total: int) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        run = _write_stream(root, requests, total // requests)
        size = (run / "stream.jsonl").stat().st_size
        best = float("inf")
        count = 0
        for _ in range(3):
            start = time.perf_counter()
            turns = build_turns(run, root, "claude", None, environ={})
            best = min(best, time.perf_counter() - start)
            count = turns.request_count
        return best, size, count


def main() -> None:
    for requests, total in ((REQUESTS // 2, TARGET_BYTES // 2), (REQUESTS, TARGET_BYTES)):
        seconds, size, count = _measure(requests, total)
        print(
            f"{count:>5} requests, {size / 1024 / 1024:6.1f} MB stream: "
            f"turn list in {seconds:.2f} s (best of 3; {size / seconds / 1e6:.0f} MB/s)"
        )


if __name__ == "__main__":
    main()
