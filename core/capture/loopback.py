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

Any local process can reach a port on ``127.0.0.1``, so only the client's requests count:

* **A token per capture.** :attr:`LoopbackCapture.address`, the base URL the client is given,
  ends in a random path segment (``http://127.0.0.1:PORT/<token>``); a request whose path does
  not start with it is answered 403 and kept nowhere. The token is taken off the paths kept.
* **Tunnels.** A client sends no path with a ``CONNECT``: a tunnel counts as the client's when
  it carries the token as proxy credentials (:attr:`LoopbackCapture.proxy_address`), else —
  unless ``proxy_token_required`` — when it comes from a process of this user (read from the
  system's socket table where it has one). Any other tunnel is answered 403, noted, and ends
  nothing.
* **Bounds.** At most :data:`MAX_KEPT_REQUESTS` requests and :data:`MAX_KEPT_BYTES` of bodies
  are kept, each body at most ``max_request_bytes``; past them a request is still answered,
  its body dropped (kept cut) or the request not kept, with one note.
* **Shapes.** Each field the capture reads from a model request (``model``, ``stream``,
  ``system``, ``instructions``, ``messages``, ``input`` and their items' ``type``, ``role``
  and ``content``) is type-checked; a request with one of the wrong type is kept as not JSON,
  with one note naming the field.

Everything not kept is said in :attr:`LoopbackCapture.notes`, one line each.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import os
import secrets
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from ..lean_dataclass import dataclass

HOST = "127.0.0.1"
MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""The most of one request body kept; the rest is read and dropped, and the record says cut."""
MAX_KEPT_REQUESTS = 256
"""The most requests kept by one capture; later ones are answered and not kept."""
MAX_KEPT_BYTES = 64 * 1024 * 1024
"""The most bytes of bodies kept by one capture, all requests together."""
MAX_NOTES = 50
"""The most notes kept; past it one last line counts the rest."""
PROXY_USER = "promptdeck"
"""The user name of :attr:`LoopbackCapture.proxy_address`'s credentials (its password is the
capture's token)."""
SOCKET_TIMEOUT = 30.0
CANNED_TEXT = "Captured."
NOT_FOUND = {"type": "error", "error": {"type": "not_found_error", "message": "not found"}}


@dataclass(frozen=True)
class CapturedRequest:
    """One request the client sent: its method, path, headers and the exact bytes of its body.

    Attributes:
        cut: True when the body was over :data:`MAX_REQUEST_BYTES` (or the capture's bound on
            bodies kept) and only its start is kept.
        size: the body's full size in bytes (``content-length``).
        headers: the request's headers, names in lower case.
        problem: why the body, JSON though it is, is not taken apart (a field of the wrong
            type, see :func:`shape_problem`); empty when it is fine.
    """

    method: str
    path: str
    body: bytes
    size: int
    cut: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    problem: str = ""

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
        """The body as JSON, or None when it is not JSON (or was cut, or has a field of the
        wrong type: see :attr:`problem`)."""
        if self.cut or self.problem:
            return None
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):
            return None


_ITEM_LISTS = ("messages", "input")
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "model": (str,),
    "stream": (bool,),
    "system": (str, list),
    "instructions": (str,),
    "messages": (list,),
    "input": (str, list),
    "tools": (list,),
}
"""The top-level fields the capture reads, and the types it reads them as (null is absent)."""


def _kind(value: Any) -> str:
    names = {bool: "boolean", int: "number", float: "number", str: "string", list: "list"}
    return names.get(type(value), "object" if isinstance(value, dict) else "value")


def _content_problem(content: Any) -> str:
    if content is None or isinstance(content, str):
        return ""
    if not isinstance(content, list):
        return f"a {_kind(content)}, not text or a list"
    for block in content:
        if isinstance(block, dict) and not isinstance(block.get("text", ""), str | None):
            return f"a block whose text is a {_kind(block['text'])}"
    return ""


def shape_problem(body: Any) -> str:
    """The first field of a model request's JSON ``body`` that is not of the type the capture
    reads it as (one line), or ``""``. A body that is not an object is not judged here."""
    if not isinstance(body, dict):
        return ""
    for name, types in _FIELD_TYPES.items():
        value = body.get(name)
        if value is not None and not isinstance(value, types):
            return f"'{name}' is a {_kind(value)}"
    problem = _content_problem(body.get("system"))
    if problem:
        return f"'system' is {problem}"
    for name in _ITEM_LISTS:
        items = body.get(name)
        for index, item in enumerate(items if isinstance(items, list) else ()):
            if not isinstance(item, dict):
                continue
            where = f"'{name}[{index}]'"
            for key in ("type", "role"):
                if not isinstance(item.get(key), str | None):
                    return f"{where} has a {key} that is a {_kind(item[key])}"
            problem = _content_problem(item.get("content"))
            if problem:
                return f"{where} has content that is {problem}"
    return ""


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

    def _declared_size(self) -> int:
        try:
            return max(0, int(self.headers.get("content-length") or 0))
        except ValueError:
            return 0

    def _read_body(self, size: int, keep: int) -> bytes:
        """Read the ``size`` bytes of the body, keeping the first ``keep``; the rest is read
        and dropped, so the client is answered."""
        kept = self.rfile.read(min(size, keep)) if size and keep else b""
        left = size - len(kept)
        while left > 0:
            chunk = self.rfile.read(min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)
        return kept

    def _stray(self, why: str) -> None:
        """Answer a request that is not the client's with an error; nothing of it is kept."""
        self.server.capture.note(f"{why}: answered 403, not kept")
        self.send_json(403, {"error": {"message": "promptdeck capture: not this capture's"}})
        self.close_connection = True

    def _handle(self) -> None:
        capture = self.server.capture
        headers = {key.lower(): value for key, value in self.headers.items()}
        sender = f"{self.command} from port {self.client_address[1]}"
        if CapturedRequest(self.command, self.path, b"", 0).refused_host is not None:
            if not capture.tunnel_is_clients(headers, self.client_address[1]):
                self._stray(f"a request for another host ({sender}) not from the client")
                return
            # Answered before it is kept: keeping it stops the capture, and the client is to
            # have its refusal first.
            self.send_json(
                403, {"error": {"message": "promptdeck capture: no traffic off the loopback"}}
            )
            self.close_connection = True
            capture.add(CapturedRequest(self.command, self.path, b"", 0, headers=headers))
            return
        path = capture.own_path(self.path)
        if path is None:
            self._stray(f"a request without this capture's token ({sender})")
            return
        size = self._declared_size() if self.command in ("POST", "PUT", "PATCH") else 0
        body = self._read_body(size, capture.reserve(size))
        request = CapturedRequest(
            self.command, path, body, size, cut=size > len(body), headers=headers
        )
        if not request.cut and request.method == "POST" and body:
            problem = shape_problem(request.json())
            if problem:
                request = CapturedRequest(
                    self.command, path, body, size, headers=headers, problem=problem
                )
                capture.note(f"{self.command} {request.route}: {problem}; not taken apart")
        capture.add(request)
        capture.answer(self, request)

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


def _peer_uid(peer_port: int, server_port: int) -> int | None:
    """The user owning the loopback connection from ``peer_port`` to ``server_port``, read
    from Linux's socket table; None where there is none or it does not list the connection."""
    try:
        with open("/proc/net/tcp", encoding="ascii", errors="replace") as table:
            rows = table.read(8 * 1024 * 1024).splitlines()[1:]
    except OSError:
        return None
    for row in rows:
        fields = row.split()
        if len(fields) < 8:
            continue
        local, remote = fields[1].rpartition(":")[2], fields[2].rpartition(":")[2]
        try:
            if int(local, 16) == peer_port and int(remote, 16) == server_port:
                return int(fields[7])
        except ValueError:
            continue
    return None


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
        proxy_token_required: bool = False,
    ) -> None:
        self.answer = answer
        self.on_refused = on_refused
        self.max_request_bytes = max_request_bytes
        self.proxy_token_required = proxy_token_required
        self.token = secrets.token_hex(16)
        """The capture's secret path segment (and proxy password): only its client has it."""
        self._lock = threading.Lock()
        self._requests: list[CapturedRequest] = []
        self._kept_bytes = 0
        self._notes: list[str] = []
        self._notes_dropped = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def own_path(self, path: str) -> str | None:
        """``path`` without the token segment it starts with, or None when it does not."""
        prefix = "/" + self.token
        head, sep, query = path.partition("?")
        rest = head[len(prefix) :]
        if hmac.compare_digest(head[: len(prefix)], prefix) and rest[:1] in ("", "/"):
            return (rest or "/") + sep + query
        return None

    def tunnel_is_clients(self, headers: Mapping[str, str], peer_port: int) -> bool:
        """Whether a request for another host came from the client: it carries the token as
        proxy credentials, or (unless they are required) it carries none and its sender is a
        process of this user — or cannot be told, on a system without a socket table."""
        credentials = headers.get("proxy-authorization")
        if credentials is not None:
            return self._proxy_token(credentials)
        if self.proxy_token_required:
            return False
        owner = _peer_uid(peer_port, self.port)
        return owner is None or owner == os.getuid()

    def _proxy_token(self, credentials: str) -> bool:
        scheme, _, value = credentials.strip().partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return False
        password = decoded.partition(":")[2]
        return hmac.compare_digest(password.encode(), self.token.encode())

    def reserve(self, size: int) -> int:
        """How many bytes of a ``size``-byte body may be kept, taken from the capture's bound
        on bodies kept (called from the server's threads)."""
        with self._lock:
            room = max(0, MAX_KEPT_BYTES - self._kept_bytes)
            keep = min(size, self.max_request_bytes, room)
            self._kept_bytes += keep
        if keep < min(size, self.max_request_bytes):  # one over its own bound says ``cut``
            self.note(f"a body of {size:,} bytes past the bound on bodies kept: kept cut")
        return keep

    def note(self, line: str) -> None:
        """Add one line to :attr:`notes` (called from the server's threads)."""
        with self._lock:
            if len(self._notes) < MAX_NOTES:
                self._notes.append(line)
            else:
                self._notes_dropped += 1

    @property
    def notes(self) -> list[str]:
        """What was not kept or not taken apart, and why: one line each, in order."""
        with self._lock:
            more = [f"… and {self._notes_dropped} more"] if self._notes_dropped else []
            return [*self._notes, *more]

    def add(self, request: CapturedRequest) -> None:
        """Keep one request (called from the server's threads)."""
        host = request.refused_host
        with self._lock:
            kept = len(self._requests) < MAX_KEPT_REQUESTS or host is not None
            if kept:
                self._requests.append(request)
        if not kept:
            self.note(f"{request.method} {request.route}: past {MAX_KEPT_REQUESTS} requests")
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
    def port(self) -> int:
        """The port it listens on, while open."""
        if self._server is None:
            raise RuntimeError("the capture server is not open")
        return int(self._server.server_port)

    @property
    def address(self) -> str:
        """``http://127.0.0.1:<port>/<token>``, while open: the client's API base URL."""
        return f"http://{HOST}:{self.port}/{self.token}"

    base_url = address

    @property
    def proxy_address(self) -> str:
        """``http://promptdeck:<token>@127.0.0.1:<port>``, while open: the client's proxy
        with the token as its credentials (see :meth:`tunnel_is_clients`)."""
        return f"http://{PROXY_USER}:{self.token}@{HOST}:{self.port}"

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
