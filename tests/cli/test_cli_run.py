"""``promptdeck run``, ``runs``, ``show`` and ``chat`` through a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.cli.run_output import outcome_colour
from promptdeck.core.vocabulary import OUTCOMES, Outcome

PROMPTDECK = [
    sys.executable,
    "-c",
    "import sys; from promptdeck.cli import main; sys.exit(main())",
]
STORY_REL = "_bmad-output/implementation-artifacts/1-2-parse-lines.md"
STORY = "# Story 1.2: Parse lines\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Parser\n"


def cli(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PROMPTDECK, *args],
        cwd=root,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )


def workspace(root: Path, *, git: bool = True) -> Path:
    story = root / STORY_REL
    story.parent.mkdir(parents=True)
    story.write_text(STORY)
    (root / ".promptdeck").mkdir()
    # The suite's agent is the replay simulation, named, with its git steps allowed.
    (root / ".promptdeck" / "config.toml").write_text(
        '[agent]\ndefault = "replay"\nreplay_git = true\nreplay_delay = 0.0\n'
    )
    if git:
        commit_all(root)
    return root


def test_dry_run_prints_the_confirmation_and_prompt_files_and_launches_nothing(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    done = cli(root, "run", "1.2", "--phase", "dev", "--agent", "claude", "--dry-run")
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    assert rows[0] == "Run dev for story 1-2 (create, attempt 1) with the claude agent"
    assert rows[1].startswith("system 7.") and " tok · user " in rows[1]
    assert rows[-3] == "" and rows[-2].startswith("The command that will run (run folder ")
    # The prompt files go to a temporary folder it names, never into the project.
    folder = Path(rows[-2].removeprefix("The command that will run (run folder ")[:-2])
    assert folder.name.startswith("promptdeck-dry-run-") and not folder.is_relative_to(root)
    assert not (root / ".promptdeck" / "runs").exists()
    system = folder / "system.md"
    # The program as it will run: the absolute path PATH resolves it to, or its bare name with a
    # note when no absolute PATH entry holds it (whichever this machine has).
    program, arguments = rows[-1].split(" ", 1)
    assert program == "claude" or (Path(program).is_absolute() and program.endswith("/claude"))
    assert arguments.startswith(
        "-p --output-format stream-json --verbose --append-system-prompt-file"
    )
    assert f"--append-system-prompt-file {system}" in rows[-1]
    composed = subprocess.run(
        [*PROMPTDECK, "compose", "1.2", "--phase", "dev", "--part", "system"],
        cwd=root,
        capture_output=True,
        timeout=120,
    )
    assert composed.returncode == 0
    assert system.read_bytes() == composed.stdout
    listed = json.loads(cli(root, "runs", "--json").stdout)
    assert listed == {"runs": []}
    as_json = json.loads(cli(root, "run", "1.2", "--phase", "dev", "--dry-run", "--json").stdout)
    assert (as_json["agent"], as_json["blocked"]) == ("replay (simulation)", False)
    # Each dry run its own temporary folder.
    again = Path(as_json["run_folder"]) / "system.md"
    assert again.parent != folder and again.read_bytes() == system.read_bytes()
    launch = as_json["launch"]
    assert launch["agent"] == "replay" and launch["user_file"]["bytes"] > 0
    assert launch["system_file"] == {"path": str(again), "bytes": system.stat().st_size}


def test_run_success_then_runs_and_show(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    done = cli(root, "run", "1.2", "--phase", "dev", "--agent", "replay")
    assert done.returncode == 0, done.stderr
    assert "IMPLEMENTATION COMPLETE: 1-2" in done.stdout.splitlines()
    assert "→ success" in done.stderr and "path(s) the phase changed" in done.stderr
    rows = json.loads(cli(root, "runs", "--json").stdout)["runs"]
    assert len(rows) == 1
    row = rows[0]
    assert (row["story"], row["phase"], row["attempt"], row["agent"], row["outcome"]) == (
        "1-2",
        "dev",
        1,
        "replay",
        "success",
    )
    assert row["signal"] == "IMPLEMENTATION COMPLETE" and row["tokens"]["output"] > 0
    # A simulation shows no money.
    assert isinstance(row["duration_s"], float) and row["cost_usd"] is None
    shown = json.loads(cli(root, "show", "last", "--json").stdout)
    assert shown["id"] == row["id"] and "stream.jsonl" in shown["files"]
    assert (
        shown["meta"]["argv"][1:3] == ["-P", "-m"]
        and shown["signals"][0]["kind"] == "implementation-complete"
    )
    text = cli(root, "show", row["id"][:22])
    assert text.returncode == 0 and "outcome  success" in text.stdout
    table = cli(root, "runs")
    assert table.returncode == 0 and "dev" in table.stdout


@pytest.mark.parametrize(
    ("script", "code"), [("dev=blocked", 4), ("dev=nosignal", 5), ("dev=crash", 5)]
)
def test_exit_codes_follow_the_outcome(tmp_path: Path, script: str, code: int) -> None:
    root = workspace(tmp_path)
    done = cli(root, "run", "1.2", "--phase", "dev", "--replay-script", script)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr


def test_missing_agent_binary_is_exit_5_in_one_line(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / ".promptdeck" / "config.toml").write_text('[agent]\nclaude_bin = "/no/such/claude"\n')
    assert cli(root, "trust").returncode == 0
    done = cli(root, "run", "1.2", "--phase", "dev", "--agent", "claude")
    assert done.returncode == 5
    assert "agent binary not found: /no/such/claude" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_input_exits_2(tmp_path: Path) -> None:
    root = workspace(tmp_path, git=False)
    outside = cli(root, "run", "1.2", "--phase", "dev")
    assert outside.returncode == 2 and "not inside a git repository" in outside.stderr
    assert "--no-git" in outside.stderr and "Traceback" not in outside.stderr
    assert cli(root, "run", "1.2", "--phase", "dev", "--no-git").returncode == 0
    assert cli(root, "run", "1.2").returncode == 2
    assert cli(root, "run", "9.9", "--phase", "dev", "--no-git").returncode == 2
    assert cli(root, "run", "1.2", "--phase", "dev", "--timeout", "0").returncode == 2
    bad = cli(root, "run", "1.2", "--phase", "dev", "--no-git", "--replay-script", "dev=boom")
    assert bad.returncode == 2 and "replay script" in bad.stderr
    assert cli(root, "show", "nope").returncode == 2


def test_over_the_size_limit_exits_3(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / "big.md").write_text("x" * (160 * 1024))
    done = cli(root, "run", "1.2", "--phase", "dev", "--file", "big.md")
    assert done.returncode == 3 and "big.md" in done.stderr
    assert json.loads(cli(root, "runs", "--json").stdout) == {"runs": []}


def test_auto_retries_a_blocked_dev_with_its_reason_and_commits(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    done = cli(
        root,
        "run",
        "1.2",
        "--auto",
        "--with",
        "kickoff,failure",
        "--replay-script",
        "dev=blocked:1",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    phases = [(r["phase"], r["outcome"], r["mode"]) for r in summary["runs"]]
    assert phases[:5] == [
        ("kickoff", "success", "create"),
        ("dev", "failure", "create"),
        ("failure", "success", "create"),
        ("dev", "success", "optimize"),
        ("review", "success", "create"),
    ]
    assert summary["done"]
    rows = json.loads(cli(root, "runs", "--json").stdout)["runs"]
    retry = rows[3]
    assert retry["attempt"] == 2
    shown = json.loads(cli(root, "show", retry["id"], "--json").stdout)
    assert shown["meta"]["retry_reason"] == "the test fixture for the parser is missing"
    user = (Path(shown["dir"]) / "system.md").read_text() + (
        Path(shown["dir"]) / "user.md"
    ).read_text()
    assert "the test fixture for the parser is missing" in user
    log = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True)
    assert log.stdout.splitlines()[0] == "feat(1-2): Parse lines"


def test_demo_story_goes_kickoff_dev_review_commit(
    tmp_path: Path, copy_demo: Callable[[Path], Path]
) -> None:
    root = copy_demo(tmp_path / "demo")
    catalog = json.loads(cli(root, "stories", "--json").stdout)["stories"]
    story = next(
        s["id"] for s in catalog if s["status"] == "ready-for-dev" and s["source"] == "bmad"
    )
    for phase in ("kickoff", "dev", "review"):
        done = cli(root, "run", story, "--phase", phase)
        assert done.returncode == 0, (phase, done.stderr)
    log = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True)
    assert log.stdout.splitlines()[0].startswith(f"feat({story}): ")
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True
    )
    assert status.stdout == ""


def test_chat_continues_the_session_and_reinjects(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    assert cli(root, "run", "1.2", "--phase", "dev").returncode == 0
    done = subprocess.run(
        [*PROMPTDECK, "chat", "1.2", "--phase", "dev", "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        input="one\ntwo\n/exit\nthree\n",
        timeout=120,
        env={**__import__("os").environ, "PROMPTDECK_REINJECTION_TURNS": "2"},
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["turns"] == 3 and len(summary["runs"]) == 2
    # The workspace has no rules file: the re-injection's read of it counts as a failure.
    assert summary["counters"] == {"initial_injections": 1, "reinjections": 1, "failures": 1}
    assert "turns=2" in done.stderr and "trigger turns" in done.stderr
    first_session = json.loads(cli(root, "show", summary["runs"][0]["run_id"], "--json").stdout)
    assert first_session["meta"]["resume_session"] == summary["session_id"]
    assert "--resume" in first_session["meta"]["argv"]


def test_chat_warns_about_missing_rules_once_before_the_first_turn(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    done = cli(root, "chat", "1.2", "--phase", "dev", "-m", "hello")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    warning = "promptdeck: warning: no workspace rules file (looked for .promptdeck/rules.md"
    shown = [i for i, line in enumerate(lines) if line.startswith(warning)]
    assert len(shown) == 1
    assert shown[0] < lines.index(
        "promptdeck: initial injection: system prompt file + phase message"
    )
    assert "counters: initial=1 reinjections=0 failures=1" in done.stderr


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_every_outcome_has_a_colour_in_the_summary(outcome: Outcome) -> None:
    expected = {"success": "1;32", "failure": "1;31"}.get(outcome, "1;33")
    assert outcome_colour(outcome) == expected


def test_an_openspec_run_appends_its_records_where_its_prompt_says_they_go(
    tmp_path: Path,
) -> None:
    change = tmp_path / "openspec" / "changes" / "add-auth"
    change.mkdir(parents=True)
    tasks = "## 1. Login\n\n- [ ] 1.1 Form\n\n## 2. Logout\n\n- [ ] 2.1 Button\n"
    (change / "tasks.md").write_text(tasks)
    (change / "proposal.md").write_text("# Add auth\n\n## Why\n\nUsers.\n")
    (tmp_path / ".promptdeck").mkdir()
    (tmp_path / ".promptdeck" / "config.toml").write_text(
        '[agent]\ndefault = "replay"\nreplay_git = true\nreplay_delay = 0.0\n'
    )
    commit_all(tmp_path)
    prompt = cli(tmp_path, "compose", "add-auth:2", "--phase", "dev")
    record = "openspec/changes/add-auth/records/group-2.md"
    assert record in prompt.stdout, prompt.stderr
    done = cli(tmp_path, "run", "add-auth:2", "--phase", "dev", "--agent", "replay")
    assert done.returncode == 0, done.stderr
    assert "## Dev Agent Record" in (tmp_path / record).read_text()
    # The change's shared task list is no story's record file.
    assert "Dev Agent Record" not in (change / "tasks.md").read_text()


def _bare_project(root: Path) -> Path:
    """A plan and nothing of promptdeck's: no ``.promptdeck/``, no agent named."""
    folder = root / "_bmad-output" / "implementation-artifacts"
    folder.mkdir(parents=True)
    (folder / "sprint-status.yaml").write_text(
        "development_status:\n  epic-1: in-progress\n  1-2-parse-lines: ready-for-dev\n"
    )
    (root / STORY_REL).write_text(STORY)
    return root


def test_a_dry_run_writes_nothing_into_the_project_and_needs_no_agent(tmp_path: Path) -> None:
    import os

    root = _bare_project(tmp_path / "project")
    bin_dir = tmp_path / "bin"  # git only: neither claude nor codex is installed
    bin_dir.mkdir()
    git = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    (bin_dir / "git").symlink_to(git)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PROMPTDECK_")},
        "PATH": str(bin_dir),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    for extra in ((), ("--auto",), ("--json",)):
        done = subprocess.run(
            [*PROMPTDECK, "run", "1-2", *(("--phase", "dev") if not extra else ()), *extra]
            + (["--phase", "dev"] if extra == ("--json",) else [])
            + ["--dry-run", "--include", STORY_REL],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        # It says which agent a run would need.
        assert "no agent to run: Claude Code (`claude`) was not found" in done.stderr
        assert "the dry run shows Claude Code's run" in done.stderr
        assert not (root / ".promptdeck").exists()
    payload = json.loads(done.stdout)
    assert payload["agent_needed"].startswith("no agent to run")
    folder = Path(payload["run_folder"])
    assert folder.name.startswith("promptdeck-dry-run-") and (folder / "system.md").is_file()
    # Without --dry-run the same command refuses in one line (exit 2).
    refused = subprocess.run(
        [*PROMPTDECK, "run", "1-2", "--phase", "dev"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert refused.returncode == 2 and "no agent to run" in refused.stderr


def test_the_auto_dry_run_lists_the_phases_auto_would_run_in_order(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    done = cli(root, "run", "1-2", "--auto", "--with", "kickoff,retro", "--dry-run")
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    listed = rows[1 : rows.index("")]
    assert listed == [
        "  1. kickoff — a fresh story (kickoff is optional)",
        "  2. dev — kickoff was run",
        "  3. review — dev completed and its changes are staged",
        "  4. uat — every story of the epic is done",
        "  5. retro — UAT was run",
        "  then: story and epic done",
    ]
    # The first phase's confirmation follows; the JSON carries the same list.
    assert any(row.startswith("Run kickoff for story 1-2") for row in rows)
    payload = json.loads(cli(root, "run", "1-2", "--auto", "--dry-run", "--json").stdout)
    assert [p["phase"] for p in payload["auto"]["phases"]] == ["dev", "review", "uat"]
    assert payload["auto"]["then"] == "story and epic done (retro not asked for)"
    # Nothing was run: no record of the phases listed.
    assert json.loads(cli(root, "runs", "--json").stdout)["runs"] == []
