"""``promptdeck capture`` against a client that hangs or sends nothing: one line, exit 12,
within the bound, and the loopback is the only address it was given."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from promptdeck.core.demo import prepare_demo

MAIN = "import sys; from promptdeck.cli import main; sys.exit(main())"


def _client(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "fake-claude"
    script.write_text(f"#!{sys.executable}\n{body}\n", encoding="utf-8")
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
        timeout=60,
    )


def test_a_hanging_client_is_stopped_within_the_bound(tmp_path: Path) -> None:
    root = prepare_demo(tmp_path / "ledgerline")
    client = _client(tmp_path, "import time\ntime.sleep(60)")
    started = time.monotonic()
    done = _capture(root, tmp_path / "home", client, "--timeout", "2")
    assert time.monotonic() - started < 30
    assert done.returncode == 12, done.stderr
    assert done.stderr.count("\n") == 1
    assert "did not finish within 2 s" in done.stderr and "Traceback" not in done.stderr


def test_a_client_that_sends_nothing_is_one_line(tmp_path: Path) -> None:
    root = prepare_demo(tmp_path / "ledgerline")
    # The client is handed the loopback's address and nothing else: it records what it got.
    seen = tmp_path / "seen.txt"
    client = _client(
        tmp_path,
        f"import os, pathlib\npathlib.Path({str(seen)!r}).write_text("
        "os.environ['ANTHROPIC_BASE_URL'] + ' ' + os.environ['ANTHROPIC_API_KEY'])",
    )
    done = _capture(root, tmp_path / "home", client)
    assert done.returncode == 12, done.stderr
    assert done.stderr.count("\n") == 1
    assert "sent 0 request(s)" in done.stderr
    url, key = seen.read_text(encoding="utf-8").split()
    assert url.startswith("http://127.0.0.1:")
    assert key.startswith("sk-ant-capture")
