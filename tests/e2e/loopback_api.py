"""What the loopback fakes of the agent APIs share: the server, the recording, the replies' shapes.

A :class:`LoopbackFake` listens on ``127.0.0.1`` on a random port while it is open as a context
manager, records every request (method, path, headers, JSON body) before it is answered, and
hands each ``POST`` to :meth:`LoopbackFake.answer`, where a fake speaks its own API through the
:class:`LoopbackHandler`'s helpers: one JSON reply, or a stream of server-sent events. Any
``GET`` is recorded and gets the fake's 404. A fake that answers other methods names a handler
class of its own.

:func:`agent_env` is the environment an agent CLI runs in against a fake: the caller's, without
anything that would point the CLI (or promptdeck) elsewhere.
"""

from __future__ import annotations

import json
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar, cast

HOST = "127.0.0.1"
SOCKET_TIMEOUT = 30.0


@dataclass
class RecordedRequest:
    """One request a fake received; each fake's own kind adds readers for its API's body."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def route(self) -> str:
        """The path without its query string."""
        return self.path.split("?", 1)[0]


R = TypeVar("R", bound=RecordedRequest)


def sse(event: dict[str, Any]) -> bytes:
    """One server-sent event, named after its payload's ``type`` (as both APIs name theirs)."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


class LoopbackServer(ThreadingHTTPServer):
    """The HTTP server of one fake (its handlers reach the fake through it)."""

    daemon_threads = True

    def __init__(self, fake: LoopbackFake[Any], handler: type[LoopbackHandler]) -> None:
        super().__init__((HOST, 0), handler)
        self.fake = fake


class LoopbackHandler(BaseHTTPRequestHandler):
    """Serves one connection of a fake: records each request, then answers it."""

    server: LoopbackServer
    timeout = SOCKET_TIMEOUT
    protocol_version = "HTTP/1.1"

    @property
    def fake(self) -> LoopbackFake[Any]:
        """The fake this connection serves."""
        return self.server.fake

    def log_message(self, format: str, *args: Any) -> None:
        # Quiet: the recording is the log, and stderr belongs to pytest.
        return

    def record(self, body: Any = None) -> RecordedRequest:
        """Record this request, with ``body``, in the fake's :attr:`~LoopbackFake.requests`."""
        headers = {key.lower(): value for key, value in self.headers.items()}
        request: RecordedRequest = self.fake.record(self.command, self.path, headers, body)
        return request

    def read_body(self) -> Any:
        """The request's body: its JSON, or its text where it is not JSON; ``None`` when empty."""
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return raw.decode("utf-8", "replace")

    def send_json(self, status: int, payload: Any) -> None:
        """Answer with one JSON document."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, events: Iterable[dict[str, Any]]) -> None:
        """Answer with ``events`` as one server-sent-event stream, then close the connection."""
        data = b"".join(sse(event) for event in events)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def do_GET(self) -> None:
        self.record()
        self.send_json(404, self.fake.not_found)

    def do_POST(self) -> None:
        request = self.record(self.read_body())
        self.fake.answer(self, request)


@dataclass
class LoopbackFake(ABC, Generic[R]):
    """A fake API on the loopback; use it as a context manager.

    Subclasses set :attr:`request_type` (their kind of :class:`RecordedRequest`),
    :attr:`not_found` (their API's 404 body) and :meth:`answer`; :attr:`handler` where they
    answer more than ``GET`` and ``POST``.

    Attributes:
        requests: every request received, in order.
    """

    request_type: ClassVar[type[RecordedRequest]] = RecordedRequest
    handler: ClassVar[type[LoopbackHandler]] = LoopbackHandler
    not_found: ClassVar[dict[str, Any]] = {"error": {"message": "not found"}}

    requests: list[R] = field(default_factory=list, kw_only=True)
    _lock: threading.Lock = field(default_factory=threading.Lock, kw_only=True, repr=False)
    _server: LoopbackServer | None = field(default=None, kw_only=True, repr=False)
    _thread: threading.Thread | None = field(default=None, kw_only=True, repr=False)

    @property
    def address(self) -> str:
        """``http://127.0.0.1:<port>``, while the fake is open."""
        assert self._server is not None
        return f"http://{HOST}:{self._server.server_port}"

    def record(self, method: str, path: str, headers: dict[str, str], body: Any) -> R:
        """Record one request (called from the server's threads)."""
        request = cast(R, self.request_type(method, path, headers, body))
        with self._lock:
            self.requests.append(request)
        return request

    def recorded(self, keep: Callable[[R], bool]) -> list[R]:
        """The requests recorded so far that ``keep`` accepts, in order."""
        with self._lock:
            return [request for request in self.requests if keep(request)]

    @abstractmethod
    def answer(self, exchange: LoopbackHandler, request: R) -> None:
        """Answer ``request``, a recorded ``POST``, through ``exchange``'s send helpers."""

    def __enter__(self) -> Self:
        self._server = LoopbackServer(self, self.handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def agent_env(
    home: Path, prefixes: tuple[str, ...], names: Collection[str] = (), **settings: str
) -> dict[str, str]:
    """The caller's environment for an agent CLI run against a fake.

    Without the variables whose names start with ``PROMPTDECK_`` or one of ``prefixes``, or
    are, in lower case, one of ``names``; with ``HOME=home`` (created), ``NO_COLOR=1`` and
    ``settings``.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PROMPTDECK_", *prefixes)) and key.lower() not in names
    }
    home.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), NO_COLOR="1", **settings)
    return env
