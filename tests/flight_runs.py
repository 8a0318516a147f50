"""Recorded runs for the flight recorder's tests: a run folder with the stream a client wrote.

:func:`claude_stream` is what Claude Code's ``stream-json`` prints for a phase that reads a file
the prompt injected, starts a subagent (whose own requests carry the ``Task`` call's id) and
finishes; :func:`write_run` keeps a stream as a run's record, with its meta, result and cost.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SESSION = "5f0c7e2a-1111-4222-8333-944455556666"
INJECTED = "docs/architecture.md"
INJECTED_TEXT = "# Architecture\n\nOne parser per format.\n"
SYSTEM = (
    "Layer-1 guardrails\n\n<file_injections>\n"
    f'  <file path="{INJECTED}">\n{INJECTED_TEXT}\n  </file>\n</file_injections>\n'
)


def usage(plain: int, read: int, write: int, output: int) -> dict[str, int]:
    """A Claude ``message.usage``."""
    return {
        "input_tokens": plain,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "output_tokens": output,
    }


def assistant(
    msg_id: str,
    use: Mapping[str, Any] | None,
    content: Sequence[Mapping[str, Any]],
    parent: str | None = None,
) -> dict[str, Any]:
    """One ``assistant`` line."""
    message: dict[str, Any] = {
        "id": msg_id,
        "model": "claude-sonnet-4-6",
        "role": "assistant",
        "content": list(content),
    }
    if use is not None:
        message["usage"] = dict(use)
    return {"type": "assistant", "message": message, "parent_tool_use_id": parent}


def tool_result(
    call: str, text: str, parent: str | None = None, file: str | None = None
) -> dict[str, Any]:
    """One ``user`` line carrying a tool result."""
    line: dict[str, Any] = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call, "content": text}],
        },
        "parent_tool_use_id": parent,
    }
    if file is not None:
        line["tool_use_result"] = {"type": "text", "file": {"filePath": "x", "content": file}}
    return line


def numbered(text: str) -> str:
    """A file as Claude Code's Read returns it: each line after its number and a tab."""
    return "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(text.splitlines(), 1))


def claude_stream(cwd: str, reported: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """Read the injected file, run a subagent (two requests of its own), then finish."""
    read_call, task_call = "toolu_read1", "toolu_task1"
    lines: list[dict[str, Any]] = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": SESSION,
            "cwd": cwd,
            "claude_code_version": "2.1.197",
        },
        assistant(
            "msg_1",
            usage(10, 0, 5000, 40),
            [
                {
                    "type": "tool_use",
                    "id": read_call,
                    "name": "Read",
                    "input": {"file_path": f"{cwd}/{INJECTED}"},
                }
            ],
        ),
        tool_result(read_call, numbered(INJECTED_TEXT), file=INJECTED_TEXT),
        assistant("msg_2", usage(5, 5000, 300, 20), [{"type": "text", "text": "Delegating"}]),
        assistant(
            "msg_2",
            usage(5, 5000, 300, 60),
            [
                {
                    "type": "tool_use",
                    "id": task_call,
                    "name": "Task",
                    "input": {"description": "check tests", "prompt": "Run the tests and report."},
                }
            ],
        ),
        assistant(
            "msg_s1",
            usage(900, 0, 0, 30),
            [
                {
                    "type": "tool_use",
                    "id": "toolu_sub_bash",
                    "name": "Bash",
                    "input": {"command": "pytest -q"},
                }
            ],
            parent=task_call,
        ),
        tool_result("toolu_sub_bash", "3 passed\n", parent=task_call),
        assistant(
            "msg_s2",
            usage(50, 900, 0, 25),
            [{"type": "text", "text": "3 passed"}],
            parent=task_call,
        ),
        tool_result(task_call, "The tests pass."),
        assistant(
            "msg_3",
            usage(8, 5300, 120, 15),
            [{"type": "text", "text": "IMPLEMENTATION COMPLETE: 1.2"}],
        ),
    ]
    total = reported or usage(973, 11200, 5420, 170)
    lines.append(
        {"type": "result", "subtype": "success", "session_id": SESSION, "usage": dict(total)}
    )
    return lines


def write_run(
    root: Path,
    run_id: str,
    events: Sequence[Mapping[str, Any] | str],
    *,
    phase: str = "dev",
    agent: str = "claude",
    dollars: float | None = None,
    model: str = "claude-sonnet-4-6",
    simulation: bool = False,
    started: float = 1_760_000_000.0,
    system: str = SYSTEM,
) -> Path:
    """A finished run's folder under ``root`` holding ``events`` as its ``stream.jsonl``."""
    folder = root / ".promptdeck" / "runs" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "run_id": run_id,
        "story": "1.2",
        "phase": phase,
        "attempt": 1,
        "mode": "create",
        "agent": "simulation" if simulation else agent,
        "simulation": simulation,
        "cwd": str(root),
        "started_ts": started,
    }
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    result = {
        "run_id": run_id,
        "story": "1.2",
        "phase": phase,
        "attempt": 1,
        "mode": "create",
        "agent": meta["agent"],
        "outcome": "success",
        "exit_code": 0,
        "duration_s": 10.0,
        "message": "done",
        "simulation": simulation,
    }
    (folder / "result.json").write_text(json.dumps(result), encoding="utf-8")
    (folder / "system.md").write_text(system, encoding="utf-8")
    (folder / "user.md").write_text("Implement story 1.2.\n", encoding="utf-8")
    cost: dict[str, Any] = {"model": model, "predicted": {"dollars": 0.05}}
    cost["actual"] = {"dollars": dollars, "unknown": None if dollars is not None else "unknown"}
    (folder / "cost.json").write_text(json.dumps(cost), encoding="utf-8")
    (folder / "stream.jsonl").write_text(
        "".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events),
        encoding="utf-8",
    )
    return folder
