"""A scripted phase for the flight recorder's end-to-end tests, on the Anthropic fake.

:class:`ScriptedAnthropic` answers the real ``claude`` CLI's model requests like an agent at
work: the main thread's first request gets a ``Read`` call of a file the prompt injected, the
next a ``Task`` call that starts a subagent (whose own requests it answers too: a ``Read``,
then its report), the last the completion signal. Each answered request reports a usage of its
own, kept in :attr:`ScriptedAnthropic.answered` in the order the requests came.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fake_anthropic import AnthropicRequest, FakeAnthropic
from fake_responses import FakeResponses, ResponsesRequest
from promptdeck.core.capture import Exchange, anthropic_message, response_events

SUBAGENT_MARK = "FLIGHT-SUBAGENT"
SIGNAL = "IMPLEMENTATION COMPLETE: 1.2"


def _tool_results(body: dict[str, Any]) -> int:
    count = 0
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(
                1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
            )
    return count


def _is_subagent(body: dict[str, Any]) -> bool:
    first = (body.get("messages") or [{}])[0]
    return SUBAGENT_MARK in json.dumps(first.get("content", ""))


def _task_tool(body: dict[str, Any]) -> str:
    names = {t.get("name") for t in body.get("tools") or () if isinstance(t, dict)}
    return "Task" if "Task" in names else "Agent"


def _events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"])
    yield {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            opened = dict(block, input={})
            yield {"type": "content_block_start", "index": index, "content_block": opened}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        else:
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
            delta = {"type": "text_delta", "text": block["text"]}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}


@dataclass
class Answered:
    """One request the script answered: its thread, what it answered, the usage reported."""

    thread: str
    answer: str
    usage: dict[str, int]


@dataclass
class ScriptedAnthropic(FakeAnthropic):
    """The fake, answering a phase that reads an injected file and runs a subagent.

    Attributes:
        read_path: the absolute path of the injected file the agent is made to read.
        answered: every request the script answered, in order.
    """

    read_path: str = ""
    answered: list[Answered] = field(default_factory=list)

    def _usage(self) -> dict[str, int]:
        n = len(self.answered) + 1
        return {
            "input_tokens": 100 + n,
            "cache_creation_input_tokens": 1000 * n,
            "cache_read_input_tokens": 10 * n,
            "output_tokens": 20 + n,
        }

    def _script(self, body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        done = _tool_results(body)
        call = f"toolu_{uuid.uuid4().hex[:20]}"
        read = {
            "type": "tool_use",
            "id": call,
            "name": "Read",
            "input": {"file_path": self.read_path},
        }
        if _is_subagent(body):
            if done == 0:
                return "subagent", [read]
            return "subagent", [{"type": "text", "text": "The architecture holds."}]
        if done == 0:
            return "main", [read]
        if done == 1:
            task = {
                "type": "tool_use",
                "id": call,
                "name": _task_tool(body),
                "input": {
                    "description": "check the design",
                    "prompt": f"{SUBAGENT_MARK}: read the design and report.",
                    "subagent_type": "general-purpose",
                },
            }
            return "main", [task]
        return "main", [{"type": "text", "text": f"Done.\n{SIGNAL}"}]

    def answer(self, exchange: Exchange, request: AnthropicRequest) -> None:
        body = request.body
        scripted = (
            request.route.endswith("/v1/messages")
            and isinstance(body, dict)
            and bool(body.get("tools"))
        )
        if not scripted:
            super().answer(exchange, request)
            return
        assert isinstance(body, dict)
        thread, content = self._script(body)
        usage = self._usage()
        uses_tool = content[0]["type"] == "tool_use"
        message = anthropic_message(str(body.get("model") or "claude-fake"), "")
        message.update(
            content=content, usage=usage, stop_reason="tool_use" if uses_tool else "end_turn"
        )
        with self._lock:
            self.answered.append(Answered(thread, content[0].get("name", "text"), usage))
        if body.get("stream"):
            exchange.send_events(_events(message))
        else:
            exchange.send_json(200, message)


@dataclass
class ScriptedResponses(FakeResponses):
    """The Responses fake, answering a phase that reads a file the prompt injected: the first
    model request gets a shell call printing ``read_path``, the next the completion signal.
    Each reports a usage of its own, kept in :attr:`answered` in order."""

    read_path: str = ""
    answered: list[Answered] = field(default_factory=list)

    def answer(self, exchange: Exchange, request: ResponsesRequest) -> None:
        body = request.body
        if not request.route.endswith("/responses") or not isinstance(body, dict):
            super().answer(exchange, request)
            return
        with self._lock:
            n = len(self.answered) + 1
            usage = {"input_tokens": 9000 * n, "cached": 4000 * (n - 1), "output_tokens": 30 + n}
            calls = any(
                isinstance(i, dict) and i.get("type") == "function_call_output"
                for i in body.get("input") or ()
            )
            self.answered.append(Answered("main", "text" if calls else "shell", usage))
        model = str(body.get("model") or "gpt-fake")
        if calls:
            events = response_events(f"Done.\n{SIGNAL}", model, usage["input_tokens"])
        else:
            events = _call_events(body, model, self.read_path)
        events[-1]["response"]["usage"] = {
            "input_tokens": usage["input_tokens"],
            "input_tokens_details": {"cached_tokens": usage["cached"]},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["input_tokens"] + usage["output_tokens"],
        }
        exchange.send_events(events)


def _call_events(body: dict[str, Any], model: str, path: str) -> list[dict[str, Any]]:
    """A response whose only output is a shell call printing ``path``."""
    names = {t.get("name") for t in body.get("tools") or () if isinstance(t, dict)}
    name = next((n for n in ("shell", "exec_command", "shell_command") if n in names), "shell")
    command: Any = ["cat", path] if name == "shell" else f"cat {path}"
    key = "cmd" if name == "exec_command" else "command"
    item = {
        "type": "function_call",
        "id": f"fc_{uuid.uuid4().hex[:20]}",
        "call_id": f"call_{uuid.uuid4().hex[:20]}",
        "name": name,
        "arguments": json.dumps({key: command}),
        "status": "completed",
    }
    base = {"id": f"resp_{uuid.uuid4().hex[:24]}", "object": "response", "model": model}
    return [
        {"type": "response.created", "response": {**base, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": {**base, "status": "completed", "output": [item], "usage": {}},
        },
    ]
