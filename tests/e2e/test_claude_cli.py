"""End to end with the real ``claude`` CLI against a loopback fake of the Anthropic API.

The CLI runs for real — argv, ``--append-system-prompt-file``, stdin, stream-json — and talks
to :class:`FakeAnthropic` on 127.0.0.1. The tests check that the system prompt the API received
holds, byte for byte, what ``promptdeck compose --part system`` prints, and that the reply's
signal sets promptdeck's exit code, including with a 130 KiB injection (over Linux's 128 KiB
limit for a single argv string, so only the file route can carry it).
"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest
from e2e_project import PNG, PROMPTDECK, TIMEOUT, agent_cli, compose, make_project
from fake_anthropic import AnthropicRequest, FakeAnthropic, claude_env
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace

pytestmark = pytest.mark.e2e

CLAUDE = agent_cli("claude", "@anthropic-ai/claude-code")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    config = f'[agent]\nclaude_bin = "{CLAUDE}"\ntimeout = 150.0\n'
    rules = "Keep functions small. Überprüfe alles.\n"
    root = make_project(tmp_path, rules, {".promptdeck/config.toml": config})
    trust_config(open_workspace(root))  # the config names the binary: the user trusts it
    return root


def _run(
    root: Path, reply: str, expected: str, home: Path, *extra: str, exit_code: int = 0
) -> tuple[subprocess.CompletedProcess[str], list[AnthropicRequest]]:
    """Run story 1.2 with ``claude`` against a fake answering ``reply``, and check what every
    run must show: the API received a main request, its system prompt holds ``expected`` whole,
    and promptdeck exited with ``exit_code``. The process's result and the main requests."""
    with FakeAnthropic(reply=reply, is_main=lambda r: expected[:2000] in r.system_text()) as fake:
        done = subprocess.run(
            [*PROMPTDECK, "run", "1.2", "--phase", "dev", "--agent", "claude", *extra],
            cwd=root,
            env=claude_env(fake, home),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        main = fake.main_requests()
    assert main, f"the fake API saw no main request; stderr: {done.stderr[-2000:]}"
    assert expected in main[0].system_text()
    assert done.returncode == exit_code, done.stderr[-2000:]
    return done, main


def test_success_signal_and_the_exact_system_prompt(project: Path, tmp_path: Path) -> None:
    expected = compose(project)
    done, main = _run(
        project,
        "Implemented the parser and ran the tests.\nIMPLEMENTATION COMPLETE: 1.2",
        expected,
        tmp_path / "home",
    )
    assert "IMPLEMENTATION COMPLETE: 1.2" in done.stdout
    user = (project / ".promptdeck" / "runs").glob("*/user.md")
    sent = next(iter(user)).read_text()
    assert sent in str(main[0].body.get("messages"))


def test_failure_signal_exits_4(project: Path, tmp_path: Path) -> None:
    _run(
        project,
        "I could not finish.\nIMPLEMENTATION BLOCKED: 1.2 - the fixture is missing",
        compose(project),
        tmp_path / "home",
        exit_code=4,
    )


def test_a_130_kib_injection_reaches_the_api_whole(project: Path, tmp_path: Path) -> None:
    line = "The ledger keeps every amount in cents; never round twice.\n"
    (project / "big-context.md").write_text(line * (130 * 1024 // len(line) + 1))
    expected = compose(project, "--file", "big-context.md")
    assert len(expected.encode("utf-8")) > 131_072  # over MAX_ARG_STRLEN: argv could not carry it
    _run(
        project,
        "All checks pass.\nIMPLEMENTATION COMPLETE: 1.2",
        expected,
        tmp_path / "home",
        "--file",
        "big-context.md",
    )


def test_an_image_goes_through_stream_json_input(project: Path, tmp_path: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "screen.png").write_bytes(PNG)
    _, main = _run(
        project,
        "Looked at the screenshot.\nIMPLEMENTATION COMPLETE: 1.2",
        compose(project),
        tmp_path / "home",
        "--image",
        "docs/screen.png",
    )
    sent = next(iter((project / ".promptdeck" / "runs").glob("*/user.md"))).read_text()
    user = [m for m in main[0].body["messages"] if m.get("role") == "user"][-1]
    blocks = [b for b in user["content"] if isinstance(b, dict)]
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    assert sent in texts
    images = [b for b in blocks if b.get("type") == "image"]
    assert [(i["source"]["media_type"], base64.b64decode(i["source"]["data"])) for i in images] == [
        ("image/png", PNG)
    ]


@pytest.mark.parametrize("delivery", ["layered", "cache-aware"])
def test_both_deliveries_send_what_compose_prints(
    project: Path, tmp_path: Path, delivery: str
) -> None:
    system = compose(project, "--delivery", delivery)
    user = compose(project, "--delivery", delivery, "--part", "user")
    # Composed before the run: the run writes the story's status back, and so changes it.
    review = compose(project, "--delivery", delivery, "--phase", "review")
    _, main = _run(
        project,
        "Done.\nIMPLEMENTATION COMPLETE: 1.2",
        system,
        tmp_path / "home",
        "--delivery",
        delivery,
    )
    # The system prompt the API received ends with promptdeck's, byte for byte (Claude Code's
    # own comes first), and the last user turn holds promptdeck's user message whole.
    assert system in main[0].system_text()
    last = [m for m in main[0].body["messages"] if m.get("role") == "user"][-1]
    content = last["content"]
    texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    assert user in texts
    sent = next(iter((project / ".promptdeck" / "runs").glob("*/user.md"))).read_text()
    assert sent == user
    if delivery == "cache-aware":
        # The per-phase layers head the user turn; dev and review share the system block.
        assert user.startswith("## Contract")
        assert review == system
    else:
        assert "## Contract" in system
