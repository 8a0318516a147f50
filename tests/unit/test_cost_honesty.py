"""Cost figures that say what they rest on: simulated runs feed nothing, a calibration stays
within a tokenizer's ratio, the cache a next run reads and the actual cost follow the models
the client reported using."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _prompt_workspace import make_workspace
from builders import write_files
from promptdeck.core.cost.estimate import DEFAULT_FACTOR, calibrate
from promptdeck.core.cost.prediction import expected_output, forecast
from promptdeck.core.cost.record import read_cost, record_actual
from promptdeck.core.cost.relation import previous_run
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace

SONNET = "claude-sonnet-4-6"
OPUS = "claude-opus-4-8"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = make_workspace(tmp_path, {"AGENTS.md": "# Rules\n\n- Keep it small.\n"})
    return Workspace(root=root.resolve(), config=Config())


def add_run(
    root: Path,
    run_id: str,
    *,
    agent: str = "claude",
    output: int = 900,
    cost: dict[str, object] | None = None,
    started: float = 1000.0,
) -> Path:
    folder = root / ".promptdeck" / "runs" / run_id
    files: dict[str, str] = {
        "meta.json": json.dumps(
            {"story": "1-2", "phase": "dev", "agent": agent, "started_ts": started}
        ),
        "result.json": json.dumps({"outcome": "success", "usage": {"input": 10, "output": output}}),
        "system.md": "You are the developer.\n" * 200,
    }
    if cost is not None:
        files["cost.json"] = json.dumps(cost)
    write_files(folder, files)
    return folder


def sent(sent_tokens: int, reported: int, model: str = SONNET) -> dict[str, object]:
    return {
        "model": model,
        "predicted": {
            "input_tokens": 100,
            "cache_write_tokens": sent_tokens - 100,
            "cache_read_tokens": 0,
        },
        "actual": {
            "input_tokens": 10,
            "cache_write_tokens": reported - 10,
            "cache_read_tokens": 0,
            "output_tokens": 50,
        },
    }


def test_simulated_runs_feed_no_output_median_and_leave_no_cache(workspace: Workspace) -> None:
    add_run(workspace.root, "r1", agent="replay", output=77)
    assert expected_output(workspace, "dev") == (4000, "stated default 4,000 (no real run yet)")
    # A simulation sent nothing to a provider: it left no cache for the next run to read.
    assert previous_run(workspace) is None
    add_run(workspace.root, "r2", agent="claude", output=900, started=500.0)
    assert expected_output(workspace, "dev") == (900, "median of 1 real dev run(s)")
    found = previous_run(workspace)
    assert found is not None and found.run_id == "r2"


def test_a_ratio_beyond_a_tokenizers_is_not_calibrated_and_says_so(workspace: Workspace) -> None:
    # 3,799 tokens counted, 449,620 reported: the run's every call, not the tokenizer (×118).
    add_run(workspace.root, "r1", cost=sent(3799, 449_620))
    calibration = calibrate(workspace, SONNET)
    assert calibration.factor == DEFAULT_FACTOR and calibration.runs == 0
    assert calibration.rejected == 1 and "not calibrated" in calibration.source
    add_run(workspace.root, "r2", cost=sent(1000, 1400))
    calibrated = calibrate(workspace, SONNET)
    assert calibrated.runs == 1 and calibrated.factor == pytest.approx(1.4)
    assert calibrated.rejected == 1


def test_a_simulated_run_never_calibrates(workspace: Workspace) -> None:
    add_run(workspace.root, "r1", agent="replay", cost=sent(1000, 1400))
    assert calibrate(workspace, SONNET).runs == 0


def test_the_cache_a_next_run_reads_follows_the_model_the_client_used(
    workspace: Workspace,
) -> None:
    record = sent(1000, 1400)
    record["actual"] = {**record["actual"], "models": [OPUS]}  # type: ignore[dict-item]
    add_run(workspace.root, "r1", cost=record)
    found = previous_run(workspace)
    assert found is not None and found.model == OPUS


CLAUDE_STREAM = [
    {"type": "assistant", "message": {"model": OPUS, "content": []}},
    {
        "type": "result",
        "usage": {
            "input_tokens": 100,
            "cache_creation_input_tokens": 2000,
            "cache_read_input_tokens": 0,
            "output_tokens": 300,
        },
        "modelUsage": {
            OPUS: {
                "inputTokens": 100,
                "cacheCreationInputTokens": 2000,
                "cacheReadInputTokens": 0,
                "outputTokens": 300,
            }
        },
    },
]


def test_the_actual_cost_is_priced_at_the_model_the_stream_names(workspace: Workspace) -> None:
    folder = add_run(workspace.root, "r1", cost={"model": SONNET, "predicted": {"dollars": 0.1}})
    (folder / "stream.jsonl").write_text(
        "\n".join(json.dumps(event) for event in CLAUDE_STREAM) + "\n", encoding="utf-8"
    )
    data = record_actual(workspace, folder, "claude")
    assert data is not None and data["actual"]["models"] == [OPUS]
    # Opus 4.8's prices, not the predicted Sonnet's: 100×5 + 2000×6.25 + 300×25 per million.
    assert data["actual"]["dollars"] == pytest.approx((500 + 12_500 + 7_500) / 1e6)
    shown = read_cost(folder, workspace.root)
    assert shown is not None and shown.used == (OPUS,) and f"({OPUS})" in shown.describe()


def test_a_stream_without_a_model_or_with_bad_counts_is_unknown(workspace: Workspace) -> None:
    folder = add_run(workspace.root, "r1", cost={"model": SONNET, "predicted": {"dollars": 0.1}})
    nameless = [CLAUDE_STREAM[1] | {"modelUsage": None}]
    (folder / "stream.jsonl").write_text(json.dumps(nameless[0]) + "\n", encoding="utf-8")
    data = record_actual(workspace, folder, "claude")
    assert data is not None and data["actual"]["dollars"] is None
    assert data["actual"]["unknown"] == "model unknown: the client's stream names none"
    broken = json.loads(json.dumps(CLAUDE_STREAM))
    broken[1]["modelUsage"][OPUS]["outputTokens"] = "300"
    (folder / "stream.jsonl").write_text(
        "\n".join(json.dumps(event) for event in broken) + "\n", encoding="utf-8"
    )
    data = record_actual(workspace, folder, "claude")
    assert data is not None and data["actual"]["dollars"] is None
    assert "outputTokens is not a whole number" in data["actual"]["unknown"]


def test_each_forecast_states_its_scope_and_basis(workspace: Workspace) -> None:
    _, predicted = forecast(workspace, "1-2", SONNET, phases=("dev",), model_source="--model")
    shown = predicted.to_dict()
    assert shown["scope"] == "first request of each phase only"
    assert shown["basis"].startswith("first request of each phase only · prices checked 20")
    assert "model claude-sonnet-4-6 from --model" in shown["basis"]
    assert "output: stated default 4,000 (no real run yet)" in shown["basis"]
    _, unknown = forecast(workspace, "1-2", "", phases=("dev",), model_source="claude default: x")
    assert unknown.total is None
    assert unknown.phases[0].unknown == "model unknown (claude default: x)"
