"""The Claude-family estimate: labelled, calibrated from finished runs' reported usage, a stated
default without them; the exact count only on request, in the shape Anthropic's API takes."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from builders import make_workspace, write_files
from promptdeck.cli import main
from promptdeck.core.cost import (
    ExactCountError,
    calibrate,
    claude_estimate,
    exact_claude_tokens,
)
from promptdeck.core.cost.estimate import DEFAULT_FACTOR, LABEL
from promptdeck.core.project.workspace import Workspace

SONNET = "claude-sonnet-4-6"
ARTIFACTS = "_bmad-output/implementation-artifacts"
FILES = {
    f"{ARTIFACTS}/sprint-status.yaml": "development_status:\n  1-2-user-registration: "
    "ready-for-dev\n",
    f"{ARTIFACTS}/1-2-user-registration.md": "# Story 1.2: User registration\n\n"
    "Status: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Task 1: Form\n",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path, FILES)


def add_run(
    root: Path, run_id: str, sent: int, reported: int, agent: str = "claude", model: str = SONNET
) -> None:
    write_files(
        root,
        {
            f".promptdeck/runs/{run_id}/meta.json": json.dumps(
                {"story": "1-2", "phase": "dev", "agent": agent}
            ),
            f".promptdeck/runs/{run_id}/cost.json": json.dumps(
                {
                    "model": model,
                    "predicted": {
                        "input_tokens": 100,
                        "cache_write_tokens": sent - 100,
                        "cache_read_tokens": 0,
                    },
                    "actual": {
                        "input_tokens": 10,
                        "cache_write_tokens": reported - 10,
                        "cache_read_tokens": 0,
                        "output_tokens": 50,
                    },
                }
            ),
        },
    )


def test_without_runs_the_default_factor_is_used_and_said(workspace: Workspace) -> None:
    estimate = claude_estimate(workspace, SONNET, "o200k_base", 1000, 200)
    shape = estimate.to_dict()
    assert shape["label"] == LABEL and shape["exact"] is False
    assert shape["factor"] == DEFAULT_FACTOR and shape["runs"] == 0
    assert (shape["system_tokens"], shape["user_tokens"]) == (1300, 260)
    assert shape["source"].startswith("default 1.30")


def test_the_factor_is_the_median_of_this_models_finished_claude_runs(
    workspace: Workspace,
) -> None:
    root = workspace.root
    add_run(root, "r1", sent=1000, reported=1200)
    add_run(root, "r2", sent=1000, reported=1500)
    add_run(root, "r3", sent=2000, reported=2800)
    add_run(root, "r4", sent=1000, reported=9000, agent="simulation")
    add_run(root, "r5", sent=1000, reported=9000, model="claude-opus-4-6")
    add_run(root, "r6", sent=1000, reported=9000, agent="codex")
    # A run whose reported usage is not a whole number counts in nothing.
    write_files(
        root,
        {
            ".promptdeck/runs/r7/meta.json": json.dumps({"story": "1-2", "agent": "claude"}),
            ".promptdeck/runs/r7/cost.json": json.dumps(
                {"model": SONNET, "predicted": {"input_tokens": 5}, "actual": {"dollars": None}}
            ),
        },
    )
    calibration = calibrate(workspace, SONNET)
    assert calibration.runs == 3
    assert calibration.factor == pytest.approx(1.4)
    assert (calibration.low, calibration.high) == (pytest.approx(1.2), pytest.approx(1.5))
    assert claude_estimate(workspace, SONNET, "o200k_base", 1000, 10).system_tokens == 1400


class _Fake(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        _Fake.seen.append(
            {
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": json.loads(self.rfile.read(length)),
            }
        )
        answer = json.dumps({"input_tokens": 4321}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def fake_api() -> Iterator[str]:
    _Fake.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_exact_count_sends_the_prompt_in_the_apis_shape(fake_api: str) -> None:
    count = exact_claude_tokens("SYSTEM", "USER", SONNET, "key-123", fake_api)
    assert count == 4321
    [request] = _Fake.seen
    assert request["path"] == "/v1/messages/count_tokens"
    assert request["headers"]["x-api-key"] == "key-123"
    assert request["headers"]["anthropic-version"] == "2023-06-01"
    assert request["body"] == {
        "model": SONNET,
        "system": "SYSTEM",
        "messages": [{"role": "user", "content": "USER"}],
    }


def test_the_exact_count_without_a_key_sends_nothing(fake_api: str) -> None:
    with pytest.raises(ExactCountError, match="ANTHROPIC_API_KEY"):
        exact_claude_tokens("S", "U", SONNET, "", fake_api)
    assert _Fake.seen == []


def _inspect(
    root: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any]]:
    code = main(["inspect", "1-2", "--json", "--root", str(root), *extra])
    return code, json.loads(capsys.readouterr().out)


def test_inspect_shows_the_estimate_and_opens_no_socket_without_the_flag(
    workspace: Workspace,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_api: str,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "key-123")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api)
    monkeypatch.setenv("ANTHROPIC_MODEL", SONNET)
    monkeypatch.setenv("PROMPTDECK_ANSWER_CACHE", "off")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a socket was opened")

    with monkeypatch.context() as patched:
        patched.setattr(socket.socket, "connect", refuse)
        patched.setattr(socket, "create_connection", refuse)
        code, payload = _inspect(workspace.root, capsys)
    assert code == 0
    estimate = payload["claude_estimate"]
    assert estimate["label"] == LABEL and "exact_tokens" not in estimate
    assert estimate["system_tokens"] == round(payload["system"]["tokens"] * DEFAULT_FACTOR)
    assert _Fake.seen == []

    code, payload = _inspect(workspace.root, capsys, "--exact-claude")
    assert code == 0 and payload["claude_estimate"]["exact_tokens"] == 4321
    [request] = _Fake.seen
    # What is counted is what `compose` prints: the system prompt, byte for byte.
    assert main(["compose", "1-2", "--root", str(workspace.root)]) == 0
    assert request["body"]["system"] == capsys.readouterr().out
    assert request["body"]["model"] == SONNET
