"""A loopback fake of the OpenAI Responses API for driving the real ``codex`` CLI offline.

It listens on ``127.0.0.1`` on a random port, records every request (path, headers, JSON
body) and answers ``POST /v1/responses`` with a scripted assistant message streamed as
server-sent events: ``response.created``, ``response.output_item.added``,
``response.output_text.delta``, ``response.output_item.done`` and ``response.completed`` (with
``usage``). Any other path gets a 404, so a request the CLI makes elsewhere shows in
:attr:`FakeResponses.requests` instead of passing unnoticed.

Replies are taken in order from :attr:`FakeResponses.replies`; the last one repeats.
"""

from __future__ import annotations

import json
import threading
import uuid
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


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


@dataclass
class FakeResponses:
    """The fake server; use it as a context manager.

    Attributes:
        replies: the scripted assistant texts, one per ``/v1/responses`` request (the last one
            repeats).
        input_tokens: the ``usage.input_tokens`` each reply reports.
        requests: every request received, in order.
    """

    replies: list[str]
    input_tokens: int = 12_000
    requests: list[RecordedRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _answered: int = 0

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` for the provider's ``base_url``."""
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def proxy_url(self) -> str:
        """``http://127.0.0.1:<port>``: as ``HTTPS_PROXY``, it records what would go out."""
        return self.base_url.removesuffix("/v1")

    def outbound(self) -> list[RecordedRequest]:
        """Requests meant for somewhere else (proxy tunnels and absolute-URL requests)."""
        with self._lock:
            return [r for r in self.requests if r.method == "CONNECT" or "://" in r.path]

    def model_requests(self) -> list[RecordedRequest]:
        """The recorded ``POST /v1/responses`` requests."""
        with self._lock:
            return [
                r
                for r in self.requests
                if r.method == "POST" and r.path.split("?", 1)[0].endswith("/responses")
            ]

    def _next_reply(self) -> str:
        with self._lock:
            index = min(self._answered, len(self.replies) - 1)
            self._answered += 1
        return self.replies[index]

    def __enter__(self) -> FakeResponses:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            timeout = SOCKET_TIMEOUT
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _record(self, body: Any) -> None:
                request = RecordedRequest(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                with fake._lock:
                    fake.requests.append(request)

            def _send_json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_CONNECT(self) -> None:
                # Used as the HTTPS proxy of the process under test: a tunnel anywhere is
                # recorded and refused, so traffic meant to leave the loopback shows here.
                self._record(None)
                self._send_json(403, {"error": {"message": "no traffic off the loopback"}})
                self.close_connection = True

            def do_GET(self) -> None:
                self._record(None)
                self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                self._record(body)
                if not self.path.split("?", 1)[0].endswith("/responses"):
                    self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})
                    return
                self._stream(fake._next_reply(), body)

            def _stream(self, text: str, body: Any) -> None:
                model = body.get("model", "gpt-fake") if isinstance(body, dict) else "gpt-fake"
                response_id = f"resp_{uuid.uuid4().hex[:24]}"
                item_id = f"msg_{uuid.uuid4().hex[:24]}"
                item = {
                    "type": "message",
                    "id": item_id,
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
                base = {"id": response_id, "object": "response", "model": model}
                usage = {
                    "input_tokens": fake.input_tokens,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": max(1, len(text) // 4),
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": fake.input_tokens + max(1, len(text) // 4),
                }
                frames = [
                    _sse(
                        {"type": "response.created", "response": {**base, "status": "in_progress"}}
                    ),
                    _sse(
                        {
                            "type": "response.output_item.added",
                            "output_index": 0,
                            "item": {**item, "status": "in_progress", "content": []},
                        }
                    ),
                    _sse(
                        {
                            "type": "response.output_text.delta",
                            "item_id": item_id,
                            "output_index": 0,
                            "content_index": 0,
                            "delta": text,
                        }
                    ),
                    _sse({"type": "response.output_item.done", "output_index": 0, "item": item}),
                    _sse(
                        {
                            "type": "response.completed",
                            "response": {
                                **base,
                                "status": "completed",
                                "output": [item],
                                "usage": usage,
                            },
                        }
                    ),
                ]
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
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
