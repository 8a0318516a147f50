"""The runner: real subprocesses (the replay agent and small scripts), records, outcomes,
timeouts, cancel escalation, git steps and the append-only story check."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.core.errors import GitError, InjectionTooLarge
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest
from promptdeck.core.records.reader import list_runs
from promptdeck.core.run.policy import story_rewritten
from promptdeck.core.run.runner import start_run
from promptdeck.core.run.stream import RunEvent

STORY = """# Story 1.2: Parse lines

Status: ready-for-dev

## Tasks / Subtasks

- [ ] Write the parser
"""
STORY_REL = "_bmad-output/implementation-artifacts/1-2-parse-lines.md"
WAIT = 60.0


def make_workspace(root: Path, *, git: bool = True, config: str = "") -> Workspace:
    """A BMAD workspace with one story; a committed git repository unless ``git`` is False."""
    story = root / STORY_REL
    story.parent.mkdir(parents=True)
    story.write_text(STORY, encoding="utf-8")
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "config.toml").write_text(
        "[agent]\nreplay_delay = 0.0\nreplay_git = true\n" + config, encoding="utf-8"
    )
    if git:
        commit_all(root)
    workspace = open_workspace(root)
    trust_config(workspace)  # the tests' own agent scripts: the user trusts this config
    return workspace


def compose(ws: Workspace, phase: str = "dev", **kwargs: object) -> ComposedPrompt:
    request = PromptRequest(story_id="1.2", phase=phase, **kwargs)  # type: ignore[arg-type]
    return compose_prompt(ws, load_catalog(ws), request, count_tokens=False)


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def script_config(body: str, tmp_path: Path) -> str:
    script = tmp_path / "agent.py"
    script.write_text(body, encoding="utf-8")
    return f'command_argv = ["{sys.executable}", "{script}", "{{story}}", "{{phase}}"]\n'


def test_dev_run_records_everything_and_stages(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    prompt = compose(ws)
    events: list[RunEvent] = []
    result = start_run(ws, prompt, agent="replay", listener=events.append).wait(WAIT)
    assert (result.outcome, result.exit_code) == ("success", 0)
    assert result.signal is not None and result.signal.kind == "implementation-complete"
    run_dir = result.run_dir
    assert (run_dir / "system.md").read_bytes() == prompt.system.encode("utf-8")
    assert (run_dir / "user.md").read_bytes() == prompt.user.encode("utf-8")
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["story"] == "1-2" and meta["phase"] == "dev" and meta["attempt"] == 1
    assert meta["agent"] == "replay" and meta["argv"][1:4] == [
        "-P",
        "-m",
        "promptdeck.core.agents.replay_main",
    ]
    assert meta["env_names"] == ["PYTHONUNBUFFERED"]
    assert meta["signature"] == prompt.signature and len(meta["layers"]) == 8
    stream = (run_dir / "stream.jsonl").read_text().splitlines()
    assert stream and all(json.loads(line)["type"] for line in stream)
    signals = [json.loads(line) for line in (run_dir / "signals.jsonl").read_text().splitlines()]
    assert [s["kind"] for s in signals] == ["implementation-complete"] and signals[0]["at"]
    saved = json.loads((run_dir / "result.json").read_text())
    assert saved["outcome"] == "success" and saved["sha_before"] == saved["sha_after"]
    # replay is a simulation: its invented cost is never shown as money.
    assert saved["usage"]["cache_read"] > 0 and saved["cost_usd"] is None
    assert saved["simulation"] is True and meta["simulation"] is True
    assert "src/1_2.py" in (result.staged_stat or "")
    assert "src/1_2.py" in git(tmp_path, "diff", "--staged", "--name-only")
    assert ".promptdeck/runs" not in git(tmp_path, "diff", "--staged", "--name-only")
    assert (tmp_path / ".promptdeck" / ".gitignore").read_text().splitlines() == [
        "runs/",
        "exports/",
        "locks/",
    ]
    story_now = (tmp_path / STORY_REL).read_text()
    # The status is written back (Status: review); every other byte of the story is kept.
    assert story_now.startswith(STORY.replace("ready-for-dev", "review"))
    assert "## Dev Agent Record" in story_now
    assert not result.story_rewritten
    kinds = [e.kind for e in events]
    assert "session" in kinds and "usage" in kinds and "signal" in kinds and kinds[-1] == "end"
    assert events[-1].result == result
    agent_lines = [e.text for e in events if e.kind == "line" and e.agent_text]
    assert "IMPLEMENTATION COMPLETE: 1-2" in agent_lines


def test_blocked_dev_is_a_failure_and_stages_nothing(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    result = start_run(ws, compose(ws), agent="replay", replay_script="dev=blocked").wait(WAIT)
    assert (result.outcome, result.exit_code) == ("failure", 4)
    assert result.signal is not None and "fixture" in (result.signal.reason or "")
    assert result.staged_stat is None
    assert git(tmp_path, "diff", "--staged", "--name-only") == ""


@pytest.mark.parametrize(
    ("script", "outcome"),
    [("dev=nosignal", "no-signal"), ("dev=crash", "crashed"), ("dev=quoted", "no-signal")],
)
def test_runs_without_a_signal_exit_5(tmp_path: Path, script: str, outcome: str) -> None:
    ws = make_workspace(tmp_path)
    result = start_run(ws, compose(ws), agent="replay", replay_script=script).wait(WAIT)
    assert (result.outcome, result.exit_code, result.signal) == (outcome, 5, None)
    assert result.signals == ()


def test_timeout_stops_the_agent(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    handle = start_run(
        ws,
        compose(ws),
        agent="replay",
        replay_script="dev=hang",
        timeout=1.0,
        cancel_grace=(2.0, 2.0),
    )
    result = handle.wait(WAIT)
    assert (result.outcome, result.exit_code) == ("timeout", 5)
    assert "timed out" in result.message


def test_cancel_escalates_to_sigkill_for_an_agent_ignoring_signals(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    notices: list[str] = []
    started = []

    def listen(event: RunEvent) -> None:
        if event.kind == "notice":
            notices.append(event.text)
        if event.kind == "line" and "Waiting" in event.text:
            started.append(event)

    handle = start_run(
        ws,
        compose(ws),
        agent="replay",
        replay_script="dev=hang-hard",
        listener=listen,
        cancel_grace=(0.3, 0.3),
    )
    deadline = time.monotonic() + WAIT
    while not started and time.monotonic() < deadline:
        time.sleep(0.05)
    handle.cancel()
    result = handle.wait(WAIT)
    assert (result.outcome, result.exit_code) == ("cancelled", 5)
    assert any("SIGTERM" in n for n in notices) and any("SIGKILL" in n for n in notices)
    assert result.process_exit == -9


def test_missing_binary_is_a_one_line_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(tmp_path / "no-such-claude"))
    ws = make_workspace(tmp_path)
    result = start_run(ws, compose(ws), agent="claude").wait(WAIT)
    assert (result.outcome, result.exit_code) == ("launch-failed", 5)
    assert "not found" in result.message and "\n" not in result.message
    assert json.loads((result.run_dir / "result.json").read_text())["outcome"] == "launch-failed"


def test_plain_text_agent_lines_count_and_stderr_does_not(tmp_path: Path) -> None:
    body = (
        "import sys\n"
        "print('working on', sys.argv[1])\n"
        "print('IMPLEMENTATION BLOCKED: 1.2 - from stderr', file=sys.stderr)\n"
        "print('IMPLEMENTATION BLOCKED: 1.2 - first try')\n"
        "print('IMPLEMENTATION COMPLETE: 1.2', end='')\n"
    )
    ws = make_workspace(tmp_path, config=script_config(body, tmp_path))
    result = start_run(ws, compose(ws), agent="command", use_git=False).wait(WAIT)
    assert [s.kind for s in result.signals] == ["implementation-blocked", "implementation-complete"]
    assert result.outcome == "success"
    assert (result.run_dir / "stream.log").read_text().splitlines()[
        -1
    ] == "IMPLEMENTATION COMPLETE: 1.2"
    assert "from stderr" in (result.run_dir / "stderr.log").read_text()


def test_a_phase_that_rewrites_the_story_is_flagged_and_the_prior_version_kept(
    tmp_path: Path,
) -> None:
    body = (
        "from pathlib import Path\n"
        f"p = Path({STORY_REL!r})\n"
        "p.write_text(p.read_text().replace('Parse lines', 'Parse LINES'))\n"
        "print('IMPLEMENTATION COMPLETE: 1.2')\n"
    )
    ws = make_workspace(tmp_path, config=script_config(body, tmp_path))
    result = start_run(ws, compose(ws), agent="command").wait(WAIT)
    assert result.story_rewritten
    # The prior version is the one the agent started from: dev's start marked it in-progress.
    started = STORY.replace("Status: ready-for-dev", "Status: in-progress")
    assert started != STORY
    assert (result.run_dir / "story.before.md").read_text() == started
    assert any("append-only" in w for w in result.warnings)


def test_story_rewritten_rules() -> None:
    assert not story_rewritten(b"a\n- [ ] t\n", b"a\n- [ ] t\nmore\n")
    assert not story_rewritten(b"a\n- [ ] t\n", b"a\n- [x] t\n## Dev Agent Record\n")
    assert story_rewritten(b"a\nb\n", b"a\nB\nmore\n")
    assert story_rewritten(b"a\nb\n", b"a\n")


def test_review_pass_commits_with_the_template_and_failure_does_not(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, config='[git]\ncommit_template = "feat({story}): {title}"\n')
    assert start_run(ws, compose(ws), agent="replay").wait(WAIT).outcome == "success"
    failed = start_run(ws, compose(ws, "review"), agent="replay", replay_script="review=fail")
    assert failed.wait(WAIT).commit is None
    assert git(tmp_path, "log", "--format=%s").splitlines() == ["base"]
    passed = start_run(ws, compose(ws, "review"), agent="replay").wait(WAIT)
    assert passed.commit is not None and passed.sha_after == passed.commit
    assert git(tmp_path, "log", "-1", "--format=%s").strip() == "feat(1-2): Parse lines"
    assert "src/1_2.py" in git(tmp_path, "show", "--name-only", "--format=")
    assert ".promptdeck/runs" not in git(tmp_path, "show", "--name-only", "--format=")


def test_outside_git_is_an_error_unless_git_is_off(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    with pytest.raises(GitError, match="--no-git"):
        start_run(ws, compose(ws), agent="replay")
    assert list_runs(tmp_path) == []
    result = start_run(ws, compose(ws), agent="replay", use_git=False).wait(WAIT)
    assert result.outcome == "success" and result.sha_before is None


def test_dirty_files_before_the_phase_are_warned_about(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    (tmp_path / "notes.txt").write_text("mine\n")
    result = start_run(ws, compose(ws), agent="replay").wait(WAIT)
    assert any("notes.txt" in w and "already changed" in w for w in result.warnings)
    # promptdeck's own .promptdeck/.gitignore, made for this run, is not the user's change.
    assert not any(".gitignore" in w for w in result.warnings)


def test_over_the_size_limit_nothing_runs(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    (tmp_path / "big.md").write_text("x" * (160 * 1024))
    prompt = compose(ws, selection=Selection(additional_files=("big.md",)))
    with pytest.raises(InjectionTooLarge):
        start_run(ws, prompt, agent="replay")
    assert list_runs(tmp_path) == []


def test_attempts_count_up_until_a_success(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    first = start_run(ws, compose(ws), agent="replay", replay_script="dev=blocked").wait(WAIT)
    second = start_run(ws, compose(ws), agent="replay", replay_script="dev=nosignal").wait(WAIT)
    third = start_run(ws, compose(ws), agent="replay").wait(WAIT)
    fourth = start_run(ws, compose(ws), agent="replay").wait(WAIT)
    assert [r.attempt for r in (first, second, third, fourth)] == [1, 2, 3, 1]


def test_a_run_whose_record_folder_vanishes_still_ends_with_one_result(tmp_path: Path) -> None:
    """Settling must never hang a waiter: here the agent deletes promptdeck's run folders."""
    body = (
        "import shutil\n"
        "shutil.rmtree('.promptdeck/runs', ignore_errors=True)\n"
        "print('IMPLEMENTATION COMPLETE: 1-2', flush=True)\n"
    )
    ws = make_workspace(tmp_path, git=False, config=script_config(body, tmp_path))
    result = start_run(ws, compose(ws), agent="command", use_git=False).wait(WAIT)
    # The agent said it was done, but nothing of the run was saved: not a success (exit 7).
    assert (result.outcome, result.exit_code) == ("unsaved", 7)
    assert result.message.startswith("not saved: the run record could not be written")
    assert any("could not write the run record" in w for w in result.warnings)


def test_a_failing_git_step_fails_the_run_without_a_hang(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    # Another git holds the index: `git status` still reads it, `git add` cannot write it.
    (tmp_path / ".git" / "index.lock").write_text("")
    result = start_run(ws, compose(ws), agent="replay").wait(WAIT)
    assert (result.outcome, result.exit_code) == ("git-failed", 6)
    assert "index.lock" in result.message
    assert git(tmp_path, "diff", "--staged", "--name-only") == ""
