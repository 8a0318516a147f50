"""Claude Code, the real CLI, driven headless with ``--output-format stream-json``.

The launch: ``claude -p --output-format stream-json --verbose --append-system-prompt-file
<run>/system.md [--model M] [permission args] [--resume SESSION]`` with the user message on
stdin. The system prompt file is passed on every call, resumed ones too: the CLI does not keep an
appended system prompt across ``--resume``.

The stream: one JSON object a line — ``system``/``init`` (session id, model), ``assistant``
messages whose content blocks are ``text`` and ``tool_use``, ``user`` messages carrying
``tool_result`` blocks, and a final ``result`` (result text, ``total_cost_usd``, cumulative
``usage``). Context use is the latest assistant message's input + cache-read + cache-creation
tokens over the configured window; the ``result`` totals add up every call, so they are not.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from ..project.config import Config
from ..project.images import sniff
from ..units import reported_cost
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
    check_session_id,
    fast_factory,
    make_event,
    tool_preview,
)
from .programs import claude_binary

_usage = fast_factory(Usage)
_decode = json.JSONDecoder().decode


def usage_from(data: Any) -> Usage | None:
    """A :class:`Usage` from an Anthropic ``usage`` object."""
    if not isinstance(data, dict):
        return None
    values = [
        data.get(key)
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    ]
    i, o, r, c = (v if isinstance(v, int) else 0 for v in values)
    return _usage(input_tokens=i, output_tokens=o, cache_read_tokens=r, cache_creation_tokens=c)


def _tool_result_text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


class StreamJsonParser:
    """Parses Claude Code's stream-json lines (also what the replay agent prints)."""

    def __init__(self, context_window: int) -> None:
        self.context_window = context_window
        self._last_message_text: str | None = None
        self._last_raw_usage: Any = None

    def parse(self, line: str) -> list[AgentEvent]:
        """Events for one line; a line that is not a JSON object is shown as it is."""
        stripped = line.strip()
        if not stripped:
            return []
        if stripped[0] != "{":
            return [make_event(kind=INFO, text=line)]
        try:
            data = _decode(stripped)
        except ValueError:
            return [make_event(kind=INFO, text=line)]
        if not isinstance(data, dict):
            return [make_event(kind=INFO, text=line)]
        kind = data.get("type")
        if kind == "assistant":
            return self._assistant(data)
        if kind == "user":
            return self._user(data)
        if kind == "result":
            return self._result(data)
        if kind == "system":
            if data.get("subtype") == "init":
                session = data.get("session_id")
                model = data.get("model")
                return [
                    AgentEvent(
                        SESSION,
                        f"session {session} · model {model}",
                        session_id=session if isinstance(session, str) else None,
                        model=model if isinstance(model, str) else None,
                    )
                ]
            return []
        return []

    def _assistant(self, data: dict[str, Any]) -> list[AgentEvent]:
        message = data.get("message")
        if not isinstance(message, dict):
            return []
        events: list[AgentEvent] = []
        texts: list[str] = []
        for block in message.get("content") or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                text = str(block.get("text", ""))
                texts.append(text)
                events.append(make_event(kind=TEXT, text=text))
            elif block.get("type") == "tool_use":
                name = block.get("name", "tool")
                events.append(
                    make_event(kind=TOOL_USE, text=f"{name}: {tool_preview(block.get('input'))}")
                )
        if texts:
            self._last_message_text = "\n".join(texts)
        raw_usage = message.get("usage")
        # Each content block of one message arrives as its own line with the same usage:
        # only a new usage is news.
        if raw_usage == self._last_raw_usage:
            return events
        self._last_raw_usage = raw_usage
        usage = usage_from(raw_usage)
        if usage is not None and usage.context_tokens:
            events.append(
                make_event(
                    kind=USAGE,
                    usage=usage,
                    context_tokens=usage.context_tokens,
                    context_window=self.context_window,
                )
            )
        return events

    def _user(self, data: dict[str, Any]) -> list[AgentEvent]:
        message = data.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            return []
        return [
            make_event(kind=TOOL_RESULT, text=tool_preview(_tool_result_text(block.get("content"))))
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]

    def _result(self, data: dict[str, Any]) -> list[AgentEvent]:
        events: list[AgentEvent] = []
        text = data.get("result")
        # The result text repeats the last assistant message: read it only when it is new,
        # so a signal is not recorded twice.
        if (
            isinstance(text, str)
            and text
            and text.strip() != (self._last_message_text or "").strip()
        ):
            events.append(AgentEvent(TEXT, text))
        cost = data.get("total_cost_usd")
        session = data.get("session_id")
        is_error = bool(data.get("is_error"))
        subtype = data.get("subtype")
        events.append(
            AgentEvent(
                RESULT,
                # The process's own verdict, not the phase's: the signal decides the phase.
                f"agent process ended: {subtype}" + (" (error)" if is_error else ""),
                session_id=session if isinstance(session, str) else None,
                usage=usage_from(data.get("usage")),
                # Kept as reported (an int too large for a float is infinite): every face
                # shows an implausible cost as invalid and no sum counts it.
                cost_usd=reported_cost(cost),
                is_error=is_error,
            )
        )
        return events


def stream_json_message(text: str, images: tuple[Path, ...]) -> bytes:
    """The user message as one ``--input-format stream-json`` line: the text first, then each
    image as a base64 ``image`` block."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for path in images:
        data = path.read_bytes()
        content.append(
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": sniff(data[:16]) or "application/octet-stream",
                    "data": base64.b64encode(data).decode("ascii"),
                },
            }
        )
    line = {"type": "user", "message": {"role": "user", "content": content}}
    return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")


class ClaudeAgent:
    """The ``claude`` backend."""

    name = "claude"
    stream_format = "jsonl"

    def __init__(self, config: Config) -> None:
        self.config = config

    def launch(self, request: LaunchRequest) -> LaunchSpec:
        """``claude -p --output-format stream-json --verbose --append-system-prompt-file …``."""
        argv = [
            claude_binary(self.config),
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--append-system-prompt-file",
            str(request.system_file),
        ]
        if self.config.agent_claude_model:
            argv += ["--model", self.config.agent_claude_model]
        argv += list(self.config.agent_claude_args)
        if request.resume_session:
            argv += ["--resume", check_session_id(request.resume_session)]
        stdin = request.user_file.read_bytes()
        if request.images:
            argv += ["--input-format", "stream-json"]
            stdin = stream_json_message(stdin.decode("utf-8"), request.images)
        return LaunchSpec(
            argv=tuple(argv),
            cwd=request.root,
            stdin=stdin,
            system_channel="--append-system-prompt-file (system.md)",
        )

    def output_parser(self) -> StreamJsonParser:
        """A stream-json parser using ``agent.claude_context_window``."""
        return StreamJsonParser(self.config.agent_claude_context_window)
