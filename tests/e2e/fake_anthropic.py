"""A loopback fake of the Anthropic Messages API for driving the real ``claude`` CLI offline.

It listens on ``127.0.0.1`` on a random port, records every request (path, headers, JSON
body) and answers ``POST /v1/messages`` with a scripted reply, streamed as server-sent events
(``message_start``, ``content_block_start``/``delta``/``stop``, ``message_delta``,
``message_stop``) when the request asks for a stream, as one JSON message otherwise. The
server, the recording and the replies' shapes are promptdeck's own capture server's
(:class:`loopback_api.LoopbackFake`).

The CLI sends side requests of its own (title generation, quota probes, token counting); the
scripted reply goes only to requests :attr:`FakeAnthropic.is_main` accepts, every other
message request gets a short neutral reply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from loopback_api import LoopbackFake, RecordedRequest, agent_env
from promptdeck.core.capture import Exchange, anthropic_events, anthropic_message

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

    def answer(self, exchange: Exchange, request: AnthropicRequest) -> None:
        body = request.body
        if request.route.endswith("/count_tokens"):
            exchange.send_json(200, {"input_tokens": 100})
            return
        if not request.route.endswith("/v1/messages") or not isinstance(body, dict):
            exchange.send_json(404, NOT_FOUND)
            return
        text = self.reply if self.is_main(request) else self.side_reply
        model = str(body.get("model") or "claude-fake")
        message = anthropic_message(model, text, input_tokens=1200)
        if self.usage is not None and self.is_main(request):
            message["usage"] = dict(self.usage)
        if body.get("stream"):
            exchange.send_events(anthropic_events(message))
        else:
            exchange.send_json(200, message)


def claude_env(fake: FakeAnthropic, home: Path) -> dict[str, str]:
    """The environment the real ``claude`` runs with against ``fake``: its API the fake, a
    dummy key, ``home`` its home, and none of its background traffic."""
    return agent_env(
        home,
        ("ANTHROPIC_", "CLAUDE_"),
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="sk-ant-test-dummy",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
