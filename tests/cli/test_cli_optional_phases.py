"""``run --auto`` and the optional phases (seed 002: non-blocking, opt-in), party variants on
the command line, and the per-phase token budget — the commands called in-process (the
process boundary is test_cli_run's), the replay agent a real process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from in_process import cli_in_process as cli
from test_cli_run import STORY_REL, workspace


def _config(root: Path, extra: str) -> None:
    path = root / ".promptdeck" / "config.toml"
    path.write_text(path.read_text() + extra)


def _phases(stdout: str) -> list[tuple[str, str]]:
    return [(r["phase"], r["outcome"]) for r in json.loads(stdout)["runs"]]


def test_auto_runs_no_kickoff_failure_analysis_or_retro_unless_asked(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    done = cli(root, "run", "1.2", "--auto", "--replay-script", "dev=blocked:1", "--json")
    assert done.returncode == 0, done.stderr
    # A blocked dev is retried at once; the epic (this one story) gets its UAT, not a retro.
    assert _phases(done.stdout) == [
        ("dev", "failure"),
        ("dev", "success"),
        ("review", "success"),
        ("uat", "success"),
    ]
    assert "retro not asked for" in json.loads(done.stdout)["note"]


def test_config_defaults_opt_the_optional_phases_in(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    _config(root, "\n[flow]\nauto_kickoff = true\nauto_retro = true\n")
    done = cli(root, "run", "1.2", "--auto", "--json")
    assert done.returncode == 0, done.stderr
    assert [p for p, _ in _phases(done.stdout)] == ["kickoff", "dev", "review", "uat", "retro"]
    assert (root / "docs" / "sprints" / "epic-1-retro.md").is_file()


def test_an_escalate_recommendation_is_shown_and_the_flow_retries(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    done = cli(
        root,
        "run",
        "1.2",
        "--auto",
        "--party-failure",
        "--replay-script",
        "dev=blocked:1,failure=fail",
    )
    assert done.returncode == 0, done.stderr
    assert "failure analysis recommends Escalate — informational: the flow retries" in done.stderr
    assert "next: failure [party]" in done.stderr
    story = (root / STORY_REL).read_text()
    assert "## Failure Analysis Record" in story
    assert "**Participants**: Winston (Architect), Amelia (Developer), Bob (Scrum Master)" in story
    assert "**Recommendation**: Escalate" in story


def test_honour_analysis_stops_on_escalate_with_the_devs_failure_code(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    _config(root, "\n[flow]\nhonour_analysis = true\n")
    done = cli(
        root,
        "run",
        "1.2",
        "--auto",
        "--with",
        "failure",
        "--replay-script",
        "dev=blocked:1,failure=fail",
        "--json",
    )
    assert done.returncode == 4, done.stderr
    assert _phases(done.stdout) == [("dev", "failure"), ("failure", "success")]
    assert "recommends Escalate" in json.loads(done.stdout)["note"]


def test_a_failed_kickoff_and_a_failed_retro_never_block(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    done = cli(
        root,
        "run",
        "1.2",
        "--auto",
        "--party-kickoff",
        "--party-retro",
        "--replay-script",
        "kickoff=fail,retro=fail",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    # The replay agent's scripted kickoff and retro failures print no signal of their phase.
    assert _phases(done.stdout) == [
        ("kickoff", "no-signal"),
        ("dev", "success"),
        ("review", "success"),
        ("uat", "success"),
        ("retro", "no-signal"),
    ]
    summary = json.loads(done.stdout)
    assert summary["done"] and "warning: the retro ended with no-signal" in summary["note"]


def test_party_review_through_run_appends_one_party_review_record(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    assert cli(root, "run", "1.2", "--phase", "dev").returncode == 0
    done = cli(root, "run", "1.2", "--phase", "review", "--party-review", "--json")
    assert done.returncode == 0, done.stderr
    story = (root / STORY_REL).read_text()
    assert story.count("## Party Review Record") == 1 and "## Code Review Record" not in story
    assert "**Participants**: Winston (Architect), Murat (Test Architect), Amelia" in story
    shown = json.loads(cli(root, "show", "last", "--json").stdout)
    assert "## Role: Party code review" in (Path(shown["dir"]) / "system.md").read_text()
    assert shown["meta"]["variant"] == "party"
    rows = json.loads(cli(root, "runs", "--json").stdout)["runs"]
    assert [r["variant"] for r in rows] == ["standard", "party"]
    # Lists name the variant with the phase; the JSON keeps them apart.
    records = [line.split("\t") for line in cli(root, "runs").stdout.splitlines()]
    assert [record[2] for record in records if record[0] in {r["id"] for r in rows}] == [
        "dev",
        "review (party)",
    ]
    assert "phase review (party)" in cli(root, "show", "last").stdout


def test_a_prompt_over_its_token_budget_is_refused_with_exit_9(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    _config(root, "\n[budget]\ndev = 100\n")
    done = cli(root, "run", "1.2", "--phase", "dev")
    assert done.returncode == 9
    assert "over its budget of 100" in done.stderr and "Traceback" not in done.stderr
    assert json.loads(cli(root, "runs", "--json").stdout) == {"runs": []}
    shown = json.loads(cli(root, "inspect", "1.2", "--json").stdout)
    assert shown["budget"]["tokens"] == 100 and shown["budget"]["over"]
    assert cli(root, "run", "1.2", "--phase", "dev", "--dry-run").returncode == 0
    _config(root, "review = 100000\n")
    assert cli(root, "run", "1.2", "--phase", "dev").returncode == 9


def test_bad_variant_and_optional_phase_input_exits_2(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    bad = cli(root, "run", "1.2", "--auto", "--with", "review")
    assert bad.returncode == 2 and "expected some of kickoff, failure, retro" in bad.stderr
    no_auto = cli(root, "run", "1.2", "--phase", "dev", "--with", "kickoff")
    assert no_auto.returncode == 2 and "--with needs --auto" in no_auto.stderr
    _config(root, "\n[budget]\ndev = -1\n")
    negative = cli(root, "inspect", "1.2")
    assert negative.returncode == 2 and "budget.dev" in negative.stderr


def test_the_first_dev_run_starts_the_learnings_file_and_the_prompt_says_where(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    learnings = root / ".promptdeck" / "learnings.md"
    assert not learnings.exists()
    assert cli(root, "run", "1.2", "--phase", "dev").returncode == 0
    assert learnings.read_text().startswith("# Shared Learnings")
    system = cli(root, "compose", "1.2", "--phase", "dev").stdout
    assert "Shared Learnings" not in system
    assert "as a short bullet to\n`.promptdeck/learnings.md`" in system
    learnings.write_text(learnings.read_text() + "\n- Parse with splitlines().\n")
    system = cli(root, "compose", "1.2", "--phase", "dev").stdout
    assert "### Shared Learnings" in system and "- Parse with splitlines()." in system
    assert cli(root, "run", "1.2", "--phase", "review").returncode == 0
    tracked = subprocess.run(
        ["git", "ls-files", ".promptdeck/learnings.md"], cwd=root, capture_output=True, text=True
    )
    assert tracked.stdout.strip() == ".promptdeck/learnings.md"


def test_party_retro_writes_both_documents_where_the_config_says(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    _config(root, '\n[paths]\nretro = "notes/retro-{id}.md"\nhandoff = "notes/next-{id}.md"\n')
    done = cli(root, "run", "1.2", "--phase", "retro", "--party-retro")
    assert done.returncode == 0, done.stderr
    assert "RETRO COMPLETE: Epic 1" in done.stdout
    retro = (root / "notes" / "retro-1.md").read_text()
    assert (
        "**Participants**: Bob (Scrum Master), Winston (Architect), Amelia (Developer), " in retro
    )
    assert (root / "notes" / "next-1.md").is_file() and not (root / "docs").exists()


def test_a_party_flag_for_another_phase_is_named_as_changing_nothing(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    plain = cli(root, "compose", "1.2")
    flagged = cli(root, "compose", "1.2", "--party-review")
    assert plain.returncode == flagged.returncode == 0, flagged.stderr
    assert flagged.stdout == plain.stdout
    assert "--party-review changes nothing when composing the dev phase" in flagged.stderr
    assert "--party-review" not in plain.stderr
    # Where it applies, it is no warning.
    review = cli(root, "compose", "1.2", "--phase", "review", "--party-review")
    assert "changes nothing" not in review.stderr and "Party Review" in review.stdout
