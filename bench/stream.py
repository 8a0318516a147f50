"""Benchmark: agent output through parsing and recording, as a run does it.

Pushes 200,000 lines — a mix of Claude Code stream-json events (assistant text, tool use,
tool results, usage) and plain lines — through the runner's per-line work
(:class:`promptdeck.core.run.runner.StreamProcessor`: 64 KB chunks as read from the pipe, cut into
lines, the backend's parser, the signal parser, the unbuffered append to ``stream.jsonl``, the
listener) and prints lines per second.
Target: at least 100,000 lines/s.

Usage: ``python bench/stream.py [--lines N]``
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from promptdeck.core.agents.claude import StreamJsonParser
from promptdeck.core.records.writer import RunRecord
from promptdeck.core.run.stream import RunEvent, StreamProcessor
from promptdeck.core.run.supervise import READ_CHUNK


def sample_lines() -> list[bytes]:
    """One cycle of realistic output; the benchmark repeats it."""
    usage = {"input_tokens": 12, "cache_read_input_tokens": 40_000, "output_tokens": 80}
    events = [
        {
            "type": "assistant",
            "message": {
                "content": [
                    {"type": "text", "text": "Reading the story file and planning the change."}
                ],
                "usage": usage,
            },
        },
        {
            "type": "assistant",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "pytest -q tests/unit"},
                    }
                ],
                "usage": usage,
            },
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "....................\n20 passed in 0.41s",
                    }
                ]
            },
        },
        {
            "type": "assistant",
            "message": {
                "content": [
                    {
                        "type": "text",
                        "text": "All tests pass on empty input.\nNext: the error path.",
                    }
                ],
                "usage": usage,
            },
        },
    ]
    lines = [json.dumps(e).encode() + b"\n" for e in events]
    lines += [
        b"Compiling src/ledger/parse.py\n",
        b"warning: unused import in tests/test_parse.py\n",
        b"  ok  tests/test_parse.py::test_empty\n",
        b"  ok  tests/test_parse.py::test_rows\n",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    args = parser.parse_args()
    cycle = sample_lines()
    lines = (cycle * (args.lines // len(cycle) + 1))[: args.lines]
    lines[-1] = (
        json.dumps(
            {
                "type": "assistant",
                "message": {"content": [{"type": "text", "text": "IMPLEMENTATION COMPLETE: 1-2"}]},
            }
        ).encode()
        + b"\n"
    )
    events = 0

    def listener(event: RunEvent) -> None:
        nonlocal events
        events += 1

    with tempfile.TemporaryDirectory() as tmp:
        record = RunRecord.create(Path(tmp), "1-2", "dev")
        processor = StreamProcessor(StreamJsonParser(200_000), record, listener)
        # As the runner reads a pipe: 64 KB chunks that cut lines anywhere.
        data = b"".join(lines)
        chunks = [data[i : i + READ_CHUNK] for i in range(0, len(data), READ_CHUNK)]
        start = time.perf_counter()
        for chunk in chunks:
            processor.stdout_chunk(chunk)
        processor.end_of_stream(True)
        processor.finish()
        elapsed = time.perf_counter() - start
        record.close()
        size = record.stream_path.stat().st_size
        signals = len(processor.signal_parser.signals)
    rate = len(lines) / elapsed
    print(
        f"stream: {len(lines):,} lines ({size / 1e6:.1f} MB) parsed and recorded in {elapsed:.2f} s"
    )
    print(f"stream: {rate:,.0f} lines/s ({events:,} listener events, {signals} signal)")
    print(f"stream: target 100,000 lines/s: {'met' if rate >= 100_000 else 'NOT met'}")


if __name__ == "__main__":
    main()
