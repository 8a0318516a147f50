"""Reported usage read strictly: every priced field present and a finite, non-negative whole
number, else "unknown" with the reason; a cost record's bad figures read as unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from promptdeck.core.cost.record import read_cost
from promptdeck.core.records.usage import ReportedUsage, reported_usage, token_count


def _stream(folder: Path, *events: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
    (folder / "stream.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


CLAUDE_USAGE = {
    "input_tokens": 12,
    "cache_creation_input_tokens": 3_000,
    "cache_read_input_tokens": 40_000,
    "output_tokens": 900,
}


def test_claude_result_usage_is_read_whole(tmp_path: Path) -> None:
    run = _stream(
        tmp_path / "r",
        {"type": "system", "subtype": "init"},
        "not json at all",
        {"type": "result", "usage": CLAUDE_USAGE},
    )
    assert reported_usage(run, tmp_path, "claude") == ReportedUsage(12, 3_000, 40_000, 900)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("cache_read_input_tokens", None, "cache_read_input_tokens is missing"),
        ("output_tokens", -5, "output_tokens is invalid"),
        ("input_tokens", "12", "input_tokens is invalid"),
        ("input_tokens", True, "input_tokens is invalid"),
        ("output_tokens", 1.5, "output_tokens is invalid"),
    ],
)
def test_a_missing_or_invalid_field_is_unknown_never_a_guess(
    tmp_path: Path, field: str, value: object, reason: str
) -> None:
    usage = dict(CLAUDE_USAGE)
    if value is None:
        del usage[field]
    else:
        usage[field] = value
    run = _stream(tmp_path / "r", {"type": "result", "usage": usage})
    found = reported_usage(run, tmp_path, "claude")
    assert isinstance(found, str) and reason in found


def test_non_finite_numbers_are_not_counts() -> None:
    assert token_count(float("inf")) is None
    assert token_count(float("nan")) is None
    assert token_count(12.0) == 12
    assert token_count(0) == 0


def test_codex_turns_are_summed_and_cached_input_split_out(tmp_path: Path) -> None:
    turn = {"input_tokens": 10_000, "cached_input_tokens": 8_000, "output_tokens": 300}
    run = _stream(
        tmp_path / "r",
        {"type": "turn.completed", "usage": turn},
        {"type": "turn.completed", "usage": dict(turn, cached_input_tokens=9_000)},
    )
    assert reported_usage(run, tmp_path, "codex") == ReportedUsage(3_000, 0, 17_000, 600)
    bad = _stream(
        tmp_path / "b",
        {"type": "turn.completed", "usage": dict(turn, cached_input_tokens=20_000)},
    )
    found = reported_usage(bad, tmp_path, "codex")
    assert isinstance(found, str) and "exceeds" in found


def test_no_stream_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    found = reported_usage(tmp_path / "r", tmp_path, "claude")
    assert isinstance(found, str) and found.startswith("stream.jsonl:")


def test_a_cost_record_with_bad_figures_reads_them_as_unknown(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    (run / "cost.json").write_text(
        '{"model": "m", "predicted": {"dollars": -1}, "actual": {"dollars": 1e999},'
        ' "miss_cause": ["ttl_expired"]}',
        encoding="utf-8",
    )
    record = read_cost(run, tmp_path)
    assert record is not None
    assert record.predicted is None and record.actual is None and record.reported
    assert record.describe() == "predicted unknown · actual unknown · miss ttl_expired"
    (run / "cost.json").write_text("[1, 2", encoding="utf-8")
    assert read_cost(run, tmp_path) is None


def test_the_actual_cost_cell_names_the_models_the_client_reported() -> None:
    from promptdeck.core.cost import CostRecord

    used = CostRecord("m", 0.0412, 0.0388, "", (), True, ("claude-opus-4-8",))
    assert used.actual_forms() == ("$0.0388 (claude-opus-4-8)", "$0.0388", "$0.04")
    assert used.describe() == "predicted $0.0412 · actual $0.0388 (claude-opus-4-8)"
    assert CostRecord("m", None, 0.0388, "", (), False).actual_forms() == ("—",)
    unknown = CostRecord("m", None, None, "price unknown for m", (), True, ("m",))
    assert unknown.actual_forms() == ("unknown (m)", "unknown")
