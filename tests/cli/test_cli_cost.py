"""``inspect --cache`` (and the cost faces) through a subprocess: what the CLI prints is what
the bytes sent share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
ARTIFACTS = "_bmad-output/implementation-artifacts"
STORY = f"{ARTIFACTS}/1-2-user-registration.md"
FILES = {
    f"{ARTIFACTS}/sprint-status.yaml": "development_status:\n  epic-1: in-progress\n"
    "  1-2-user-registration: ready-for-dev\n",
    STORY: "# Story 1.2: User registration\n\nStatus: ready-for-dev\n\n## Acceptance Criteria\n\n"
    "1. A new email creates an account.\n\n## Tasks / Subtasks\n\n- [ ] Task 1: Form (AC: 1)\n"
    + "\nBackground detail, repeated so the injection is the bulk. "
    * 300,
    ".promptdeck/rules.md": "Always write tests.\n",
    # A file no phase writes: what cache-aware delivery can share (the story file is written).
    "_bmad-output/planning-artifacts/sprint-project-context.md": "# Project context\n"
    + "\nShared background, repeated so the shared part is worth caching. " * 300,
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for relpath, text in FILES.items():
        path = tmp_path / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


MODEL = "claude-sonnet-4-6"


def run(root: Path, *args: str, model: str | None = MODEL) -> subprocess.CompletedProcess[bytes]:
    """The CLI in a home of its own, with no ``claude`` program to ask for its version; the
    model the client would use is ``model`` (its ``ANTHROPIC_MODEL``), none when None."""
    home = Path(f"{root}-home")
    home.mkdir(exist_ok=True)
    env = {
        **{k: v for k, v in os.environ.items() if k != "ANTHROPIC_MODEL"},
        "COLUMNS": "200",
        "NO_COLOR": "1",
        "HOME": str(home),
        "PROMPTDECK_CLAUDE_BIN": str(home / "no-claude"),
    }
    if model is not None:
        env["ANTHROPIC_MODEL"] = model
    return subprocess.run(
        [PROMPTDECK, *args, "--root", str(root)], capture_output=True, env=env, timeout=120
    )


def common_prefix(first: bytes, second: bytes) -> int:
    length = 0
    while length < min(len(first), len(second)) and first[length] == second[length]:
        length += 1
    return length


@pytest.mark.parametrize("delivery", ["layered", "cache-aware"])
def test_inspect_cache_json_equals_the_common_prefix_of_the_composed_system_prompts(
    root: Path, delivery: str
) -> None:
    done = run(
        root,
        "inspect",
        "1-2",
        "--cache",
        "--json",
        "--phases",
        "kickoff,dev,review",
        "--delivery",
        delivery,
    )
    assert done.returncode == 0, done.stderr.decode()
    meter = json.loads(done.stdout)
    assert meter["delivery"] == delivery
    systems = {
        phase: run(root, "compose", "1-2", "--phase", phase, "--delivery", delivery).stdout
        for phase in ("kickoff", "dev", "review")
    }
    for pair in meter["pairs"]:
        expected = common_prefix(systems[pair["before"]], systems[pair["after"]])
        assert pair["shared_prefix_bytes"] == expected
        assert pair["system_bytes"] == len(systems[pair["after"]])
    if delivery == "cache-aware":
        assert all(pair["whole"] for pair in meter["pairs"])
    else:
        assert meter["pairs"][0]["parts_at"] == "Layer-2"


def test_inspect_cache_prints_records_and_flags_when_piped(root: Path) -> None:
    done = run(root, "inspect", "1-2", "--cache", "--phases", "dev,review")
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.decode().splitlines()
    assert any(line.startswith("layer\tLayer-2\tContract\tvolatile") for line in lines)
    assert any(line.startswith("pair\tdev→review\t") for line in lines)
    assert any(line.startswith("flag\tdev→review: volatile Layer-2") for line in lines)


def test_inspect_cache_refuses_an_unknown_phase_in_one_line(root: Path) -> None:
    done = run(root, "inspect", "1-2", "--cache", "--phases", "dev,lunch")
    assert done.returncode != 0
    err = done.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "lunch" in err[0]
    assert b"Traceback" not in done.stderr


def test_inspect_cost_json_prices_each_phase_from_the_dated_table(root: Path) -> None:
    done = run(
        root,
        "inspect",
        "1-2",
        "--cost",
        "--json",
        "--phases",
        "dev,review",
        "--delivery",
        "cache-aware",
    )
    assert done.returncode == 0, done.stderr.decode()
    cost = json.loads(done.stdout)
    price = cost["price"]
    assert cost["model"] == price["model"] == "claude-sonnet-4-6"
    assert cost["model_source"] == "ANTHROPIC_MODEL in the environment"
    assert cost["scope"] == "first request of each phase only"
    assert f"prices checked {price['checked']}" in cost["basis"]
    assert price["checked"] and price["source"].startswith("https://")
    dev, review = cost["phases"]
    assert review["cache_write_tokens"] == 0 and review["cache_read_tokens"] > 0
    for phase in cost["phases"]:
        expected = (
            phase["input_tokens"] * price["input"]
            + phase["cache_write_tokens"] * price["cache_write_5m"]
            + phase["cache_read_tokens"] * price["cache_read"]
            + phase["output_tokens"] * price["output"]
        ) / 1e6
        assert abs(phase["dollars"] - expected) < 1e-9
    assert abs(cost["total_dollars"] - dev["dollars"] - review["dollars"]) < 1e-9
    assert "estimate" in cost["estimate"]


def test_a_bad_price_table_is_one_line_and_unknown_cost(root: Path) -> None:
    (root / ".promptdeck" / "config.toml").write_text(
        '[pricing]\nfile = "prices.toml"\n', encoding="utf-8"
    )
    (root / "prices.toml").write_text(
        '[[model]]\nid = "claude-sonnet-4-6"\ninput = 3.0\noutput = -1.0\n'
        "cache_write_5m = 3.75\ncache_write_1h = 6.0\ncache_read = 0.3\n",
        encoding="utf-8",
    )
    done = run(root, "inspect", "1-2", "--cost", "--phases", "dev")
    assert done.returncode == 0
    warnings = [line for line in done.stderr.decode().splitlines() if "price table" in line]
    assert len(warnings) == 1 and "output is not a non-negative number" in warnings[0]
    out = done.stdout.decode()
    assert "cost\tdev\t" in out and "\tunknown\t" in out
    assert "price\tprice unknown for claude-sonnet-4-6: no dollar figure" in out


def test_the_dry_run_confirmation_carries_the_predicted_cost(root: Path) -> None:
    done = run(root, "run", "1-2", "--phase", "dev", "--agent", "claude", "--dry-run", "--json")
    assert done.returncode == 0, done.stderr.decode()
    plan = json.loads(done.stdout)
    assert plan["cost"]["model"] == "claude-sonnet-4-6"
    assert plan["cost"]["dollars"] > 0
    assert plan["cost"]["output_source"].startswith("stated default")
    text = run(root, "run", "1-2", "--phase", "dev", "--agent", "claude", "--dry-run")
    out = text.stdout.decode()
    assert "predicted cost (first request only) $" in out
    assert "model from ANTHROPIC_MODEL in the environment" in out
    assert f"prices checked {plan['cost']['prices_checked']}" in out
    assert "token counts are an estimate" in out


def test_the_replay_simulation_is_never_priced(root: Path) -> None:
    done = run(root, "run", "1-2", "--phase", "dev", "--agent", "replay", "--dry-run", "--json")
    assert done.returncode == 0, done.stderr.decode()
    cost = json.loads(done.stdout)["cost"]
    assert cost["dollars"] is None and cost["model"] == ""
    assert "replay agent runs no client" in cost["unknown"]


def test_runs_show_the_predicted_and_the_actual_cost(root: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    done = run(root, "run", "1-2", "--phase", "dev", "--agent", "replay", "--no-git")
    assert done.returncode == 0, done.stderr.decode()
    listed = json.loads(run(root, "runs", "--json").stdout)["runs"]
    record = listed[0]["cost_record"]
    # A simulation runs no client: no model, so no dollar figure on either side.
    assert record["model"] is None
    assert record["predicted_dollars"] is None and record["actual_dollars"] is None
    assert record["miss_cause"] == ["no_previous_run"]
    # The replay is a simulation: its record is kept, but the table shows it no dollars (its
    # usage is invented, never a cost); a real agent's run shows both figures.
    line = run(root, "runs").stdout.decode().splitlines()[0].split("\t")
    assert line[-3:] == ["—", "—", "-"]


def test_plan_json_rows_are_inspects_and_totals_their_sums(root: Path) -> None:
    done = run(root, "plan", "--epic", "1", "--phases", "kickoff,dev", "--json")
    assert done.returncode == 0, done.stderr.decode()
    plan = json.loads(done.stdout)
    assert [(row["story"], row["phase"]) for row in plan["rows"]] == [
        ("1-2", "kickoff"),
        ("1-2", "dev"),
    ]
    for row in plan["rows"]:
        inspected = json.loads(
            run(root, "inspect", "1-2", "--phase", row["phase"], "--json").stdout
        )
        assert row["system_bytes"] == inspected["system"]["bytes"]
        assert row["system_tokens"] == inspected["system"]["tokens"]
    assert plan["model"] == MODEL
    assert plan["model_source"] == "ANTHROPIC_MODEL in the environment"
    assert plan["basis"].startswith("first request of each phase only · prices checked 20")
    totals = plan["totals"]
    assert totals["system_bytes"] == sum(row["system_bytes"] for row in plan["rows"])
    assert totals["dollars"] == pytest.approx(sum(row["dollars"] for row in plan["rows"]))


def test_plan_piped_prints_one_record_per_row_and_a_total(root: Path) -> None:
    done = run(root, "plan", "--epic", "1", "--phases", "kickoff,dev")
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.decode().splitlines()
    assert [line.split("\t")[:3] for line in lines if line.startswith("row\t")] == [
        ["row", "1-2", "kickoff"],
        ["row", "1-2", "dev"],
    ]
    assert any(line.startswith("total\t(total)\t2 rows") for line in lines)


def test_plan_of_an_unknown_epic_is_one_line_and_exit_2(root: Path) -> None:
    done = run(root, "plan", "--epic", "7")
    assert done.returncode == 2
    assert b"no stories in epic '7'" in done.stderr
    assert b"Traceback" not in done.stderr


def test_show_has_the_cost_record_runs_shows(root: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    done = run(root, "run", "1-2", "--phase", "dev", "--agent", "replay", "--no-git")
    assert done.returncode == 0, done.stderr.decode()
    listed = json.loads(run(root, "runs", "--json").stdout)["runs"][0]
    shown = json.loads(run(root, "show", "last", "--json").stdout)
    assert shown["cost_record"] == listed["cost_record"]
    assert shown["cost_record"]["miss_cause"] == ["no_previous_run"]
    # The replay's usage is invented: like `runs`, the text shows it no dollars.
    text = run(root, "show", "last").stdout.decode()
    assert "predicted — · actual —" in text and "miss     -" in text
    # A real agent's run shows both figures and names the miss, as `runs` does. The replay's
    # record prices nothing, so the run is made a priced one by hand.
    folder = root / ".promptdeck" / "runs" / shown["id"]
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    (folder / "meta.json").write_text(json.dumps({**meta, "simulation": False}), encoding="utf-8")
    cost = json.loads((folder / "cost.json").read_text(encoding="utf-8"))
    cost["model"] = "claude-sonnet-4-6"
    cost["predicted"] = {**cost["predicted"], "dollars": 0.1234, "unknown": None}
    cost["actual"] = {**cost["actual"], "dollars": 0.2345, "unknown": None}
    (folder / "cost.json").write_text(json.dumps(cost), encoding="utf-8")
    text = run(root, "show", "last").stdout.decode()
    predicted, actual = "$0.1234", "$0.2345"
    assert f"predicted {predicted} · actual {actual}" in text
    assert "miss     no_previous_run" in text
    piped = run(root, "runs").stdout.decode().splitlines()[0].split("\t")
    assert piped[-3:] == [predicted, actual, "no_previous_run"]
