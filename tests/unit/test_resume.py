"""Crash-safe runs: promptdeck killed (``kill -9``) at each step of a run, then the next start
lists the run right and resumes it, or records it from what git and the plan show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.core.errors import UsageError
from promptdeck.core.fleet import interrupted_notice, interrupted_runs, resume_run
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.records.reader import list_runs
from promptdeck.core.run.locks import acquire, lock_path
from promptdeck.core.run.runner import start_run

STORY = """# Story 1.2: Parse lines

Status: ready-for-dev

## Tasks / Subtasks

- [ ] Write the parser
"""
STORY_REL = "_bmad-output/implementation-artifacts/1-2-parse-lines.md"
WAIT = 60.0


def make_workspace(root: Path, delay: float = 0.0) -> Workspace:
    story = root / STORY_REL
    story.parent.mkdir(parents=True)
    story.write_text(STORY, encoding="utf-8")
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "config.toml").write_text(
        f"[agent]\nreplay_delay = {delay}\nreplay_git = true\n", encoding="utf-8"
    )
    commit_all(root)
    workspace = open_workspace(root)
    trust_config(workspace)
    return workspace


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()


# The child promptdeck: starts one phase run with the replay agent and kills itself with
# SIGKILL at the step named on its command line (a patched function, or once the session id
# is on disk).
CHILD = textwrap.dedent(
    """
    import json, os, signal, sys, time
    from pathlib import Path
    from promptdeck.core.project.workspace import open_workspace
    from promptdeck.core.prompt.compose import compose_prompt
    from promptdeck.core.prompt.request import PromptRequest
    from promptdeck.core.plans.catalog import load_catalog
    from promptdeck.core.run import runner, handle, gitops, policy

    root, phase, step = Path(sys.argv[1]), sys.argv[2], sys.argv[3]

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    if step == "before-launch":
        handle.RunSupervisor.start = die
    elif step == "before-commit":
        gitops.commit_staged = die
    elif step == "before-stage":
        gitops.stage_phase = die
    elif step == "after-commit":
        policy.RunPolicy.write = die
    ws = open_workspace(root)
    prompt = compose_prompt(
        ws, load_catalog(ws), PromptRequest(story_id="1.2", phase=phase), count_tokens=False
    )
    run = runner.start_run(ws, prompt, agent="replay")
    if step == "mid-stream":
        kept = run.run_dir / "resume.json"
        while not json.loads(kept.read_text())["session_id"]:
            time.sleep(0.02)
        die()
    run.wait(60)
    """
)


def kill_at(root: Path, phase: str, step: str) -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), phase, step], capture_output=True, timeout=WAIT
    )
    assert child.returncode == -9, child.stderr.decode()


def agents_gone(run_dir: Path) -> bool:
    """No process left whose argv names the run's folder (the killed promptdeck's agent ends
    at its next write into the closed pipe)."""
    for proc in Path("/proc").iterdir():
        try:
            if str(run_dir).encode() in (proc / "cmdline").read_bytes():
                return False
        except OSError:
            continue
    return True


def wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def run_phase(ws: Workspace, phase: str) -> None:
    prompt = compose_prompt(
        ws, load_catalog(ws), PromptRequest(story_id="1.2", phase=phase), count_tokens=False
    )
    assert start_run(ws, prompt, agent="replay").wait(WAIT).outcome == "success"


def test_killed_before_launch_is_listed_without_a_session_and_starts_again(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path)
    kill_at(tmp_path, "dev", "before-launch")
    [run] = list_runs(tmp_path)
    assert run.outcome == "interrupted"
    assert run.run_meta.sha_before == git(tmp_path, "rev-parse", "HEAD")
    assert (run.dir / "system.md").is_file() and (run.dir / "user.md").is_file()
    [waiting] = interrupted_runs(list_runs(tmp_path))
    assert (waiting.phase, waiting.attempt, waiting.session_id) == ("dev", 1, None)
    notice = interrupted_notice(tmp_path)
    assert notice is not None and f"promptdeck resume {run.id}" in notice

    done = resume_run(ws, run.id)
    assert done.handle is not None and "starts again" in done.note
    result = done.handle.wait(WAIT)
    assert result.outcome == "success"
    second = next(r for r in list_runs(tmp_path) if r.id == result.run_id)
    assert second.run_meta.extra["continues"] == run.id
    assert "--resume" not in second.run_meta.argv
    # The same prompt files, byte for byte.
    for name in ("system.md", "user.md"):
        assert (second.dir / name).read_bytes() == (run.dir / name).read_bytes()
    assert interrupted_runs(list_runs(tmp_path)) == ()
    assert interrupted_notice(tmp_path) is None


def test_killed_mid_stream_resumes_the_session_with_the_same_system_prompt(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path, delay=0.3)
    kill_at(tmp_path, "dev", "mid-stream")
    [run] = list_runs(tmp_path)
    wait_for(lambda: agents_gone(run.dir))
    session = json.loads((run.dir / "resume.json").read_text())["session_id"]
    assert run.outcome == "interrupted" and run.result is None
    [waiting] = interrupted_runs(list_runs(tmp_path))
    assert waiting.session_id == session

    done = resume_run(ws, run.id, replay_script="")
    assert done.handle is not None and session in done.note
    result = done.handle.wait(WAIT)
    assert result.outcome == "success", result.message
    resumed = next(r for r in list_runs(tmp_path) if r.id == result.run_id)
    argv = list(resumed.run_meta.argv)
    assert argv[argv.index("--resume") + 1] == session
    assert resumed.run_meta.mode != "chat"
    assert (resumed.dir / "system.md").read_bytes() == (run.dir / "system.md").read_bytes()
    assert resumed.run_meta.extra["continues"] == run.id
    # The resumed dev phase stages what the interrupted one had already changed.
    assert "1-2-parse-lines.md" in git(tmp_path, "diff", "--staged", "--name-only")


def test_killed_after_the_commit_is_recorded_from_evidence_and_nothing_starts(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path)
    run_phase(ws, "dev")
    head = git(tmp_path, "rev-parse", "HEAD")
    kill_at(tmp_path, "review", "after-commit")
    assert git(tmp_path, "rev-parse", "HEAD") != head  # the commit was made
    review = list_runs(tmp_path)[-1]
    assert review.outcome == "interrupted"
    before = len(list_runs(tmp_path))

    done = resume_run(ws, review.id)
    assert done.handle is None and done.recorded is not None
    assert done.recorded.outcome == "success"
    assert "commit" in done.recorded.message
    assert len(list_runs(tmp_path)) == before  # nothing started
    again = next(r for r in list_runs(tmp_path) if r.id == review.id)
    assert again.outcome == "success"
    assert again.result is not None and again.result["evidence"]
    with pytest.raises(UsageError, match="nothing to resume"):
        resume_run(ws, review.id)


def test_killed_before_the_commit_resumes_and_commits(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    run_phase(ws, "dev")
    head = git(tmp_path, "rev-parse", "HEAD")
    kill_at(tmp_path, "review", "before-commit")
    assert git(tmp_path, "rev-parse", "HEAD") == head
    review = list_runs(tmp_path)[-1]
    assert review.outcome == "interrupted"
    # The status was written, but a review shows its result only by its commit.
    done = resume_run(ws, review.id)
    assert done.handle is not None
    result = done.handle.wait(WAIT)
    assert result.outcome == "success", result.message
    assert result.commit is not None and git(tmp_path, "rev-parse", "HEAD") == result.commit


def test_a_dev_run_killed_after_its_status_write_is_recorded_from_evidence(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path)
    kill_at(tmp_path, "dev", "before-stage")
    [run] = list_runs(tmp_path)
    assert run.outcome == "interrupted"
    done = resume_run(ws, run.id)
    assert done.recorded is not None and "status review" in done.recorded.message


def test_a_run_still_going_or_finished_is_not_resumed(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    run_phase(ws, "dev")
    [run] = list_runs(tmp_path)
    with pytest.raises(UsageError, match="ended success"):
        resume_run(ws, run.id)
    meta = json.loads((run.dir / "meta.json").read_text())
    (run.dir / "result.json").unlink()
    meta["pid"] = os.getpid()  # this very process: alive
    (run.dir / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(UsageError, match="still running"):
        resume_run(ws, run.id)


def test_a_recorded_session_that_is_not_one_is_never_resumed(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    kill_at(tmp_path, "dev", "before-launch")
    [run] = list_runs(tmp_path)
    (run.dir / "resume.json").write_text('{"session_id": "--dangerously-skip-permissions"}')
    [waiting] = interrupted_runs(list_runs(tmp_path))
    assert waiting.session_id is None
    done = resume_run(ws, run.id)
    assert done.handle is not None
    result = done.handle.wait(WAIT)
    second = next(r for r in list_runs(tmp_path) if r.id == result.run_id)
    assert "--dangerously-skip-permissions" not in second.run_meta.argv


def test_a_lock_left_by_a_dead_process_is_taken_over_with_one_line(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = lock_path(tmp_path, "1.2")
    path.parent.mkdir(parents=True)
    path.write_text(f"{dead.pid}\n")
    lock = acquire(tmp_path, "1.2")
    assert lock.taken_over is not None
    assert f"pid {dead.pid}" in lock.taken_over and "1.2" in lock.taken_over
    lock.release()
    again = acquire(tmp_path, "1.2")  # released properly: nothing to say
    assert again.taken_over is None
    again.release()


def test_a_killed_runs_lock_is_taken_over_by_the_resumed_run(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    kill_at(tmp_path, "dev", "before-launch")
    [run] = list_runs(tmp_path)
    done = resume_run(ws, run.id)
    assert done.handle is not None
    result = done.handle.wait(WAIT)
    assert any("took over the lock of story 1-2" in w for w in result.warnings)


def test_the_cli_lists_interrupted_runs_and_resumes_one(tmp_path: Path) -> None:
    from in_process import cli_in_process

    make_workspace(tmp_path)
    assert cli_in_process(tmp_path, "resume").stdout.strip() == "No interrupted runs."
    kill_at(tmp_path, "dev", "before-launch")
    [run] = list_runs(tmp_path)
    listed = cli_in_process(tmp_path, "resume")
    assert listed.returncode == 0 and f"promptdeck resume {run.id}" in listed.stdout
    runs = cli_in_process(tmp_path, "runs")
    assert f"interrupted: {run.id}" in runs.stderr
    as_json = json.loads(cli_in_process(tmp_path, "resume", "--json").stdout)
    assert [item["run_id"] for item in as_json["interrupted"]] == [run.id]
    resumed = cli_in_process(tmp_path, "resume", run.id[:24], "--json")
    assert resumed.returncode == 0, resumed.stderr
    payload = json.loads(resumed.stdout)
    assert payload["resumed"]["run_id"] == run.id and payload["result"]["outcome"] == "success"
    again = cli_in_process(tmp_path, "resume", run.id)
    assert again.returncode == 2 and "already resumed by run" in again.stderr
    assert cli_in_process(tmp_path, "resume").stdout.strip() == "No interrupted runs."


def test_a_run_started_after_an_interrupted_one_says_so_in_one_line(tmp_path: Path) -> None:
    from in_process import cli_in_process

    make_workspace(tmp_path)
    kill_at(tmp_path, "dev", "before-launch")
    [run] = list_runs(tmp_path)
    started = cli_in_process(tmp_path, "run", "1.2", "--phase", "dev", "--agent", "replay")
    said = [line for line in started.stderr.splitlines() if "interrupted" in line]
    assert said == [f"promptdeck: a run was interrupted: {interrupted_runs([run])[0].describe()}"]


@pytest.mark.parametrize(
    ("parser", "line", "session"),
    [
        (
            "codex",
            '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}',
            "0199a213-81c0-7800-8aa1-bbab2a035a53",
        ),
        (
            "claude",
            '{"type":"system","subtype":"init","session_id":"5f0c1e7a-1","model":"m"}',
            "5f0c1e7a-1",
        ),
        ("claude", '{"type":"system","subtype":"init","session_id":"--help","model":"m"}', None),
    ],
)
def test_the_session_id_is_on_disk_as_soon_as_the_client_reports_it(
    tmp_path: Path, parser: str, line: str, session: str | None
) -> None:
    from promptdeck.core.agents.claude import StreamJsonParser
    from promptdeck.core.agents.codex_stream import CodexJsonParser
    from promptdeck.core.records.writer import RunRecord
    from promptdeck.core.run.runner import SessionKeeper
    from promptdeck.core.run.stream import StreamProcessor

    record = RunRecord(tmp_path, "run")
    keeper = SessionKeeper(record, {"dirty_before": []})
    keeper.write()
    heard: list[str] = []
    keeper.listener = lambda event: heard.append(event.kind)
    chosen = CodexJsonParser() if parser == "codex" else StreamJsonParser(200_000)
    processor = StreamProcessor(chosen, record, keeper)
    processor.stdout_chunk(line.encode() + b"\n")
    # Before the stream ends: the line alone put it there.
    assert json.loads((tmp_path / "resume.json").read_text())["session_id"] == session
    assert heard  # the caller's listener still hears every event
