"""A loopback stand-in for the clients' APIs that records what a client sends and lets nothing out.

It listens on ``127.0.0.1`` on a port the system picks and keeps the exact bytes of every
request (up to :data:`MAX_REQUEST_BYTES` of a body, then cut and marked so). By default it
answers each model request with a canned stop: the Anthropic Messages API (``…/messages``) an
empty ``end_turn`` reply, streamed as server-sent events when the request asks for a stream;
the OpenAI Responses API (``…/responses``) one completed assistant message as events. An
``answer`` of the caller's replaces that (the end-to-end fakes script their replies so).

The same server is the client's HTTP(S) proxy: a ``CONNECT`` tunnel or an absolute-URL request
is meant for another host. It is recorded (:attr:`LoopbackCapture.refused`), refused with a
403 and the connection closed — nothing is forwarded anywhere — and ``on_refused`` is told, so
a capture can stop at once.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

HOST = "127.0.0.1"
MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""The most of one request body kept; the rest is read and dropped, and the record says cut."""
SOCKET_TIMEOUT = 30.0
CANNED_TEXT = "Captured."
NOT_FOUND = {"type": "error", "error": {"type": "not_found_error", "message": "not found"}}


@dataclass(frozen=True)
class CapturedRequest:
    """One request the client sent: its method, path, headers and the exact bytes of its body.

    Attributes:
        cut: True when the body was over :data:`MAX_REQUEST_BYTES` and only its start is kept.
        size: the body's full size in bytes (``content-length``).
        headers: the request's headers, names in lower case.
    """

    method: str
    path: str
    body: bytes
    size: int
    cut: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def route(self) -> str:
        """The path without its query string."""
        return self.path.split("?", 1)[0]

    @property
    def refused_host(self) -> str | None:
        """The host this request was meant for when it is not the loopback's own: a proxy
        tunnel (``CONNECT host:port``) or an absolute-URL request; None otherwise."""
        if self.method == "CONNECT":
            return self.path
        if "://" in self.path:
            return urlsplit(self.path).netloc or self.path
        return None

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON (or was cut)."""
        if self.cut:
            return None
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):
            return None


def sse(event: Mapping[str, Any]) -> bytes:
    """One server-sent event, named after its payload's ``type`` (as both APIs name theirs)."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


class Exchange(BaseHTTPRequestHandler):
    """One connection of the loopback: records each request, then has it answered."""

    server: _Server
    timeout = SOCKET_TIMEOUT
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        # Quiet: the recording is the log, and stderr belongs to the caller.
        return

    def send_json(self, status: int, payload: Any) -> None:
        """Answer with one JSON document."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def send_events(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Answer with ``events`` as one server-sent-event stream, then close the connection."""
        data = b"".join(sse(event) for event in events)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def send_empty(self, status: int = 200) -> None:
        """Answer with no body (a reachability check by ``HEAD`` passes)."""
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def _read_body(self) -> tuple[bytes, int]:
        try:
            size = max(0, int(self.headers.get("content-length") or 0))
        except ValueError:
            size = 0
        bound = self.server.capture.max_request_bytes
        kept = self.rfile.read(min(size, bound)) if size else b""
        left = size - len(kept)
        while left > 0:  # read and drop the rest, so the client is answered
            chunk = self.rfile.read(min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)
        return kept, size

    def _handle(self) -> None:
        body, size = self._read_body() if self.command in ("POST", "PUT", "PATCH") else (b"", 0)
        request = CapturedRequest(
            self.command,
            self.path,
            body,
            size,
            cut=size > self.server.capture.max_request_bytes,
            headers={key.lower(): value for key, value in self.headers.items()},
        )
        if request.refused_host is not None:
            # Answered before it is kept: keeping it stops the capture, and the client is to
            # have its refusal first.
            self.send_json(
                403, {"error": {"message": "promptdeck capture: no traffic off the loopback"}}
            )
            self.close_connection = True
            self.server.capture.add(request)
            return
        self.server.capture.add(request)
        self.server.capture.answer(self, request)

    do_GET = do_POST = do_HEAD = do_PUT = do_PATCH = do_DELETE = do_CONNECT = _handle


def anthropic_message(model: str, text: str = CANNED_TEXT, input_tokens: int = 1) -> dict[str, Any]:
    """A Messages API reply saying ``text`` and ending the turn (``end_turn``)."""
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


def anthropic_events(message: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The events that stream ``message`` (an :func:`anthropic_message`), its text in chunks of
    40 characters."""
    text = "".join(str(block.get("text", "")) for block in message["content"])
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    yield {"type": "message_start", "message": start}
    yield {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
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


def response_events(text: str, model: str, input_tokens: int = 1) -> list[dict[str, Any]]:
    """The Responses API events of one completed response whose only output is an assistant
    message saying ``text``: created, the item added, its text, the item done, completed."""
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
    output_tokens = max(1, len(text) // 4)
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }
    return [
        {"type": "response.created", "response": {**base, "status": "in_progress"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**item, "status": "in_progress", "content": []},
        },
        {
            "type": "response.output_text.delta",
            "item_id": item_id,
            "output_index": 0,
            "content_index": 0,
            "delta": text,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": {**base, "status": "completed", "output": [item], "usage": usage},
        },
    ]


def canned_stop(exchange: Exchange, request: CapturedRequest) -> None:
    """The default answer: a canned stop for a model request of either API, a 404 otherwise
    (an empty 200 for ``HEAD``, a count of 1 for Anthropic's token counting)."""
    if request.method == "HEAD":
        exchange.send_empty()
        return
    route = request.route
    body = request.json()
    model = str(body.get("model") or "unknown") if isinstance(body, dict) else "unknown"
    if request.method != "POST":
        exchange.send_json(404, NOT_FOUND)
    elif route.endswith("/count_tokens"):
        exchange.send_json(200, {"input_tokens": 1})
    elif route.endswith("/messages"):
        message = anthropic_message(model)
        if isinstance(body, dict) and body.get("stream"):
            exchange.send_events(anthropic_events(message))
        else:
            exchange.send_json(200, message)
    elif route.endswith("/responses"):
        exchange.send_events(response_events(CANNED_TEXT, model))
    else:
        exchange.send_json(404, NOT_FOUND)


Answer = Callable[[Exchange, CapturedRequest], None]
"""How a request is answered, once recorded (never called for a refused one)."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, capture: LoopbackCapture) -> None:
        super().__init__((HOST, 0), Exchange)
        self.capture = capture


class LoopbackCapture:
    """The loopback server; open it as a context manager, point the client at :attr:`address`
    (its API base) and :attr:`address` again as its proxy.

    Args:
        answer: answers each recorded request (default :func:`canned_stop`).
        on_refused: told the host of each request meant for elsewhere (called from the
            server's threads).
        max_request_bytes: the most of one body kept.
    """

    def __init__(
        self,
        answer: Answer = canned_stop,
        *,
        on_refused: Callable[[str], None] | None = None,
        max_request_bytes: int = MAX_REQUEST_BYTES,
    ) -> None:
        self.answer = answer
        self.on_refused = on_refused
        self.max_request_bytes = max_request_bytes
        self._lock = threading.Lock()
        self._requests: list[CapturedRequest] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def add(self, request: CapturedRequest) -> None:
        """Keep one request (called from the server's threads)."""
        with self._lock:
            self._requests.append(request)
        host = request.refused_host
        if host is not None and self.on_refused is not None:
            self.on_refused(host)

    @property
    def requests(self) -> list[CapturedRequest]:
        """Every request received so far, in order (refused ones included)."""
        with self._lock:
            return list(self._requests)

    @property
    def refused(self) -> list[str]:
        """The hosts of the requests meant for somewhere else, in order, each once."""
        hosts = [r.refused_host for r in self.requests if r.refused_host is not None]
        return list(dict.fromkeys(hosts))

    @property
    def address(self) -> str:
        """``http://127.0.0.1:<port>``, while open."""
        if self._server is None:
            raise RuntimeError("the capture server is not open")
        return f"http://{HOST}:{self._server.server_port}"

    base_url = address

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
