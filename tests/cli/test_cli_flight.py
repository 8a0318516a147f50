"""``show RUN --turns``, ``plan --backtest`` and ``inspect --cost``'s whole-phase line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flight_runs import INJECTED, claude_stream, write_run
from in_process import cli_in_process

ARTIFACTS = "_bmad-output/implementation-artifacts"
FILES = {
    f"{ARTIFACTS}/sprint-status.yaml": "development_status:\n  epic-1: in-progress\n"
    "  1-2-user-registration: ready-for-dev\n",
    f"{ARTIFACTS}/1-2-user-registration.md": "# Story 1.2: User registration\n\n"
    "Status: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Form\n",
    ".promptdeck/rules.md": "Always write tests.\n",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for relpath, text in FILES.items():
        path = tmp_path / "project" / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return (tmp_path / "project").resolve()


def _twelve(root: Path) -> None:
    for n in range(12):
        write_run(
            root,
            f"20250101-0000{n:02d}-000000-dev-1-2-run{n:03d}",
            claude_stream(str(root)),
            dollars=0.10 + 0.03 * (n % 5) + 0.001 * n,
        )


def test_show_turns_json_lists_every_request_the_spend_and_the_flags(root: Path) -> None:
    run = write_run(root, "20250101-000000-000000-dev-1-2-abcdef", claude_stream(str(root)))
    done = cli_in_process(root, "show", "last", "--turns", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [r["id"] for r in data["requests"]] == ["msg_1", "msg_2", "msg_3"]
    assert [r["id"] for r in data["requests"][1]["subagents"][0]["requests"]] == [
        "msg_s1",
        "msg_s2",
    ]
    spend = data["spend"]
    assert sum(c["tokens"] for c in spend["categories"]) == spend["total_tokens"]
    assert spend["total_tokens"] == 17_763
    assert any(INJECTED in flag and "paid twice" in flag for flag in spend["flags"])
    assert (run / "turns.json").is_file()


def test_show_turns_prints_requests_spend_and_flags(root: Path) -> None:
    write_run(root, "20250101-000000-000000-dev-1-2-abcdef", claude_stream(str(root)))
    done = cli_in_process(root, "show", "last", "--turns")
    assert done.returncode == 0, done.stderr
    assert "claude-code stream-json 2.1.197" in done.stdout
    assert "subagent toolu_task1" in done.stdout
    assert "flag     read docs/architecture.md" in done.stdout
    assert "the client reported 17,763 at its end" in done.stdout  # the fixture's own sum


def test_plan_backtest_over_twelve_recorded_runs_prints_its_coverage(root: Path) -> None:
    _twelve(root)
    done = cli_in_process(root, "plan", "--backtest")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("backtest over 12 runs: coverage ")
    assert "median error of p50" in done.stdout
    as_json = json.loads(cli_in_process(root, "plan", "--backtest", "--json").stdout)
    assert as_json["tried"] == 12 and 0 <= as_json["coverage"] <= 1
    other = cli_in_process(root, "plan", "--backtest", "--phase", "review")
    assert "no run could be forecast" in other.stdout


def test_plan_without_an_epic_or_backtest_is_one_line_and_exit_2(root: Path) -> None:
    done = cli_in_process(root, "plan")
    assert done.returncode == 2
    assert "plan needs --epic" in done.stderr


def test_inspect_cost_says_the_whole_phase_forecast_or_that_it_has_no_history(root: Path) -> None:
    done = cli_in_process(root, "inspect", "1-2", "--cost", "--phases", "dev")
    assert done.returncode == 0, done.stderr
    assert "first request only, no history" in done.stdout
    _twelve(root)
    # The recorded runs used claude-sonnet-4-6: the forecast is of a run at that model.
    done = cli_in_process(
        root, "inspect", "1-2", "--cost", "--phases", "dev", "--model", "claude-sonnet-4-6"
    )
    assert "dev whole phase (claude-sonnet-4-6, n=12 runs): cost p50" in done.stdout


def test_a_symlinked_turn_list_is_refused_in_one_line(root: Path, tmp_path: Path) -> None:
    run = write_run(root, "20250101-000000-000000-dev-1-2-abcdef", claude_stream(str(root)))
    target = tmp_path / "elsewhere.json"
    target.write_text("{}", encoding="utf-8")
    (run / "turns.json").symlink_to(target)
    done = cli_in_process(root, "show", "last", "--turns")
    assert done.returncode == 2
    assert "turns.json is a symbolic link" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert target.read_text(encoding="utf-8") == "{}"


def test_a_simulated_runs_spend_says_its_usage_is_invented(root: Path) -> None:
    write_run(
        root, "20250101-000000-000000-dev-1-2-simula", claude_stream(str(root)), simulation=True
    )
    done = cli_in_process(root, "show", "last", "--turns")
    spend = next(line for line in done.stdout.splitlines() if line.startswith("spend"))
    assert "a simulated run: its usage is invented, not billed" in spend
    assert not spend.startswith("spend    (;")  # no empty model before the first ';'
    data = json.loads(cli_in_process(root, "show", "last", "--turns", "--json").stdout)
    assert data["simulation"] is True
