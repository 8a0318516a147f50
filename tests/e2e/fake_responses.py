"""A loopback fake of the OpenAI Responses API for driving the real ``codex`` CLI offline.

It listens on ``127.0.0.1`` on a random port, records every request (path, headers, JSON
body) and answers ``POST /v1/responses`` with a scripted assistant message streamed as
server-sent events: ``response.created``, ``response.output_item.added``,
``response.output_text.delta``, ``response.output_item.done`` and ``response.completed`` (with
``usage``). Any other path gets a 404, so a request the CLI makes elsewhere shows in
:attr:`FakeResponses.requests` instead of passing unnoticed. The server, the recording and the
events' shape are promptdeck's own capture server's (:class:`loopback_api.LoopbackFake`).

Replies are taken in order from :attr:`FakeResponses.replies`; the last one repeats.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from loopback_api import LoopbackFake, RecordedRequest
from promptdeck.core.capture import Exchange, response_events

NOT_FOUND = {"error": {"message": "not found", "type": "not_found"}}


class ResponsesRequest(RecordedRequest):
    """One request the fake received, read as a Responses API request."""

    def items(self) -> list[dict[str, Any]]:
        """The request's ``input`` items (messages and tool outputs)."""
        items = self.body.get("input") if isinstance(self.body, dict) else None
        return [item for item in items or [] if isinstance(item, dict)]

    def texts(self, role: str) -> list[list[str]]:
        """For every message of ``role``, the texts of its parts, in order."""
        found: list[list[str]] = []
        for item in self.items():
            if item.get("type", "message") != "message" or item.get("role") != role:
                continue
            content = item.get("content")
            if isinstance(content, str):
                found.append([content])
                continue
            found.append(
                [
                    str(part.get("text", ""))
                    for part in content or []
                    if isinstance(part, dict) and "text" in part
                ]
            )
        return found

    def images(self) -> list[str]:
        """The ``image_url`` values of every ``input_image`` part of the user messages."""
        urls: list[str] = []
        for item in self.items():
            if item.get("role") != "user" or not isinstance(item.get("content"), list):
                continue
            for part in item["content"]:
                if isinstance(part, dict) and part.get("type") == "input_image":
                    urls.append(str(part.get("image_url", "")))
        return urls


def is_model_request(request: RecordedRequest) -> bool:
    """Whether ``request`` is a ``POST /v1/responses`` (a model call)."""
    return request.method == "POST" and request.route.endswith("/responses")


def is_outbound(request: RecordedRequest) -> bool:
    """Whether ``request`` was meant for somewhere else (a proxy tunnel or an absolute URL)."""
    return request.method == "CONNECT" or "://" in request.path


@dataclass
class FakeResponses(LoopbackFake[ResponsesRequest]):
    """The fake server; use it as a context manager.

    Attributes:
        replies: the scripted assistant texts, one per ``/v1/responses`` request (the last one
            repeats).
        input_tokens: the ``usage.input_tokens`` each reply reports.
    """

    request_type: ClassVar[type[RecordedRequest]] = ResponsesRequest
    not_found: ClassVar[dict[str, Any]] = NOT_FOUND

    replies: list[str]
    input_tokens: int = 12_000
    _answered: int = 0

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` for the provider's ``base_url``."""
        return f"{self.address}/v1"

    def outbound(self) -> list[ResponsesRequest]:
        """Requests meant for somewhere else (proxy tunnels and absolute-URL requests)."""
        return self.recorded(is_outbound)

    def model_requests(self) -> list[ResponsesRequest]:
        """The recorded ``POST /v1/responses`` requests."""
        return self.recorded(is_model_request)

    def _next_reply(self) -> str:
        with self._lock:
            index = min(self._answered, len(self.replies) - 1)
            self._answered += 1
        return self.replies[index]

    def answer(self, exchange: Exchange, request: ResponsesRequest) -> None:
        if not request.route.endswith("/responses"):
            exchange.send_json(404, NOT_FOUND)
            return
        body = request.body
        model = body.get("model", "gpt-fake") if isinstance(body, dict) else "gpt-fake"
        exchange.send_events(response_events(self._next_reply(), model, self.input_tokens))


def codex_provider_args(base_url: str) -> list[str]:
    """``codex`` options that make ``base_url`` (a :class:`FakeResponses`) its model
    provider, with the model the fake answers as."""
    return [
        "-c",
        "model_provider=fake",
        "-c",
        "model_providers.fake.name=fake",
        "-c",
        f'model_providers.fake.base_url="{base_url}"',
        "-c",
        "model_providers.fake.env_key=FAKE_KEY",
        "-c",
        "model_providers.fake.wire_api=responses",
        "-m",
        "gpt-5.5",
    ]
