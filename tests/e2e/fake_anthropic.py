"""A loopback fake of the Anthropic Messages API for driving the real ``claude`` CLI offline.

It listens on ``127.0.0.1`` on a random port, records every request (path, headers, JSON
body) and answers ``POST /v1/messages`` with a scripted reply, streamed as server-sent events
(``message_start``, ``content_block_start``/``delta``/``stop``, ``message_delta``,
``message_stop``) when the request asks for a stream, as one JSON message otherwise. The
server and the recording are :class:`loopback_api.LoopbackFake`'s.

The CLI sends side requests of its own (title generation, quota probes, token counting); the
scripted reply goes only to requests :attr:`FakeAnthropic.is_main` accepts, every other
message request gets a short neutral reply.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from loopback_api import LoopbackFake, LoopbackHandler, RecordedRequest

NOT_FOUND = {"type": "error", "error": {"type": "not_found_error"}}


class AnthropicRequest(RecordedRequest):
    """One request the fake received, read as a Messages API request."""

    def system_text(self) -> str:
        """The request's system prompt as one string (text blocks joined with nothing)."""
        system = self.body.get("system") if isinstance(self.body, dict) else None
        if isinstance(system, str):
            return system
        if isinstance(system, list):
            return "".join(block.get("text", "") for block in system if isinstance(block, dict))
        return ""


def _message(model: str, text: str, input_tokens: int) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": max(1, len(text) // 4),
        },
    }


def _stream(message: dict[str, Any], text: str) -> Iterator[dict[str, Any]]:
    """The events that stream ``message``, its ``text`` in chunks of 40 characters."""
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    yield {"type": "message_start", "message": start}
    yield {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    for chunk in [text[i : i + 40] for i in range(0, len(text), 40)] or [""]:
        yield {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": chunk},
        }
    yield {"type": "content_block_stop", "index": 0}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}


class _Handler(LoopbackHandler):
    def do_HEAD(self) -> None:
        # An empty 200, so that a reachability check by HEAD passes.
        self.record()
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()


@dataclass
class FakeAnthropic(LoopbackFake[AnthropicRequest]):
    """The fake server; use it as a context manager.

    Attributes:
        reply: the scripted text for main requests.
        is_main: decides which message requests get ``reply``.
        side_reply: the text every other message request gets.
        usage: the ``usage`` main requests report (input, cache write and read, output), as a
            provider would bill them; None reports 1,200 plain input tokens and no cache.
    """

    request_type: ClassVar[type[RecordedRequest]] = AnthropicRequest
    handler: ClassVar[type[LoopbackHandler]] = _Handler
    not_found: ClassVar[dict[str, Any]] = NOT_FOUND

    reply: str
    is_main: Callable[[AnthropicRequest], bool] = lambda request: bool(
        isinstance(request.body, dict) and request.body.get("tools")
    )
    side_reply: str = "Working on the story"
    usage: dict[str, int] | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` for ``ANTHROPIC_BASE_URL``."""
        return self.address

    def main_requests(self) -> list[AnthropicRequest]:
        """The recorded message requests that received the scripted reply."""
        return self.recorded(lambda r: r.path.startswith("/v1/messages") and self.is_main(r))

    def answer(self, exchange: LoopbackHandler, request: AnthropicRequest) -> None:
        body = request.body
        if request.route.endswith("/count_tokens"):
            exchange.send_json(200, {"input_tokens": 100})
            return
        if not request.route.endswith("/v1/messages") or not isinstance(body, dict):
            exchange.send_json(404, NOT_FOUND)
            return
        text = self.reply if self.is_main(request) else self.side_reply
        message = _message(str(body.get("model") or "claude-fake"), text, input_tokens=1200)
        if self.usage is not None and self.is_main(request):
            message["usage"] = dict(self.usage)
        if body.get("stream"):
            exchange.send_events(_stream(message, text))
        else:
            exchange.send_json(200, message)
