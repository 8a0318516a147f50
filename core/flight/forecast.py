"""A whole phase's cost, turns and peak context, forecast with ranges from this project's runs.

Only real runs count: finished (a result recorded), not chat turns, never the replay agent's
simulated ones. For a phase and a model, the forecast is the p10, p50 and p90 of what those runs
did — whole-phase cost (their ``cost.json`` actual), requests (their turn lists, subagents'
included) and peak context — with the number of runs it stands on. With no such run it is the
first request's estimate alone, labelled so.

:func:`backtest` replays the forecast leave-one-out: each run forecast from the others of its
phase and model, then the share of actuals inside p10–p90 and the median error of the p50.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..cost.epic import EpicPlan
from ..cost.prediction import money
from ..cost.record import read_cost
from ..lean_dataclass import dataclass
from ..records.reader import RunInfo, list_runs
from .store import turns_of

NO_HISTORY = "first request only, no history"


@dataclass(frozen=True)
class Sample:
    """What one finished real run did."""

    run_id: str
    phase: str
    model: str
    dollars: float | None
    requests: int
    peak_context: int | None


@dataclass(frozen=True)
class Range:
    """p10, p50 and p90 of a figure over ``n`` runs."""

    p10: float
    p50: float
    p90: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {"p10": self.p10, "p50": self.p50, "p90": self.p90, "n": self.n}


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (linear between the closest ranks)."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * q
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def value_range(values: Iterable[float | int | None]) -> Range | None:
    """The range of the known ``values``; None when there is none."""
    known = [float(v) for v in values if v is not None]
    if not known:
        return None
    return Range(quantile(known, 0.1), quantile(known, 0.5), quantile(known, 0.9), len(known))


@dataclass(frozen=True)
class PhaseForecast:
    """A whole phase's forecast for one model.

    Attributes:
        phase: the phase.
        model: the model.
        n: the runs it stands on (0: none, the first request's estimate alone).
        cost: whole-phase dollars; None when no run's cost is known.
        requests: requests per phase.
        peak_context: the largest prompt of a phase, in tokens.
        first_request: the first request's estimated dollars (the prediction), when given.
    """

    phase: str
    model: str
    n: int
    cost: Range | None
    requests: Range | None
    peak_context: Range | None
    first_request: float | None = None

    def describe(self) -> str:
        """One line: the ranges with n, or the first request's estimate labelled."""
        if self.n == 0:
            return f"{self.phase} whole phase: {money(self.first_request)} ({NO_HISTORY})"
        parts = []
        if self.cost is not None:
            parts.append(f"cost p50 {money(self.cost.p50)} · p90 {money(self.cost.p90)}")
        if self.requests is not None:
            parts.append(f"requests p50 {self.requests.p50:.0f} · p90 {self.requests.p90:.0f}")
        if self.peak_context is not None:
            parts.append(
                f"peak context p50 {self.peak_context.p50:,.0f} · p90 {self.peak_context.p90:,.0f}"
            )
        runs = "run" if self.n == 1 else "runs"
        return f"{self.phase} whole phase ({self.model}, n={self.n} {runs}): " + "; ".join(parts)

    def cell(self) -> str:
        """A table cell: ``p50 $0.30 · p90 $0.46 (n=5)``, or ``first request only, no
        history``."""
        if self.n == 0:
            return NO_HISTORY
        if self.cost is None:
            return f"cost unknown (n={self.n})"
        return f"p50 {money(self.cost.p50)} · p90 {money(self.cost.p90)} (n={self.n})"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "phase": self.phase,
            "model": self.model,
            "n": self.n,
            "cost": self.cost.to_dict() if self.cost else None,
            "requests": self.requests.to_dict() if self.requests else None,
            "peak_context_tokens": self.peak_context.to_dict() if self.peak_context else None,
            "first_request_dollars": self.first_request,
            "label": NO_HISTORY if self.n == 0 else f"n={self.n}",
        }


def _real(run: RunInfo) -> bool:
    meta = run.run_meta
    return (
        run.result is not None
        and not meta.simulation
        and meta.agent not in (None, "simulation")
        and meta.mode != "chat"
        and not bool(run.result.get("simulation"))
    )


def samples(root: Path, runs: Iterable[RunInfo] | None = None) -> list[Sample]:
    """What each finished real run of the project did, oldest first."""
    found: list[Sample] = []
    for run in list_runs(root) if runs is None else runs:
        if not _real(run):
            continue
        cost = read_cost(run.dir, root.resolve())
        turns = turns_of(run.dir, root, run.run_meta.agent or "", run.run_meta.cwd, keep=False)
        found.append(
            Sample(
                run.id,
                run.phase,
                cost.model if cost is not None else "",
                cost.actual if cost is not None else None,
                turns.request_count,
                turns.peak_context,
            )
        )
    return found


def forecast_from(
    history: Sequence[Sample], phase: str, model: str, first_request: float | None = None
) -> PhaseForecast:
    """The forecast for ``phase`` on ``model`` from ``history`` (other models' runs not used;
    an unknown model, ``""``, learns from none)."""
    same = [s for s in history if model and s.phase == phase and s.model == model]
    return PhaseForecast(
        phase,
        model,
        len(same),
        value_range(s.dollars for s in same),
        value_range(s.requests for s in same if s.requests),
        value_range(s.peak_context for s in same),
        first_request,
    )


def phase_forecast(
    root: Path, phase: str, model: str, first_request: float | None = None
) -> PhaseForecast:
    """The forecast for ``phase`` on ``model`` from this project's finished real runs."""
    return forecast_from(samples(root), phase, model, first_request)


@dataclass(frozen=True)
class EpicForecast:
    """An epic plan's rows, each with its phase's whole-phase forecast, and the total's range.

    Attributes:
        rows: one forecast per row of the plan, in its order (a row's first request is its
            own predicted cost).
        p50: the sum of the p50 cost of the rows that can be sent and have history; None
            when none has.
        p90: the same of their p90 (a sum of p90s: wider than the p90 of the sum).
        with_history: how many rows that can be sent have a recorded history.
        sendable: how many rows can be sent (the plan's total counts these).
    """

    rows: tuple[PhaseForecast, ...]
    p50: float | None
    p90: float | None
    with_history: int
    sendable: int

    def describe(self) -> str:
        """One line for the epic's total: its range where history exists, else why none."""
        if self.p50 is None or self.p90 is None:
            return f"whole phases: no recorded run of these phases on this model ({NO_HISTORY})"
        rest = self.sendable - self.with_history
        tail = f"; {rest} row(s) without history: {NO_HISTORY}" if rest else ""
        return (
            f"whole phases p50 {money(self.p50)} · p90 {money(self.p90)} "
            f"over the {self.with_history} of {self.sendable} rows with recorded runs "
            f"(each row's p50 and p90 added){tail}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``plan --epic --json``'s ``forecast``)."""
        return {
            "rows": [row.to_dict() for row in self.rows],
            "total": {
                "p50": self.p50,
                "p90": self.p90,
                "rows_with_history": self.with_history,
                "rows_sendable": self.sendable,
                "label": self.describe(),
            },
        }


def epic_forecast(
    root: Path, plan: EpicPlan, history: Sequence[Sample] | None = None
) -> EpicForecast:
    """Each row of ``plan`` with its phase's whole-phase forecast on the plan's model, learned
    once from this project's finished real runs (``history`` when given)."""
    known = samples(root) if history is None else history
    by_phase: dict[str, PhaseForecast] = {}
    rows = []
    for row in plan.rows:
        found = by_phase.get(row.phase)
        if found is None:
            found = by_phase[row.phase] = forecast_from(known, row.phase, plan.model)
        rows.append(replace(found, first_request=row.cost.dollars))
    sendable = [(row, f) for row, f in zip(plan.rows, rows, strict=True) if not row.too_large]
    ranged = [f.cost for _, f in sendable if f.cost is not None]
    return EpicForecast(
        tuple(rows),
        sum(r.p50 for r in ranged) if ranged else None,
        sum(r.p90 for r in ranged) if ranged else None,
        len(ranged),
        len(sendable),
    )


@dataclass(frozen=True)
class Backtest:
    """The forecast replayed leave-one-out.

    Attributes:
        tried: runs forecast from the others of their phase and model.
        skipped: runs with no other run to learn from, or no known cost.
        inside: runs whose actual cost fell within p10–p90.
        errors: each tried run's relative error of the p50 (|p50 − actual| / actual).
    """

    tried: int
    skipped: int
    inside: int
    errors: tuple[float, ...]

    @property
    def coverage(self) -> float | None:
        """The share of actuals inside p10–p90; None when nothing was tried."""
        return self.inside / self.tried if self.tried else None

    @property
    def median_error(self) -> float | None:
        """The median relative error of the p50; None when there is none."""
        return statistics.median(self.errors) if self.errors else None

    def describe(self) -> str:
        """One line for ``plan --backtest``."""
        if not self.tried:
            return f"backtest: no run could be forecast from others ({self.skipped} skipped)"
        error = self.median_error
        shown = f"{error:.0%}" if error is not None else "unknown"
        return (
            f"backtest over {self.tried} runs: coverage {self.inside}/{self.tried} "
            f"({self.coverage:.0%}) inside p10–p90; median error of p50 {shown}; "
            f"{self.skipped} skipped"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "tried": self.tried,
            "skipped": self.skipped,
            "inside": self.inside,
            "coverage": self.coverage,
            "median_error": self.median_error,
        }


def backtest_samples(history: Sequence[Sample], phase: str | None = None) -> Backtest:
    """Each run of ``history`` (of ``phase`` when given) forecast from the others."""
    tried = skipped = inside = 0
    errors: list[float] = []
    for index, sample in enumerate(history):
        if phase is not None and sample.phase != phase:
            continue
        others = [*history[:index], *history[index + 1 :]]
        predicted = forecast_from(others, sample.phase, sample.model).cost
        if predicted is None or sample.dollars is None:
            skipped += 1
            continue
        tried += 1
        if predicted.p10 <= sample.dollars <= predicted.p90:
            inside += 1
        if sample.dollars > 0:
            errors.append(abs(predicted.p50 - sample.dollars) / sample.dollars)
    return Backtest(tried, skipped, inside, tuple(errors))


def backtest(root: Path, phase: str | None = None) -> Backtest:
    """:func:`backtest_samples` over this project's finished real runs."""
    return backtest_samples(samples(root), phase)
