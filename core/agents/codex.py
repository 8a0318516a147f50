"""Codex, driven headless with ``codex exec --json``.

Codex has no flag that appends to its system prompt. Its ``model_instructions_file`` setting
*replaces* Codex's own base instructions (the ones that teach it its tools), and inline
``-c developer_instructions=…`` would put the whole system prompt into one argv string, which
Linux caps at 131,072 bytes. So promptdeck sends the system prompt in the prompt itself, on
stdin (``codex exec --json -``): the exact bytes of ``<run>/system.md``, then a separator line,
then the exact bytes of ``<run>/user.md`` — seed 004's order, instructions first.

The stream: ``thread.started`` (the thread id, our session id), ``item.completed`` items
(``agent_message`` text is the agent's own; ``command_execution``, ``file_change``,
``mcp_tool_call`` are tool use and results; ``reasoning`` is shown), ``turn.completed`` with
usage, ``turn.failed`` and ``error``. A chat turn resumes with ``codex exec resume <thread>``.
"""

from __future__ import annotations

import json
from typing import Any

from ..config import Config
from .base import (
    INFO,
    RESULT,
    SESSION,
    TEXT,
    TOOL_RESULT,
    TOOL_USE,
    USAGE,
    AgentEvent,
    LaunchRequest,
    LaunchSpec,
    Usage,
    make_event,
)

SEPARATOR = b"\n\n---\n\n"
"""Between the system prompt and the user message on Codex's stdin."""
PREVIEW_CHARS = 200


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


class CodexJsonParser:
    """Parses ``codex exec --json`` lines."""

    def parse(self, line: str) -> list[AgentEvent]:
        """Events for one line; a line that is not a JSON object is shown as it is."""
        stripped = line.strip()
        if not stripped:
            return []
        try:
            data = json.loads(stripped)
        except ValueError:
            return [make_event(kind=INFO, text=line)]
        if not isinstance(data, dict):
            return [make_event(kind=INFO, text=line)]
        kind = data.get("type")
        if kind == "thread.started":
            thread = data.get("thread_id")
            return [
                AgentEvent(
                    SESSION,
                    f"thread {thread}",
                    session_id=thread if isinstance(thread, str) else None,
                )
            ]
        if kind == "item.completed" and isinstance(data.get("item"), dict):
            return self._item(data["item"])
        if kind == "turn.completed":
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            assert isinstance(usage, dict)
            cached = int(usage.get("cached_input_tokens") or 0)
            # Codex counts cached tokens inside input_tokens; keep them apart as Anthropic does.
            parsed = Usage(
                input_tokens=int(usage.get("input_tokens") or 0) - cached,
                output_tokens=int(usage.get("output_tokens") or 0),
                cache_read_tokens=cached,
            )
            return [
                AgentEvent(USAGE, usage=parsed, context_tokens=parsed.context_tokens),
                AgentEvent(RESULT, "turn completed", usage=parsed),
            ]
        if kind in ("turn.failed", "error"):
            error = data.get("error") if kind == "turn.failed" else data
            message = error.get("message", "") if isinstance(error, dict) else ""
            return [AgentEvent(RESULT, f"{kind}: {message}", is_error=True)]
        return []

    def _item(self, item: dict[str, Any]) -> list[AgentEvent]:
        kind = item.get("type")
        if kind == "agent_message":
            return [AgentEvent(TEXT, str(item.get("text", "")))]
        if kind == "reasoning":
            return [AgentEvent(INFO, _preview(str(item.get("text", ""))))]
        if kind == "command_execution":
            return [
                AgentEvent(TOOL_USE, f"shell: {_preview(str(item.get('command', '')))}"),
                AgentEvent(
                    TOOL_RESULT,
                    f"exit {item.get('exit_code')}: "
                    + _preview(str(item.get("aggregated_output", ""))),
                ),
            ]
        if kind == "file_change":
            changes = item.get("changes") or []
            paths = ", ".join(
                f"{c.get('kind')} {c.get('path')}" for c in changes if isinstance(c, dict)
            )
            return [AgentEvent(TOOL_USE, f"patch: {paths}")]
        if kind == "mcp_tool_call":
            return [AgentEvent(TOOL_USE, f"{item.get('server')}.{item.get('tool')}")]
        if kind == "error":
            return [AgentEvent(INFO, f"error: {item.get('message', '')}")]
        return []


class CodexAgent:
    """The ``codex`` backend."""

    name = "codex"
    stream_format = "jsonl"

    def __init__(self, config: Config) -> None:
        self.config = config

    def launch(self, request: LaunchRequest) -> LaunchSpec:
        """``codex exec --json [args] -`` (or ``codex exec --json resume THREAD -``)."""
        argv = [self.config.agent_codex_bin, "exec", "--json", *self.config.agent_codex_args]
        if request.resume_session:
            argv += ["resume", request.resume_session]
        argv.append("-")
        stdin = request.system_file.read_bytes() + SEPARATOR + request.user_file.read_bytes()
        return LaunchSpec(argv=tuple(argv), cwd=request.root, stdin=stdin)

    def output_parser(self) -> CodexJsonParser:
        """A fresh JSONL parser."""
        return CodexJsonParser()
