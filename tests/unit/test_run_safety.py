"""The pieces that make runs safe on a real repository: the agent chosen when none is named,
the story lock, the bounded line splitter, the story-file rewrite check, secret-looking
paths, and config values a hostile file can hold."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from promptdeck.core.agent_names import agent_label
from promptdeck.core.agents.programs import found_default_agent
from promptdeck.core.agents.registry import resolve_agent_name
from promptdeck.core.errors import ConfigError, NoAgentError, StoryLocked
from promptdeck.core.project.config import Config, load_config
from promptdeck.core.run.locks import acquire, lock_path
from promptdeck.core.run.policy import story_rewritten
from promptdeck.core.run.stream import LineSplitter
from promptdeck.core.secrets.paths import scan_text, secret_name_reason


def test_no_agent_named_and_none_found_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(tmp_path / "no-claude"))
    assert found_default_agent(Config()) is None
    with pytest.raises(NoAgentError, match="--agent claude") as caught:
        resolve_agent_name(None, Config())
    assert caught.value.exit_code == 2
    # Named, in the config or on the command line: that one, a simulation included.
    assert resolve_agent_name(None, Config(agent_default="codex")) == "codex"
    assert resolve_agent_name("replay", Config()) == "replay"


def test_claude_is_the_default_when_its_binary_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = tmp_path / "claude"
    binary.write_text("#!/bin/sh\nexit 0\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(binary))
    assert resolve_agent_name(None, Config()) == "claude"


def test_agent_labels_name_the_simulation() -> None:
    assert agent_label("replay") == "replay (simulation)"
    assert agent_label("claude") == "claude"
    assert agent_label("") == "none"


def test_the_story_lock_is_exclusive_shared_by_key_forms_and_released(tmp_path: Path) -> None:
    held = acquire(tmp_path, "1.4")
    assert lock_path(tmp_path, "1_4") == held.path
    with pytest.raises(StoryLocked, match=f"pid {os.getpid()}") as caught:
        acquire(tmp_path, "1-4")
    assert caught.value.exit_code == 7
    other = acquire(tmp_path, "1-5")  # another story is free
    other.release()
    held.release()
    acquire(tmp_path, "1-4").release()


def test_a_flow_holds_the_lock_for_its_own_phases_only(tmp_path: Path) -> None:
    import threading

    from promptdeck.core.run.locks import holding

    with holding(tmp_path, "3-1"):
        inner = acquire(tmp_path, "3.1")  # a phase of the flow, in the flow's thread
        inner.release()  # releases nothing: the flow still holds the story
        refused: list[BaseException] = []

        def other_thread() -> None:
            try:
                acquire(tmp_path, "3-1")
            except StoryLocked as exc:
                refused.append(exc)

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert len(refused) == 1
    acquire(tmp_path, "3-1").release()


def test_a_lock_dies_with_its_process(tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from promptdeck.core.run.locks import acquire\n"
        "acquire(Path(sys.argv[1]), '2-1')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, timeout=60)
    acquire(tmp_path, "2-1").release()


def test_line_splitter_keeps_whole_short_lines_and_caps_long_ones() -> None:
    splitter = LineSplitter(cap=8)
    assert splitter.feed(b"ab\ncd") == [(b"ab\n", 0)]
    assert splitter.feed(b"ef\n0123456789abcdef") == [(b"cdef\n", 0)]
    assert splitter.feed(b"ghij\nlast") == [(b"01234567", 13)]  # 16 + "ghij\n" - 8
    assert splitter.finish() == (b"last", 0)
    assert splitter.finish() is None


@given(st.lists(st.binary(max_size=40), max_size=20), st.integers(min_value=1, max_value=16))
def test_line_splitter_loses_nothing_but_what_is_over_the_cap(
    chunks: list[bytes], cap: int
) -> None:
    splitter = LineSplitter(cap)
    lines = [line for chunk in chunks for line in splitter.feed(chunk)]
    last = splitter.finish()
    lines += [last] if last is not None else []
    data = b"".join(chunks)
    expected = [part + b"\n" for part in data.split(b"\n")]
    expected[-1] = expected[-1][:-1]
    if expected[-1] == b"":
        expected.pop()
    assert [(line, dropped) for line, dropped in lines] == [
        (part[:cap], max(0, len(part) - cap)) for part in expected
    ]


def test_unticking_a_task_is_a_rewrite_and_ticking_is_not() -> None:
    before = b"- [x] a\n- [ ] b\n"
    assert not story_rewritten(before, b"- [x] a\n- [x] b\n## Dev Agent Record\n")
    assert not story_rewritten(before, b"- [x] a\n- [X] b\n")
    assert story_rewritten(before, b"- [ ] a\n- [ ] b\n")
    assert story_rewritten(before, b"- [ ] a\n- [x] b\n")  # one ticked, one unticked
    assert story_rewritten(b"x y\n", b"x x\n")  # a space to x outside a checkbox


def test_secret_names_and_contents() -> None:
    for name in (".env", ".env.production", "deploy/prod.env", "id_rsa", "certs/site.pem"):
        assert secret_name_reason(name), name
    for name in ("id_rsa.pub", "src/env.py", "environment.md", "README.md"):
        assert secret_name_reason(name) is None, name
    found = scan_text("ok\nkey = 'AKIAIOSFODNN7EXAMPLE'\n-----BEGIN RSA PRIVATE KEY-----\n")
    assert [kind for _, kind in found] == ["AWS Access Key", "Private Key"]
    assert [line for line, _ in found] == [2, 3]
    assert (
        scan_text("sha256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'\n")
        == []
    )


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ('[paths]\nartifacts = "a\\u0000b"\n', "paths.artifacts: text without a NUL byte"),
        ('[verify]\ncommands = ["ok", "x\\u0000"]\n', "verify.commands: text without a NUL"),
        pytest.param("x = " + "[" * 100 + "]" * 100 + "\n", "nested less", id="arrays"),
        pytest.param("[" + ".".join(["t"] * 100) + "]\n", "nested less", id="tables"),
        ("[git]\nmax_file_bytes = 0\n", "git.max_file_bytes: a positive integer"),
    ],
)
def test_hostile_config_values_are_config_errors(tmp_path: Path, body: str, fragment: str) -> None:
    (tmp_path / ".promptdeck").mkdir()
    (tmp_path / ".promptdeck/config.toml").write_text(body)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert fragment in str(caught.value)


def test_ordinary_config_with_comments_floats_and_dotted_keys_still_loads(tmp_path: Path) -> None:
    (tmp_path / ".promptdeck").mkdir()
    (tmp_path / ".promptdeck/config.toml").write_text(
        "# the team's settings: don't [[[ worry\n"
        "agent.timeout = 12.5\n"
        'agent.replay_git = true\n[paths]\nrules = "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.md"\n'
    )
    config = load_config(tmp_path)
    assert config.agent_timeout == 12.5 and config.agent_replay_git
