"""The whole-phase forecast where a run is decided: ``run --dry-run``'s confirmation and
``plan --epic``'s rows and total — ranges with n from recorded runs, else labelled as the first
request's estimate alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flight_runs import claude_stream, write_run
from in_process import cli_in_process
from promptdeck.core.flight import NO_HISTORY

ARTIFACTS = "_bmad-output/implementation-artifacts"
MODEL = "claude-sonnet-4-6"
FILES = {
    f"{ARTIFACTS}/sprint-status.yaml": "development_status:\n  epic-1: in-progress\n"
    "  1-2-user-registration: ready-for-dev\n",
    f"{ARTIFACTS}/1-2-user-registration.md": "# Story 1.2: User registration\n\n"
    "Status: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Form\n",
    ".promptdeck/rules.md": "Always write tests.\n",
    # The model every run of the project is priced as, named without asking a client.
    ".promptdeck/config.toml": f'[pricing]\nmodel = "{MODEL}"\n',
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for relpath, text in FILES.items():
        path = tmp_path / "project" / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return (tmp_path / "project").resolve()


def _history(root: Path, dollars: list[float], phase: str = "dev") -> None:
    for n, value in enumerate(dollars):
        write_run(
            root,
            f"20250101-0000{n:02d}-000000-{phase}-1-2-run{n:03d}",
            claude_stream(str(root)),
            phase=phase,
            dollars=value,
            model=MODEL,
        )


def _dry_run(root: Path, *extra: str) -> str:
    done = cli_in_process(
        root, "run", "1-2", "--phase", "dev", "--agent", "replay", "--dry-run", *extra
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_dry_run_says_first_request_only_without_history(root: Path) -> None:
    out = _dry_run(root)
    assert "dev whole phase: $" in out and f"({NO_HISTORY})" in out
    forecast = json.loads(_dry_run(root, "--json"))["forecast"]
    assert (forecast["n"], forecast["label"], forecast["cost"]) == (0, NO_HISTORY, None)
    assert forecast["first_request_dollars"] is not None


def test_the_dry_run_shows_the_whole_phase_range_from_recorded_runs(root: Path) -> None:
    _history(root, [0.10, 0.20, 0.30, 0.40, 0.50])
    _history(root, [9.0], phase="review")  # another phase's run teaches nothing here
    out = _dry_run(root)
    assert f"dev whole phase ({MODEL}, n=5 runs): cost p50 $0.3000 · p90 $0.4600" in out
    assert "requests p50 5" in out and NO_HISTORY not in out
    forecast = json.loads(_dry_run(root, "--json"))["forecast"]
    assert forecast["n"] == 5 and forecast["cost"]["p50"] == pytest.approx(0.30)


def test_plan_epic_gives_each_row_its_phase_forecast_and_the_total_a_range(root: Path) -> None:
    _history(root, [0.10, 0.20, 0.30, 0.40, 0.50])
    done = cli_in_process(root, "plan", "--epic", "1", "--phases", "kickoff,dev")
    assert done.returncode == 0, done.stderr
    rows = {
        line.split("\t")[2]: line for line in done.stdout.splitlines() if line.startswith("row\t")
    }
    assert "\tp50 $0.3000 · p90 $0.4600 (n=5)\t" in rows["dev"]
    assert f"\t{NO_HISTORY}\t" in rows["kickoff"]
    assert (
        "whole-phase\twhole phases p50 $0.3000 · p90 $0.4600 over the 1 of 2 rows with "
        f"recorded runs (each row's p50 and p90 added); 1 row(s) without history: {NO_HISTORY}"
    ) in done.stdout
    total = next(line for line in done.stdout.splitlines() if line.startswith("total\t"))
    assert "p50 $0.3000 · p90 $0.4600" in total
    payload = json.loads(
        cli_in_process(root, "plan", "--epic", "1", "--phases", "kickoff,dev", "--json").stdout
    )
    forecast = payload["forecast"]
    assert [row["n"] for row in forecast["rows"]] == [0, 5]
    assert forecast["total"]["p90"] == pytest.approx(0.46)
    assert forecast["rows"][1]["first_request_dollars"] == payload["rows"][1]["dollars"]


def test_plan_epic_without_history_has_no_total_range(root: Path) -> None:
    done = cli_in_process(root, "plan", "--epic", "1", "--phases", "kickoff,dev", "--json")
    total = json.loads(done.stdout)["forecast"]["total"]
    assert (total["p50"], total["p90"], total["rows_with_history"]) == (None, None, 0)
    assert NO_HISTORY in total["label"]
