"""The ``codex exec --json`` stream, read into :class:`~.base.AgentEvent` objects.

``thread.started`` gives the thread id (the session id); ``item.completed`` items are the
agent's text, tool use and results, or shown as information; ``turn.completed`` carries the
turn's summed usage, while the context use of the last model call comes from the session's
rollout file (:func:`last_model_call`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..client_loads import CLIENT_WINDOWS
from .base import (
    INFO,
    RESULT,
    SESSION,
    TEXT,
    TOOL_RESULT,
    TOOL_USE,
    USAGE,
    AgentEvent,
    Usage,
    make_event,
    tool_preview,
)

ROLLOUT_TAIL_BYTES = 1 << 20
"""How much of a rollout file's end is read for its last ``token_count``."""
_RECONNECTING = re.compile(r"reconnecting", re.IGNORECASE)


def _int(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def codex_usage(data: Any) -> Usage:
    """A :class:`Usage` from a Codex ``usage`` object.

    Codex counts cached (read and written) tokens inside ``input_tokens``; they are kept apart
    here as Anthropic reports them, so ``context_tokens`` is the same sum for both.
    """
    usage = data if isinstance(data, dict) else {}
    cached = _int(usage, "cached_input_tokens")
    written = _int(usage, "cache_write_input_tokens")
    return Usage(
        input_tokens=max(0, _int(usage, "input_tokens") - cached - written),
        output_tokens=_int(usage, "output_tokens"),
        cache_read_tokens=cached,
        cache_creation_tokens=written,
        reasoning_output_tokens=_int(usage, "reasoning_output_tokens"),
    )


def last_model_call(home: Path, thread: str) -> tuple[Usage, int | None] | None:
    """The last model call's usage and the model's window, from the thread's rollout file."""
    if not re.fullmatch(r"[A-Za-z0-9-]+", thread):
        return None
    candidates = sorted((home / "sessions").glob(f"*/*/*/rollout-*-{thread}.jsonl"))
    if not candidates:
        return None
    try:
        with candidates[-1].open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - ROLLOUT_TAIL_BYTES))
            tail = handle.read()
    except OSError:
        return None
    for raw in reversed(tail.splitlines()):
        if b'"token_count"' not in raw:
            continue
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        payload = entry.get("payload") if isinstance(entry, dict) else None
        info = payload.get("info") if isinstance(payload, dict) else None
        if isinstance(info, dict) and isinstance(info.get("last_token_usage"), dict):
            window = info.get("model_context_window")
            return codex_usage(info["last_token_usage"]), window if isinstance(
                window, int
            ) else None
    return None


class CodexJsonParser:
    """Parses ``codex exec --json`` lines.

    Args:
        context_window: the window when Codex does not name one.
        home: Codex's home, where the rollout file with the last call's usage is; None reads
            no rollout (context use then stays unknown rather than wrong).
    """

    def __init__(
        self, context_window: int = CLIENT_WINDOWS["codex"], home: Path | None = None
    ) -> None:
        self.context_window = context_window
        self.home = home
        self.thread: str | None = None

    def parse(self, line: str) -> list[AgentEvent]:
        """Events for one line; a line that is not a JSON object is shown as it is."""
        stripped = line.strip()
        if not stripped:
            return []
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            return [make_event(kind=INFO, text=line)]
        if not isinstance(data, dict):
            return [make_event(kind=INFO, text=line)]
        kind = data.get("type")
        if kind == "thread.started":
            thread = data.get("thread_id")
            self.thread = thread if isinstance(thread, str) else None
            return [AgentEvent(SESSION, f"thread {thread}", session_id=self.thread)]
        if kind == "item.completed" and isinstance(data.get("item"), dict):
            return self._item(data["item"])
        if kind == "turn.completed":
            return self._turn_completed(data.get("usage"))
        if kind == "turn.failed":
            error = data.get("error")
            message = error.get("message", "") if isinstance(error, dict) else ""
            return [AgentEvent(RESULT, f"turn.failed: {message}", is_error=True)]
        if kind == "error":
            message = str(data.get("message", ""))
            if _RECONNECTING.search(message):
                # Codex retries on its own; a turn that does not recover ends in turn.failed.
                return [AgentEvent(INFO, f"error: {message}")]
            return [AgentEvent(RESULT, f"error: {message}", is_error=True)]
        return []

    def _turn_completed(self, raw: Any) -> list[AgentEvent]:
        totals = codex_usage(raw)
        events: list[AgentEvent] = []
        last = last_model_call(self.home, self.thread) if self.home and self.thread else None
        if last is not None:
            usage, window = last
            events.append(
                AgentEvent(
                    USAGE,
                    usage=usage,
                    context_tokens=usage.context_tokens,
                    context_window=window or self.context_window,
                )
            )
        else:
            # The turn's sum is not one call's context: report usage, leave context unknown.
            events.append(AgentEvent(USAGE, usage=totals))
        events.append(AgentEvent(RESULT, "turn completed", usage=totals))
        return events

    def _item(self, item: dict[str, Any]) -> list[AgentEvent]:
        kind = item.get("type")
        if kind == "agent_message":
            return [AgentEvent(TEXT, str(item.get("text", "")))]
        if kind == "reasoning":
            return [AgentEvent(INFO, tool_preview(str(item.get("text", ""))))]
        if kind == "command_execution":
            return [
                AgentEvent(TOOL_USE, f"shell: {tool_preview(str(item.get('command', '')))}"),
                AgentEvent(
                    TOOL_RESULT,
                    f"exit {item.get('exit_code')}: "
                    + tool_preview(str(item.get("aggregated_output", ""))),
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
        if kind == "web_search":
            return [AgentEvent(TOOL_USE, f"web search: {tool_preview(str(item.get('query', '')))}")]
        if kind == "todo_list":
            entries = [
                f"[{'x' if entry.get('completed') else ' '}] {entry.get('text', '')}"
                for entry in item.get("items") or []
                if isinstance(entry, dict)
            ]
            return [AgentEvent(INFO, tool_preview("todo: " + "; ".join(entries)))]
        if kind == "error":
            return [AgentEvent(INFO, f"error: {item.get('message', '')}")]
        rest = {k: v for k, v in item.items() if k not in ("id", "type")}
        return [AgentEvent(INFO, tool_preview(f"{kind}: {json.dumps(rest, ensure_ascii=False)}"))]
