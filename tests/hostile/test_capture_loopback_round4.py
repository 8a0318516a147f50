"""The capture's loopback server against other local processes and malformed requests: only a
request carrying the capture's token is kept, a stray tunnel is answered with an error and ends
nothing, what is kept is bounded in count and bytes, and a field of the wrong type is one note —
never a traceback."""

from __future__ import annotations

import base64
import http.client
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from promptdeck.core.capture import loopback
from promptdeck.core.capture.loopback import LoopbackCapture
from promptdeck.core.capture.parts import request_streams
from promptdeck.core.demo import prepare_demo

MAIN = "import sys; from promptdeck.cli import main; sys.exit(main())"


def _send(
    capture: LoopbackCapture,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", capture.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def _messages(capture: LoopbackCapture, body: object, *, token: bool = True) -> int:
    prefix = f"/{capture.token}" if token else ""
    data = json.dumps(body).encode()
    return _send(capture, "POST", f"{prefix}/v1/messages", data, {"content-type": "json"})


def test_the_base_url_carries_a_token_only_the_client_is_given() -> None:
    with LoopbackCapture() as first, LoopbackCapture() as second:
        assert first.token != second.token and len(first.token) >= 32
        assert urlsplit(first.address).path == f"/{first.token}"
        assert first.base_url == first.address


def test_a_request_without_the_token_is_refused_and_not_kept() -> None:
    with LoopbackCapture() as capture:
        assert _messages(capture, {"model": "m", "messages": []}, token=False) == 403
        assert _send(capture, "POST", "/wrong-token/v1/messages", b"{}") == 403
        assert _send(capture, "GET", f"/{capture.token}x/v1/models") == 403
        assert capture.requests == []
        assert len(capture.notes) == 3 and all("token" in note for note in capture.notes)
        assert _messages(capture, {"model": "m", "messages": []}) == 200
        (kept,) = capture.requests
        assert kept.path == "/v1/messages" and capture.token not in kept.path


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_a_stray_tunnel_is_answered_and_ends_nothing() -> None:
    ended = threading.Event()
    with LoopbackCapture(on_refused=lambda host: ended.set(), proxy_token_required=True) as cap:
        assert _send(cap, "CONNECT", "api.example.com:443") == 403
        wrong = {"proxy-authorization": _basic("promptdeck", "not-the-token")}
        assert _send(cap, "CONNECT", "api.example.com:443", headers=wrong) == 403
        assert _send(cap, "GET", "http://api.example.com/v1/models", headers=wrong) == 403
        assert not ended.is_set() and cap.refused == [] and cap.requests == []
        assert len(cap.notes) == 3
        # The capture goes on: its client's request is still kept.
        assert _messages(cap, {"model": "m", "messages": []}) == 200
        assert len(cap.requests) == 1
        # The client's own tunnel (the token as its proxy password) ends it, as before.
        right = {"proxy-authorization": _basic("promptdeck", cap.token)}
        assert _send(cap, "CONNECT", "api.example.com:443", headers=right) == 403
        # The refusal is answered before it is kept (the client hears it first): wait for it.
        assert ended.wait(10) and cap.refused == ["api.example.com:443"]
        assert urlsplit(cap.proxy_address).password == cap.token


def test_a_tunnel_with_wrong_credentials_ends_nothing_by_default() -> None:
    ended = threading.Event()
    with LoopbackCapture(on_refused=lambda host: ended.set()) as capture:
        wrong = {"proxy-authorization": "Basic !!!not-base64"}
        assert _send(capture, "CONNECT", "api.example.com:443", headers=wrong) == 403
        assert not ended.is_set() and capture.refused == []


def test_what_is_kept_is_bounded_in_count_and_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loopback, "MAX_KEPT_REQUESTS", 4)
    monkeypatch.setattr(loopback, "MAX_KEPT_BYTES", 100_000)
    with LoopbackCapture() as capture:
        for _ in range(3):
            body = {"model": "m", "messages": [], "system": "x" * 45_000}
            assert _messages(capture, body) == 200
        for _ in range(3):
            assert _messages(capture, {"model": "m", "messages": []}) == 200
        kept = capture.requests
        assert len(kept) == 4
        assert sum(len(request.body) for request in kept) <= 100_000
        assert kept[2].cut and not kept[0].cut and not kept[1].cut
        assert any("past the bound on bodies kept" in note for note in capture.notes)
        assert sum("past 4 requests" in note for note in capture.notes) == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": "m", "messages": 5}, "'messages'"),
        ({"model": "m", "messages": True}, "'messages'"),
        ({"model": ["m"], "messages": []}, "'model'"),
        ({"model": "m", "input": 7}, "'input'"),
        ({"model": "m", "system": {"text": "x"}}, "'system'"),
        ({"model": "m", "messages": [{"role": "user", "content": 5}]}, "'messages[0]'"),
        ({"model": "m", "messages": [{"role": ["user"], "content": "x"}]}, "'messages[0]'"),
        ({"model": "m", "input": [{"type": "message", "content": [{"text": 3}]}]}, "'input[0]'"),
    ],
)
def test_a_field_of_the_wrong_type_is_one_note_not_a_crash(body: object, field: str) -> None:
    with LoopbackCapture() as capture:
        assert _messages(capture, {**body, "stream": True}) == 200  # type: ignore[dict-item]
        (kept,) = capture.requests
        assert kept.problem.startswith(field) and kept.json() is None
        assert request_streams(kept.json()) == ("", "")
        (note,) = capture.notes
        assert field in note and "\n" not in note


def test_capture_of_a_client_sending_messages_as_a_number_is_one_line(tmp_path: Path) -> None:
    root = prepare_demo(tmp_path / "ledgerline")
    client = tmp_path / "fake-claude"
    client.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys, urllib.request\n"
        "if sys.argv[1:] == ['--version']:\n    print('2.1.197 (Claude Code)')\n    sys.exit(0)\n"
        "body = json.dumps({'model': 'claude-sonnet-4-5', 'messages': 5}).encode()\n"
        "request = urllib.request.Request(os.environ['ANTHROPIC_BASE_URL'] + '/v1/messages',"
        " data=body, headers={'content-type': 'application/json'})\n"
        "urllib.request.urlopen(request, timeout=30).read()\n",
        encoding="utf-8",
    )
    client.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTDECK_", "ANTHROPIC_"))}
    env.update(HOME=str(tmp_path / "home"), PROMPTDECK_CLAUDE_BIN=str(client))
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "capture", "--story", "1-1"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=90,
        check=False,
    )
    assert done.returncode == 12, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "sent 1 request(s)" in done.stderr
