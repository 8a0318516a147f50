"""The codex backend: the profile channel for the system prompt, its cleanup in CODEX_HOME
(crashes included), the project-override check, the sandbox default and the JSONL parser."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.core.agent_names import CODEX_BIN_ENV
from promptdeck.core.agents.base import INFO, RESULT, TEXT, TOOL_USE, USAGE, LaunchRequest
from promptdeck.core.agents.codex import CodexAgent
from promptdeck.core.agents.codex_profile import (
    PROFILE_FILE,
    linked_profile,
    project_overrides,
    sweep_stale_profiles,
    toml_string,
)
from promptdeck.core.agents.codex_stream import CodexJsonParser
from promptdeck.core.errors import ConfigError, UsageError
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.config import Config, config_from_mapping
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.run.runner import start_run

TRICKY = ' \tleading blanks, "quotes", back\\slash, \x7f DEL, \r\n CRLF, ü, 😀 and trailing  \n\n'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.delenv(CODEX_BIN_ENV, raising=False)
    return codex_home


def _request(tmp_path: Path, system: str, **extra: object) -> LaunchRequest:
    run_dir = tmp_path / "runs" / "20260101-000000-1.2-dev"
    run_dir.mkdir(parents=True)
    (run_dir / "system.md").write_bytes(system.encode("utf-8"))
    (run_dir / "user.md").write_bytes(b"Implement story 1-2.")
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return LaunchRequest(
        run_dir=run_dir,
        root=project,
        story_id="1.2",
        phase="dev",
        **extra,  # type: ignore[arg-type]
    )


def test_toml_string_round_trips_exactly() -> None:
    for text in (TRICKY, "", "\x00\x01\x1f", "'''\"\"\"", "x" * 200_000):
        assert tomllib.loads(f"v = {toml_string(text)}")["v"] == text


def test_the_system_prompt_goes_in_a_profile_and_the_user_message_alone_on_stdin(
    tmp_path: Path, home: Path
) -> None:
    system = TRICKY + "rules " * 24_000  # ~140 KB, over one argv string's limit
    assert len(system.encode()) > 131_072
    request = _request(tmp_path, system)
    spec = CodexAgent(Config()).launch(request)
    argv = spec.argv
    assert argv[:5] == ("codex", "exec", "--json", "-s", "workspace-write")
    name = argv[argv.index("-p") + 1]
    assert name.startswith(f"promptdeck-{os.getpid()}-") and argv[-1] == "-"
    assert spec.stdin == b"Implement story 1-2."
    assert max(len(arg.encode()) for arg in argv) < 1000
    profile = tomllib.loads((request.run_dir / PROFILE_FILE).read_text(encoding="utf-8"))
    assert profile == {"developer_instructions": system}
    assert spec.scope is not None
    assert not list(home.iterdir())  # nothing in CODEX_HOME before the process starts
    with spec.scope():
        link = home / f"{name}.config.toml"
        assert tomllib.loads(link.read_text(encoding="utf-8"))["developer_instructions"] == system
    assert not list(home.iterdir())


def test_a_resumed_turn_sends_only_its_message(tmp_path: Path, home: Path) -> None:
    request = _request(tmp_path, "SYSTEM", resume_session="th_1")
    spec = CodexAgent(Config()).launch(request)
    assert spec.argv[-3:] == ("resume", "th_1", "-")
    assert "-p" not in spec.argv and spec.scope is None
    assert spec.stdin == b"Implement story 1-2."
    assert "not sent again" in spec.system_channel


def test_binary_env_sandbox_and_images(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CODEX_BIN_ENV, "/opt/codex/bin/codex")
    image = tmp_path / "shot.png"
    request = _request(tmp_path, "S", images=(image,))
    argv = CodexAgent(Config(agent_codex_sandbox="")).launch(request).argv
    assert argv[0] == "/opt/codex/bin/codex" and "-s" not in argv
    assert f"--image={image}" in argv
    args = ("-s", "read-only", "-m", "gpt-5.5")
    argv = CodexAgent(Config(agent_codex_args=args)).launch(_request(tmp_path / "b", "S")).argv
    assert argv.count("-s") == 1 and argv[argv.index("-s") + 1] == "read-only"
    with pytest.raises(ConfigError, match="codex_sandbox"):
        config_from_mapping({"agent": {"codex_sandbox": "yolo"}}, "config.toml")


@pytest.mark.parametrize(
    "args",
    [
        ("-p", "mine"),
        ("--profile=mine",),
        ("-c", "developer_instructions='x'"),
        ("--config=model_instructions_file=/x.md",),
    ],
)
def test_args_that_would_replace_the_system_prompt_are_refused(
    tmp_path: Path, home: Path, args: tuple[str, ...]
) -> None:
    with pytest.raises(UsageError, match="codex_args"):
        CodexAgent(Config(agent_codex_args=args)).launch(_request(tmp_path, "S"))


def _trust(home: Path, folder: Path) -> None:
    (home / "config.toml").write_text(
        f'model = "gpt-5.5"\n[projects."{folder.resolve()}"]\ntrust_level = "trusted"\n'
    )


def test_a_trusted_project_override_is_refused_an_untrusted_one_warned(
    tmp_path: Path, home: Path
) -> None:
    request = _request(tmp_path, "S")
    project = request.root
    sub = project / "pkg"
    (sub / ".codex").mkdir(parents=True)
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text('developer_instructions = "theirs"\n')
    (sub / ".codex" / "config.toml").write_text('model = "gpt-5.5"\n')  # harmless
    commit_all(project)
    spec = CodexAgent(Config()).launch(request)
    assert len(spec.warnings) == 1 and "not trusted" in spec.warnings[0]
    _trust(home, project)
    with pytest.raises(UsageError, match="silently replace"):
        CodexAgent(Config()).launch(request)
    # From a subfolder too: Codex reads the files up to the git root.
    overrides = project_overrides(sub, home)
    assert [(o.path, o.trusted) for o in overrides] == [
        ((project / ".codex" / "config.toml").resolve(), True)
    ]
    # A folder outside the git repository is not read by Codex.
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('instructions = "x"\n')
    assert len(project_overrides(sub, home)) == 1


def test_the_link_never_replaces_a_file_of_the_user(tmp_path: Path, home: Path) -> None:
    theirs = home / "promptdeck-1-x.config.toml"
    theirs.write_text('model = "mine"\n')
    target = tmp_path / "profile.toml"
    target.write_text('developer_instructions = "ours"\n')
    with pytest.raises(FileExistsError), linked_profile(home, "promptdeck-1-x", target):
        pass
    assert theirs.read_text() == 'model = "mine"\n'
    sweep_stale_profiles(home)  # a regular file is never swept, whatever its name
    assert theirs.exists()


def test_a_link_left_by_a_killed_promptdeck_is_swept_at_the_next_launch(
    tmp_path: Path, home: Path
) -> None:
    target = tmp_path / "profile.toml"
    target.write_text('developer_instructions = "ours"\n')
    code = (
        "import os, signal, sys; from pathlib import Path\n"
        "from promptdeck.core.agents.codex_profile import linked_profile, profile_name\n"
        f"with linked_profile(Path({str(home)!r}), profile_name('run'), Path({str(target)!r})):\n"
        "    print('linked', flush=True); os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL and "linked" in done.stdout
    left = list(home.iterdir())
    assert len(left) == 1 and left[0].is_symlink()  # the crash left it behind…
    live = home / f"promptdeck-{os.getpid()}-live.config.toml"
    live.symlink_to(target)  # …a running promptdeck's link is kept
    with linked_profile(home, "promptdeck-7-next", target):
        assert {p.name for p in home.iterdir()} == {"promptdeck-7-next.config.toml", live.name}
    assert [p.name for p in home.iterdir()] == [live.name]


FAKE_CODEX = """\
import json, os, sys
from pathlib import Path
home = Path(os.environ["CODEX_HOME"])
name = sys.argv[sys.argv.index("-p") + 1]
profile = (home / (name + ".config.toml")).read_text(encoding="utf-8")
Path(sys.argv[0]).with_name("seen.txt").write_text(profile + "\\n---\\n" + sys.stdin.read())
print(json.dumps({"type": "thread.started", "thread_id": "th-1"}))
mode = Path(sys.argv[0]).with_name("mode.txt").read_text()
if mode == "crash":
    print("boom", file=sys.stderr)
    sys.exit(3)
if mode == "hang":
    import time
    time.sleep(60)
print(json.dumps({"type": "item.completed", "item": {"type": "agent_message",
      "text": "IMPLEMENTATION COMPLETE: 1.2"}}))
print(json.dumps({"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 2}}))
"""


@pytest.mark.parametrize("mode", ["ok", "crash", "hang"])
def test_nothing_is_left_in_codex_home_after_a_run(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "codex"
    script.write_text(f"#!{sys.executable}\n{FAKE_CODEX}")
    script.chmod(0o755)
    (bin_dir / "mode.txt").write_text(mode)
    monkeypatch.setenv(CODEX_BIN_ENV, str(script))
    root = tmp_path / "ws"
    story = root / "_bmad-output/implementation-artifacts/1-2-parse-lines.md"
    story.parent.mkdir(parents=True)
    story.write_text("# Story 1.2: Parse lines\n\nStatus: ready-for-dev\n")
    ws = open_workspace(root)
    prompt = compose_prompt(
        ws, load_catalog(ws), PromptRequest(story_id="1.2", phase="dev"), count_tokens=False
    )
    handle = start_run(
        ws, prompt, agent="codex", use_git=False, timeout=20 if mode == "hang" else None
    )
    if mode == "hang":
        for _ in range(1200):  # wait until the agent has started (and read its profile)
            if (bin_dir / "seen.txt").exists():
                break
            time.sleep(0.05)
        handle.cancel()
    result = handle.wait(60)
    expected = {"ok": "success", "crash": "crashed", "hang": "cancelled"}[mode]
    assert result.outcome == expected, result.message
    seen = (bin_dir / "seen.txt").read_text(encoding="utf-8")
    sent_profile, stdin = seen.split("\n---\n")
    assert tomllib.loads(sent_profile)["developer_instructions"] == prompt.system
    assert stdin == prompt.user
    assert list(home.iterdir()) == []
    meta = json.loads((result.run_dir / "meta.json").read_text())
    assert meta["system_channel"].startswith("developer instructions via profile promptdeck-")


def _parse(parser: CodexJsonParser, lines: list[dict[str, object]]) -> list:  # type: ignore[type-arg]
    return [event for line in lines for event in parser.parse(json.dumps(line))]


def test_usage_fields_and_context_from_the_last_model_call(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    day = home / "sessions" / "2026" / "11" / "22"
    day.mkdir(parents=True)
    thread = "01a2-b3c4"
    counts = [
        {"input_tokens": 9000, "cached_input_tokens": 8000, "output_tokens": 10},
        {"input_tokens": 21000, "cached_input_tokens": 20000, "cache_write_input_tokens": 500},
    ]
    (day / f"rollout-2026-11-22T10-00-00-{thread}.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "type": "event_msg",
                    "payload": {
                        "type": "token_count",
                        "info": {"last_token_usage": last, "model_context_window": 258_400},
                    },
                }
            )
            + "\n"
            for last in counts
        )
    )
    total = {
        "input_tokens": 30000,
        "cached_input_tokens": 28000,
        "cache_write_input_tokens": 500,
        "output_tokens": 300,
        "reasoning_output_tokens": 120,
    }
    lines = [
        {"type": "thread.started", "thread_id": thread},
        {"type": "turn.completed", "usage": total},
    ]
    events = _parse(CodexJsonParser(272_000, home), lines)
    usage_event = next(e for e in events if e.kind == USAGE)
    assert (usage_event.context_tokens, usage_event.context_window) == (21000, 258_400)
    result = next(e for e in events if e.kind == RESULT)
    assert result.usage.to_dict() == {
        "input": 1500,
        "output": 300,
        "cache_read": 28000,
        "cache_creation": 500,
        "reasoning_output": 120,
    }
    # Without the session record the turn's sum is not passed off as one call's context.
    events = _parse(CodexJsonParser(272_000, tmp_path / "nowhere"), lines)
    assert next(e for e in events if e.kind == USAGE).context_tokens is None


def test_transient_errors_and_other_items_are_shown_not_fatal() -> None:
    lines = [
        {"type": "error", "message": "Reconnecting... 2/5 (stream disconnected before completion)"},
        {
            "type": "item.completed",
            "item": {
                "type": "todo_list",
                "items": [
                    {"text": "parse", "completed": True},
                    {"text": "test", "completed": False},
                ],
            },
        },
        {"type": "item.completed", "item": {"type": "web_search", "query": "tomllib escape"}},
        {"type": "item.completed", "item": {"type": "collab_tool_call", "tool": "spawn"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
    ]
    events = _parse(CodexJsonParser(), lines)
    assert (events[0].kind, events[0].is_error) == (INFO, False)
    assert [e.text for e in events if e.kind == INFO][1] == "todo: [x] parse; [ ] test"
    assert [e.text for e in events if e.kind == TOOL_USE] == ["web search: tomllib escape"]
    assert any(e.text.startswith("collab_tool_call: ") for e in events if e.kind == INFO)
    assert [e.text for e in events if e.kind == TEXT] == ["done"]
    assert not any(e.is_error for e in events)
    failed = _parse(CodexJsonParser(), [{"type": "turn.failed", "error": {"message": "x"}}])
    assert failed[0].kind == RESULT and failed[0].is_error
