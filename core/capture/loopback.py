"""A loopback stand-in for the Anthropic Messages API that records what a client sends.

It listens on ``127.0.0.1`` on a port the system picks, keeps the exact bytes of every
``POST`` (up to :data:`MAX_REQUEST_BYTES`, then cut and marked so), and answers each message
request with a canned stop: an empty ``end_turn`` reply, streamed as server-sent events when
the request asks for a stream, as one JSON message otherwise. Nothing is forwarded anywhere.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"
MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""The most of one request body kept; the rest is read and dropped, and the record says cut."""
SOCKET_TIMEOUT = 30.0
CANNED_TEXT = "Captured."


@dataclass(frozen=True)
class CapturedRequest:
    """One request the client sent: its path and the exact bytes of its body.

    Attributes:
        cut: True when the body was over :data:`MAX_REQUEST_BYTES` and only its start is kept.
        size: the body's full size in bytes (``content-length``).
    """

    method: str
    path: str
    body: bytes
    size: int
    cut: bool = False

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON (or was cut)."""
        if self.cut:
            return None
        try:
            return json.loads(self.body)
        except ValueError:
            return None


def _message(model: str) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": CANNED_TEXT}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield {"type": "message_start", "message": dict(message, content=[], stop_reason=None)}
    yield {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    yield {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": CANNED_TEXT},
    }
    yield {"type": "content_block_stop", "index": 0}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 1},
    }
    yield {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = SOCKET_TIMEOUT
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        # Quiet: the recording is the log.
        return

    def _send(self, status: int, content_type: str, data: bytes, *, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        if close:
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_HEAD(self) -> None:
        # An empty 200, so that a reachability check by HEAD passes.
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._send(404, "application/json", b'{"type":"error","error":{"type":"not_found_error"}}')

    def do_POST(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        kept = self.rfile.read(min(size, MAX_REQUEST_BYTES)) if size else b""
        left = size - len(kept)
        while left > 0:  # read and drop the rest, so the client is answered
            chunk = self.rfile.read(min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)
        request = CapturedRequest("POST", self.path, kept, size, cut=size > MAX_REQUEST_BYTES)
        self.server.capture.add(request)
        route = self.path.split("?", 1)[0]
        if route.endswith("/count_tokens"):
            self._send(200, "application/json", b'{"input_tokens": 1}')
            return
        body = request.json()
        model = str(body.get("model") or "unknown") if isinstance(body, dict) else "unknown"
        message = _message(model)
        if isinstance(body, dict) and body.get("stream"):
            data = b"".join(
                f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                for event in _events(message)
            )
            self._send(200, "text/event-stream", data, close=True)
        else:
            self._send(200, "application/json", json.dumps(message).encode())


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, capture: LoopbackCapture) -> None:
        super().__init__((HOST, 0), _Handler)
        self.capture = capture


class LoopbackCapture:
    """The loopback server; open it as a context manager, point the client at :attr:`base_url`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[CapturedRequest] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def add(self, request: CapturedRequest) -> None:
        """Keep one request (called from the server's threads)."""
        with self._lock:
            self._requests.append(request)

    @property
    def requests(self) -> list[CapturedRequest]:
        """Every request received so far, in order."""
        with self._lock:
            return list(self._requests)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``, while open."""
        if self._server is None:
            raise RuntimeError("the capture server is not open")
        return f"http://{HOST}:{self._server.server_port}"

    def __enter__(self) -> LoopbackCapture:
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
