"""A loopback fake of the Anthropic Messages API for driving the real ``claude`` CLI offline.

It listens on ``127.0.0.1`` on a random port, records every request (path, headers, JSON
body) and answers ``POST /v1/messages`` with a scripted reply, streamed as server-sent events
(``message_start``, ``content_block_start``/``delta``/``stop``, ``message_delta``,
``message_stop``) when the request asks for a stream, as one JSON message otherwise.

The CLI sends side requests of its own (title generation, quota probes, token counting); the
scripted reply goes only to requests :attr:`FakeAnthropic.is_main` accepts, every other
message request gets a short neutral reply.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SOCKET_TIMEOUT = 30.0


@dataclass
class RecordedRequest:
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    def system_text(self) -> str:
        """The request's system prompt as one string (text blocks joined with nothing)."""
        system = self.body.get("system") if isinstance(self.body, dict) else None
        if isinstance(system, str):
            return system
        if isinstance(system, list):
            return "".join(block.get("text", "") for block in system if isinstance(block, dict))
        return ""


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


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


@dataclass
class FakeAnthropic:
    """The fake server; use it as a context manager.

    Attributes:
        reply: the scripted text for main requests.
        is_main: decides which message requests get ``reply``.
        requests: every request received, in order.
    """

    reply: str
    is_main: Callable[[RecordedRequest], bool] = lambda request: bool(
        isinstance(request.body, dict) and request.body.get("tools")
    )
    side_reply: str = "Working on the story"
    requests: list[RecordedRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` for ``ANTHROPIC_BASE_URL``."""
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def main_requests(self) -> list[RecordedRequest]:
        """The recorded message requests that received the scripted reply."""
        with self._lock:
            return [
                r for r in self.requests if r.path.startswith("/v1/messages") and self.is_main(r)
            ]

    def __enter__(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            timeout = SOCKET_TIMEOUT
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _record(self, body: Any) -> RecordedRequest:
                request = RecordedRequest(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                with fake._lock:
                    fake.requests.append(request)
                return request

            def _send_json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._record(None)
                self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}})

            def do_HEAD(self) -> None:
                self._record(None)
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                request = self._record(body)
                path = self.path.split("?", 1)[0]
                if path.endswith("/count_tokens"):
                    self._send_json(200, {"input_tokens": 100})
                    return
                if not path.endswith("/v1/messages") or not isinstance(body, dict):
                    self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}})
                    return
                text = fake.reply if fake.is_main(request) else fake.side_reply
                model = str(body.get("model") or "claude-fake")
                message = _message(model, text, input_tokens=1200)
                if not body.get("stream"):
                    self._send_json(200, message)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                start = dict(message, content=[], stop_reason=None)
                start["usage"] = dict(message["usage"], output_tokens=1)
                chunks = [text[i : i + 40] for i in range(0, len(text), 40)] or [""]
                frames = [_sse("message_start", {"type": "message_start", "message": start})]
                frames.append(
                    _sse(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": 0,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                )
                for chunk in chunks:
                    frames.append(
                        _sse(
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": 0,
                                "delta": {"type": "text_delta", "text": chunk},
                            },
                        )
                    )
                frames.append(
                    _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
                )
                frames.append(
                    _sse(
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                            "usage": {"output_tokens": message["usage"]["output_tokens"]},
                        },
                    )
                )
                frames.append(_sse("message_stop", {"type": "message_stop"}))
                self.wfile.write(b"".join(frames))
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
