"""One schema for a run: meta.json and result.json written by the runner read back into the
same types, old records still read, and the result built in one place."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from promptdeck.core.agents.base import Usage
from promptdeck.core.phases.signals import Signal
from promptdeck.core.records.reader import list_runs
from promptdeck.core.records.schema import RunMeta, RunResult
from promptdeck.core.records.writer import RunRecord
from promptdeck.core.run.policy import RunPolicy
from promptdeck.core.run.prepare import prepare_run
from promptdeck.core.run.runner import start_run
from test_runner import WAIT, compose, make_workspace

META_KEYS = [
    "run_id",
    "story",
    "story_title",
    "story_path",
    "epic",
    "phase",
    "attempt",
    "mode",
    "retry_reason",
    "variant",
    "agent",
    "simulation",
    "argv",
    "cwd",
    "env_names",
    "stdin_bytes",
    "system_channel",
    "started",
    "started_ts",
    "pid",
    "timeout_s",
    "git",
    "sha_before",
    "signature",
    "layers",
    "instructions_sha256",
    "rules",
    "system_bytes",
    "user_bytes",
    "resume_session",
    "turn",
    "images",
    "status_at_start",
]
"""meta.json's keys, in order, as records have always had them (``rules_alert`` is added
only when an alert was due, ``left_out`` only when a candidate file was left out)."""

RESULT_KEYS = [
    "run_id",
    "story",
    "phase",
    "attempt",
    "mode",
    "agent",
    "outcome",
    "exit_code",
    "process_exit",
    "duration_s",
    "signal",
    "signals",
    "message",
    "usage",
    "cost_usd",
    "context_tokens",
    "context_window",
    "session_id",
    "sha_before",
    "sha_after",
    "staged_stat",
    "commit",
    "story_rewritten",
    "warnings",
    "simulation",
    "git_output",
    "changed_paths",
]
"""result.json's keys, in order, as records have always had them."""

CORE = Path(__file__).resolve().parents[2] / "core"


def test_a_run_writes_the_same_keys_and_reads_back_into_the_same_values(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    prompt = compose(ws)
    prepared = prepare_run(ws, prompt, agent="replay")
    result = start_run(ws, prompt, agent="replay", prepared=prepared).wait(WAIT)
    meta_json = json.loads((result.run_dir / "meta.json").read_text(encoding="utf-8"))
    result_json = json.loads((result.run_dir / "result.json").read_text(encoding="utf-8"))
    left_out = [item for item in prompt.injection.files if not item.included]
    assert left_out, "the workspace has a file the injection leaves out"
    assert list(meta_json) == [*META_KEYS, "left_out"]
    assert meta_json["left_out"] == [
        {"path": f.path, "category": f.category, "status": f.status, "why": f.reason}
        for f in left_out
    ]
    assert list(result_json) == RESULT_KEYS
    # The launch block is the spec's own, as ``run --dry-run`` prints it.
    launch = prepared.spec.to_dict()
    assert {key: meta_json[key] for key in launch} == launch

    [info] = list_runs(tmp_path)
    assert info.run_meta.to_dict() == meta_json
    assert list(info.run_meta.to_dict()) == [*META_KEYS, "left_out"]
    read = info.run_result
    assert read is not None
    assert read.to_dict() == result.to_dict() == result_json
    assert read.signals == result.signals and len(read.signals) == 1
    assert read.signal == result.signal and read.usage == result.usage
    assert read.run_dir == result.run_dir and read.changed_paths == result.changed_paths
    assert info.outcome == result.outcome == "success"


def test_an_old_record_missing_later_keys_still_reads(tmp_path: Path) -> None:
    # The shape of an early record: no variant, images, rules, status, simulation flag,
    # changed paths or reasoning tokens; and a key this schema has never named.
    record = RunRecord.create(tmp_path, "1-2", "review")
    old_meta = {
        "run_id": record.id,
        "story": "1-2",
        "phase": "review",
        "attempt": 2,
        "mode": "optimize",
        "agent": "claude",
        "argv": ["claude", "-p"],
        "env_names": ["A"],
        "started": "2025-01-02T03:04:05.000+00:00",
        "started_ts": 1735787045,
        "pid": 2**22 + 1,
        "legacy_note": "kept",
    }
    old_result = {
        "outcome": "failure",
        "exit_code": 4,
        "duration_s": 12.5,
        "signal": {"name": "REVIEW FAILED", "kind": "review-failed", "reason": "tests"},
        "signals": 1,
        "message": "REVIEW FAILED: tests",
        "usage": {"input": 10, "output": 5, "cache_read": 1, "cache_creation": 0},
        "cost_usd": 0.25,
        "warnings": ["w"],
    }
    record.write_meta(old_meta)
    record.write_result(old_result)
    record.close()

    [info] = list_runs(tmp_path)
    meta = info.run_meta
    assert (meta.story, meta.phase, meta.attempt, meta.mode) == ("1-2", "review", 2, "optimize")
    assert (meta.variant, meta.images, meta.rules, meta.simulation) == ("standard", (), None, False)
    assert meta.argv == ("claude", "-p") and meta.started_ts == 1735787045.0
    assert meta.extra == {"legacy_note": "kept"}
    assert meta.to_dict()["legacy_note"] == "kept"
    result = info.run_result
    assert result is not None
    assert (result.outcome, result.exit_code, result.duration_s) == ("failure", 4, 12.5)
    # What the result lacks comes from the meta.
    assert (result.story_id, result.phase, result.attempt, result.agent) == (
        "1-2",
        "review",
        2,
        "claude",
    )
    assert result.signal is not None and result.signal.reason == "tests"
    assert result.usage == Usage(10, 5, 1, 0, 0)
    assert result.changed_paths is None and result.warnings == ("w",)
    row = info.to_dict()
    assert (row["outcome"], row["signal"], row["reason"], row["duration_s"]) == (
        "failure",
        "REVIEW FAILED",
        "tests",
        12.5,
    )


def test_ill_typed_values_take_their_defaults() -> None:
    meta = RunMeta.from_dict(
        {"story": "1-2", "attempt": "two", "started_ts": "soon", "argv": "claude", "git": 1}
    )
    assert (meta.attempt, meta.started_ts, meta.argv, meta.git) == (1, 0.0, (), False)
    result = RunResult.from_dict(
        {"outcome": "timeout", "duration_s": True, "usage": [1], "changed_paths": {"a": 3}},
        Path("/runs/x"),
    )
    assert (result.exit_code, result.duration_s, result.usage) == (5, 0.0, None)
    assert result.changed_paths == {} and result.run_id == "x"


def test_a_result_naming_no_known_outcome_is_unknown_not_a_guess(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown outcome"):
        RunResult.from_dict({"outcome": "exploded"}, tmp_path)
    record = RunRecord.create(tmp_path, "1-2", "dev")
    record.write_meta({"story": "1-2", "phase": "dev"})
    record.write_result({"outcome": "exploded"})
    record.close()
    [info] = list_runs(tmp_path)
    assert info.run_result is None and info.outcome == "unknown"


def test_signals_come_back_from_signals_jsonl(tmp_path: Path) -> None:
    signal = Signal("IMPLEMENTATION COMPLETE", "implementation-complete", "success", "dev", "x")
    record = RunRecord.create(tmp_path, "1-2", "dev")
    record.write_meta({"story": "1-2", "phase": "dev"})
    record.append_signal(signal.to_dict(), 0.0)
    record.write_result({"outcome": "success", "signal": signal.to_dict(), "signals": 1})
    record.close()
    [info] = list_runs(tmp_path)
    assert info.run_result is not None and info.run_result.signals == (signal,)
    assert info.run_signal == signal


def test_a_run_result_is_built_in_one_place() -> None:
    builders = []
    for path in sorted(CORE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "RunResult"
            ):
                builders.append(path.name)
    assert builders == ["policy.py"]


def test_a_settling_that_fails_twice_still_ends_the_run_as_crashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: RunPolicy, *args: object) -> RunResult:
        raise RuntimeError("settling broke")

    monkeypatch.setattr(RunPolicy, "settle", broken)
    ws = make_workspace(tmp_path)
    result = start_run(ws, compose(ws), agent="replay").wait(WAIT)
    assert (result.outcome, result.exit_code) == ("crashed", 5)
    assert result.message == "internal error: settling broke; then: settling broke"
    assert result.sha_before is not None and result.simulation is True
    saved = json.loads((result.run_dir / "result.json").read_text(encoding="utf-8"))
    assert saved == result.to_dict()
