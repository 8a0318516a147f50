"""``promptdeck capture`` against clients that misbehave: missing, too old, hanging, reaching for
another host, sending nothing or a request over the memory bound. Each is one line and exit 12
within the bound (the over-bound request is kept cut and said to be cut), the client is handed
the loopback and nothing else, and nothing leaves the machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from promptdeck.core.capture import CaptureError, capture_prompt
from promptdeck.core.demo import prepare_demo
from promptdeck.core.project import open_workspace
from promptdeck.core.prompt import PromptRequest, compose_prompt
from promptdeck.core.tokens import get_counter

MAIN = "import sys; from promptdeck.cli import main; sys.exit(main())"


def _says_version(version: str) -> str:
    """The start of a fake client: ``--version`` prints ``version`` and ends."""
    return (
        "import sys\nif sys.argv[1:] == ['--version']:\n"
        f"    print('{version} (Claude Code)')\n    sys.exit(0)\n"
    )


VERSION = _says_version("2.1.197")


def _client(tmp_path: Path, body: str, version: str = VERSION) -> Path:
    script = tmp_path / "fake-claude"
    script.write_text(f"#!{sys.executable}\n{version}{body}\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def _capture(root: Path, home: Path, client: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTDECK_", "ANTHROPIC_"))}
    env.update(HOME=str(home), PROMPTDECK_CLAUDE_BIN=str(client))
    return subprocess.run(
        [sys.executable, "-c", MAIN, "capture", "--story", "1-1", *extra],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=90,
    )


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 12, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    return done.stderr


def test_a_missing_client_is_one_line(tmp_path: Path) -> None:
    root = prepare_demo(tmp_path / "ledgerline")
    done = _capture(root, tmp_path / "home", tmp_path / "no-such-claude")
    assert "the claude CLI was not found" in _one_line(done)


def test_a_client_too_old_is_one_line(tmp_path: Path) -> None:
    root = prepare_demo(tmp_path / "ledgerline")
    client = _client(tmp_path, "raise SystemExit('must not run')", version=_says_version("1.0.3"))
    assert "is 1.0.3; capture needs 2.1.0 or later" in _one_line(
        _capture(root, tmp_path / "home", client)
    )


def test_a_client_hanging_on_its_version_is_stopped_within_the_bound(tmp_path: Path) -> None:
    root = prepare_demo(tmp_path / "ledgerline")
    client = _client(tmp_path, "", version="import time\ntime.sleep(60)\n")
    started = time.monotonic()
    done = _capture(root, tmp_path / "home", client, "--timeout", "2")
    assert time.monotonic() - started < 30
    assert "did not finish within 2 s (--version)" in _one_line(done)


def test_a_hanging_client_is_stopped_within_the_bound(tmp_path: Path) -> None:
    root = prepare_demo(tmp_path / "ledgerline")
    client = _client(tmp_path, "import time\ntime.sleep(60)")
    started = time.monotonic()
    done = _capture(root, tmp_path / "home", client, "--timeout", "2")
    assert time.monotonic() - started < 30
    assert "did not finish within 2 s; capture stopped" in _one_line(done)


def test_a_client_reaching_for_another_host_is_stopped_and_nothing_leaves(tmp_path: Path) -> None:
    root = prepare_demo(tmp_path / "ledgerline")
    seen = tmp_path / "seen.json"
    # The client honours the proxy settings it is given, as both real clients do: its tunnel to
    # another host reaches the loopback, which refuses it. Then it would wait a long time.
    # It lets the capture's SIGINT and SIGTERM pass, as a client finishing its own work does:
    # the capture stops it as the refusal is answered, and a loaded machine could otherwise
    # stop it before it has read the answer (then SIGKILL ends it, 2 s later).
    client = _client(
        tmp_path,
        "import json, os, pathlib, signal, time, urllib.request\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"pathlib.Path({str(seen)!r}).write_text(json.dumps(dict(os.environ)))\n"
        "try:\n"
        "    urllib.request.urlopen('https://api.example.com/v1/messages', timeout=10)\n"
        "except Exception as exc:\n"
        f"    pathlib.Path({str(seen)!r} + '.error').write_text(str(exc))\n"
        "time.sleep(60)",
    )
    started = time.monotonic()
    done = _capture(root, tmp_path / "home", client)
    assert time.monotonic() - started < 30
    line = _one_line(done)
    assert "tried to reach api.example.com:443; refused, nothing was sent" in line
    assert "403" in (tmp_path / "seen.json.error").read_text()
    env = json.loads(seen.read_text())
    # The loopback is both the API (its token in the path) and the proxy (the token as its
    # credentials: a tunnel any other process asks for is answered, and ends nothing).
    assert env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
    token = env["ANTHROPIC_BASE_URL"].rsplit("/", 1)[-1]
    assert env["HTTPS_PROXY"] == env["HTTP_PROXY"]
    assert env["HTTPS_PROXY"].startswith(f"http://promptdeck:{token}@127.0.0.1:")
    assert env["NO_PROXY"] == "127.0.0.1,localhost"
    assert env["HOME"] != str(tmp_path / "home")


def test_a_client_that_sends_nothing_is_one_line(tmp_path: Path) -> None:
    root = prepare_demo(tmp_path / "ledgerline")
    # The client is handed the loopback's address and nothing else: it records what it got.
    seen = tmp_path / "seen.txt"
    client = _client(
        tmp_path,
        f"import os, pathlib\npathlib.Path({str(seen)!r}).write_text("
        "os.environ['ANTHROPIC_BASE_URL'] + ' ' + os.environ['ANTHROPIC_API_KEY'])",
    )
    assert "sent 0 request(s)" in _one_line(_capture(root, tmp_path / "home", client))
    url, key = seen.read_text(encoding="utf-8").split()
    assert url.startswith("http://127.0.0.1:")
    assert key.startswith("sk-ant-capture")


def test_a_request_over_the_memory_bound_is_kept_cut_and_said_to_be_cut(tmp_path: Path) -> None:
    root = prepare_demo(tmp_path / "ledgerline")
    size = 17 * 1024 * 1024
    client = _client(
        tmp_path,
        "import os, urllib.request\n"
        f"body = b'{{\"system\": \"' + b'x' * {size} + b'\"}}'\n"
        "request = urllib.request.Request(os.environ['ANTHROPIC_BASE_URL'] + '/v1/messages',"
        " data=body, headers={'content-type': 'application/json'})\n"
        "urllib.request.urlopen(request, timeout=30).read()",
    )
    done = _capture(root, tmp_path / "home", client, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["cut"] is True and report["request_bytes"] == size + len('{"system": ""}')
    (part,) = report["parts"]
    assert part["bytes"] == report["request_bytes"]
    assert part["note"] == "cut at the memory bound: not taken apart"
    text = _capture(root, tmp_path / "home", client)
    assert text.returncode == 0 and "cut at the memory bound" in text.stdout.splitlines()[0]


def test_a_capture_stopped_by_its_caller_kills_the_client_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The app sets the stop when the capture view closes or the app quits: a client that would
    # hang until the bound must not hold the app's exit that long.
    root = prepare_demo(tmp_path / "ledgerline")
    started_file = tmp_path / "started"
    client = _client(
        tmp_path,
        f"import pathlib, time\npathlib.Path({str(started_file)!r}).touch()\ntime.sleep(60)",
    )
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(client))
    workspace = open_workspace(root)
    prompt = compose_prompt(workspace, None, PromptRequest(story_id="1-1", phase="dev"))
    stop = threading.Event()
    failures: list[str] = []

    def capture() -> None:
        try:
            capture_prompt(workspace, prompt, get_counter(), timeout=120, stop=stop)
        except CaptureError as exc:
            failures.append(str(exc))

    worker = threading.Thread(target=capture)
    worker.start()
    deadline = time.monotonic() + 60
    while not started_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started_file.exists(), "the client never started"
    stop.set()
    worker.join(timeout=30)  # the bound was 120 s: a join that returns means it was cut short
    assert not worker.is_alive()
    assert failures == ["capture stopped before the claude CLI finished; nothing was kept"]
