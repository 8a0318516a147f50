"""Whole-phase forecasts with ranges, learned from the project's real finished runs only, and
their leave-one-out backtest."""

from __future__ import annotations

from pathlib import Path

from flight_runs import claude_stream, write_run
from promptdeck.core.flight import NO_HISTORY, backtest, phase_forecast
from promptdeck.core.flight.forecast import Sample, backtest_samples, quantile


def _runs(root: Path, dollars: list[float], tag: str = "r", **kwargs: object) -> None:
    for n, value in enumerate(dollars):
        run_id = f"20250101-0000{n:02d}-000000-dev-1-2-{tag}{n:03d}"
        write_run(root, run_id, claude_stream(str(root)), dollars=value, **kwargs)  # type: ignore[arg-type]


def test_quantiles_interpolate_between_ranks() -> None:
    assert quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.5) == 3.0
    assert quantile([1.0, 2.0], 0.9) == 1.9
    assert quantile([7.0], 0.1) == 7.0


def test_with_no_history_the_first_request_alone_is_labelled(tmp_path: Path) -> None:
    forecast = phase_forecast(tmp_path, "dev", "claude-sonnet-4-6", 0.05)
    assert forecast.n == 0
    assert forecast.describe() == f"dev whole phase: $0.0500 ({NO_HISTORY})"


def test_ranges_come_from_real_finished_runs_only(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    _runs(root, [0.10, 0.20, 0.30, 0.40, 0.50])
    _runs(root, [9.0, 9.0, 9.0], tag="s", simulation=True)
    forecast = phase_forecast(root, "dev", "claude-sonnet-4-6")
    assert forecast.n == 5
    assert forecast.cost is not None and forecast.cost.p50 == 0.30
    assert forecast.requests is not None and forecast.requests.p50 == 5
    assert forecast.peak_context is not None and forecast.peak_context.p90 == 5428
    assert "n=5 runs" in forecast.describe()
    assert phase_forecast(root, "dev", "gpt-5.5").n == 0


def test_backtest_over_twelve_recorded_runs_prints_its_coverage(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    _runs(root, [0.10 + 0.02 * n for n in range(12)])
    result = backtest(root)
    assert result.tried == 12
    # The two extremes fall outside any leave-one-out p10–p90 of the others.
    assert result.inside <= 10 and result.coverage is not None
    assert result.describe().startswith("backtest over 12 runs: coverage")


def test_backtest_of_a_single_run_has_nothing_to_learn_from() -> None:
    history = [Sample("a", "dev", "m", 1.0, 3, 100)]
    result = backtest_samples(history)
    assert (result.tried, result.skipped) == (0, 1)
    assert "no run could be forecast" in result.describe()
