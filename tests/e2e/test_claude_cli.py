"""End to end with the real ``claude`` CLI against a loopback fake of the Anthropic API.

The CLI runs for real — argv, ``--append-system-prompt-file``, stdin, stream-json — and talks
to :class:`FakeAnthropic` on 127.0.0.1. The tests check that the system prompt the API received
holds, byte for byte, what ``promptdeck compose --part system`` prints, and that the reply's
signal sets promptdeck's exit code, including with a 130 KiB injection (over Linux's 128 KiB
limit for a single argv string, so only the file route can carry it).
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import commit_all
from fake_anthropic import FakeAnthropic

pytestmark = pytest.mark.e2e

CLAUDE = os.environ.get("PROMPTDECK_CLAUDE_BIN") or shutil.which("claude")
if CLAUDE is None:
    pytest.skip(
        "the claude CLI is not on PATH (`make test` installs @anthropic-ai/claude-code with npm "
        "into .tools/npm when npm is present)",
        allow_module_level=True,
    )

PROMPTDECK = [
    sys.executable,
    "-c",
    "import sys; from promptdeck.cli import main; sys.exit(main())",
]
STORY_REL = "_bmad-output/implementation-artifacts/1-2-parse-lines.md"
STORY = "# Story 1.2: Parse lines\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Parser\n"
TIMEOUT = 180


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    story = root / STORY_REL
    story.parent.mkdir(parents=True)
    story.write_text(STORY)
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "rules.md").write_text("Keep functions small. Überprüfe alles.\n")
    (root / ".promptdeck" / "config.toml").write_text(
        f'[agent]\nclaude_bin = "{CLAUDE}"\ntimeout = 150.0\n'
    )
    commit_all(root)
    return root


def _env(fake: FakeAnthropic, home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "CLAUDE_", "PROMPTDECK_"))
    }
    home.mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="sk-ant-test-dummy",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        NO_COLOR="1",
    )
    return env


def _compose(root: Path, *extra: str) -> bytes:
    done = subprocess.run(
        [*PROMPTDECK, "compose", "1.2", "--phase", "dev", "--part", "system", *extra],
        cwd=root,
        capture_output=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _run(root: Path, reply: str, expected: bytes, home: Path, *extra: str):  # type: ignore[no-untyped-def]
    text = expected.decode("utf-8")
    with FakeAnthropic(reply=reply, is_main=lambda r: text[:2000] in r.system_text()) as fake:
        done = subprocess.run(
            [*PROMPTDECK, "run", "1.2", "--phase", "dev", "--agent", "claude", *extra],
            cwd=root,
            env=_env(fake, home),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        main = fake.main_requests()
    return done, main


def test_success_signal_and_the_exact_system_prompt(project: Path, tmp_path: Path) -> None:
    expected = _compose(project)
    done, main = _run(
        project,
        "Implemented the parser and ran the tests.\nIMPLEMENTATION COMPLETE: 1.2",
        expected,
        tmp_path / "home",
    )
    assert main, f"the fake API saw no main request; stderr: {done.stderr[-2000:]}"
    assert expected.decode("utf-8") in main[0].system_text()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "IMPLEMENTATION COMPLETE: 1.2" in done.stdout
    user = (project / ".promptdeck" / "runs").glob("*/user.md")
    sent = next(iter(user)).read_text()
    assert sent in str(main[0].body.get("messages"))


def test_failure_signal_exits_4(project: Path, tmp_path: Path) -> None:
    expected = _compose(project)
    done, main = _run(
        project,
        "I could not finish.\nIMPLEMENTATION BLOCKED: 1.2 - the fixture is missing",
        expected,
        tmp_path / "home",
    )
    assert main and expected.decode("utf-8") in main[0].system_text()
    assert done.returncode == 4, done.stderr[-2000:]


def test_a_130_kib_injection_reaches_the_api_whole(project: Path, tmp_path: Path) -> None:
    line = "The ledger keeps every amount in cents; never round twice.\n"
    (project / "big-context.md").write_text(line * (130 * 1024 // len(line) + 1))
    expected = _compose(project, "--file", "big-context.md")
    assert len(expected) > 131_072  # over MAX_ARG_STRLEN: argv could not carry it
    done, main = _run(
        project,
        "All checks pass.\nIMPLEMENTATION COMPLETE: 1.2",
        expected,
        tmp_path / "home",
        "--file",
        "big-context.md",
    )
    assert main, f"the fake API saw no main request; stderr: {done.stderr[-2000:]}"
    assert expected.decode("utf-8") in main[0].system_text()
    assert done.returncode == 0, done.stderr[-2000:]


# A 1×1 PNG: the smallest real image for --image.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def test_an_image_goes_through_stream_json_input(project: Path, tmp_path: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "screen.png").write_bytes(PNG)
    expected = _compose(project)
    done, main = _run(
        project,
        "Looked at the screenshot.\nIMPLEMENTATION COMPLETE: 1.2",
        expected,
        tmp_path / "home",
        "--image",
        "docs/screen.png",
    )
    assert main, f"the fake API saw no main request; stderr: {done.stderr[-2000:]}"
    assert expected.decode("utf-8") in main[0].system_text()
    assert done.returncode == 0, done.stderr[-2000:]
    sent = next(iter((project / ".promptdeck" / "runs").glob("*/user.md"))).read_text()
    user = [m for m in main[0].body["messages"] if m.get("role") == "user"][-1]
    blocks = [b for b in user["content"] if isinstance(b, dict)]
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    assert sent in texts
    images = [b for b in blocks if b.get("type") == "image"]
    assert [(i["source"]["media_type"], base64.b64decode(i["source"]["data"])) for i in images] == [
        ("image/png", PNG)
    ]
