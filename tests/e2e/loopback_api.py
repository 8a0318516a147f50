"""What the loopback fakes of the agent APIs share, on promptdeck's own capture server.

A :class:`LoopbackFake` opens :class:`~promptdeck.core.capture.LoopbackCapture` — the server
``promptdeck capture`` points the real clients at — with an answer of its own: the server
records every request (method, path, headers, exact body) before it is answered, refuses and
records a proxy tunnel or an absolute-URL request meant for another host, and hands each
``POST`` to :meth:`LoopbackFake.answer`, where a fake speaks its API through the
:class:`~promptdeck.core.capture.Exchange`'s helpers (one JSON reply, or a stream of
server-sent events). ``HEAD`` gets an empty 200, any other method the fake's 404. The fakes
read the recording as :class:`RecordedRequest` (JSON-parsed bodies), which a session can write
out and read back.

:func:`agent_env` is the environment an agent CLI runs in against a fake: the caller's, without
anything that would point the CLI (or promptdeck) elsewhere.
"""

from __future__ import annotations

import json
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar, cast

from promptdeck.core.capture import CapturedRequest, Exchange, LoopbackCapture


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


def _body(captured: CapturedRequest) -> Any:
    """The body as JSON, or its text where it is not JSON; ``None`` when empty."""
    try:
        return json.loads(captured.body or b"null")
    except ValueError:
        return captured.body.decode("utf-8", "replace")


R = TypeVar("R", bound=RecordedRequest)


@dataclass
class LoopbackFake(ABC, Generic[R]):
    """A fake API on the loopback; use it as a context manager.

    Subclasses set :attr:`request_type` (their kind of :class:`RecordedRequest`),
    :attr:`not_found` (their API's 404 body) and :meth:`answer`.
    """

    request_type: ClassVar[type[RecordedRequest]] = RecordedRequest
    not_found: ClassVar[dict[str, Any]] = {"error": {"message": "not found"}}

    _lock: threading.Lock = field(default_factory=threading.Lock, kw_only=True, repr=False)
    _server: LoopbackCapture | None = field(default=None, kw_only=True, repr=False)
    _read: list[R] = field(default_factory=list, kw_only=True, repr=False)

    @property
    def address(self) -> str:
        """``http://127.0.0.1:<port>``, while the fake is open."""
        assert self._server is not None
        return self._server.address

    @property
    def proxy_url(self) -> str:
        """``http://127.0.0.1:<port>``: as ``HTTPS_PROXY``, it records what would go out."""
        return self.address

    @property
    def requests(self) -> list[R]:
        """Every request received, in order (those meant for another host included)."""
        captured = self._server.requests if self._server is not None else []
        with self._lock:
            for request in captured[len(self._read) :]:
                self._read.append(
                    cast(
                        R,
                        self.request_type(
                            request.method, request.path, dict(request.headers), _body(request)
                        ),
                    )
                )
            return list(self._read)

    def recorded(self, keep: Callable[[R], bool]) -> list[R]:
        """The requests recorded so far that ``keep`` accepts, in order."""
        return [request for request in self.requests if keep(request)]

    @abstractmethod
    def answer(self, exchange: Exchange, request: R) -> None:
        """Answer ``request``, a recorded ``POST``, through ``exchange``'s send helpers."""

    def _answer(self, exchange: Exchange, captured: CapturedRequest) -> None:
        if captured.method == "HEAD":
            exchange.send_empty()
        elif captured.method == "POST":
            request = cast(
                R,
                self.request_type(
                    captured.method, captured.path, dict(captured.headers), _body(captured)
                ),
            )
            self.answer(exchange, request)
        else:
            exchange.send_json(404, self.not_found)

    def __enter__(self) -> Self:
        self._server = LoopbackCapture(self._answer).__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.__exit__(*exc)


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
