"""A run's cost record: what was predicted before it started, what the agent reported after,
and why the cache missed.

``cost.json`` in the run folder is written twice: when the run starts (the model priced, the
predicted :class:`~.prediction.PhaseCost`, and the :class:`~.relation.CacheRelation` to
the project's latest run, with each miss named: ``ttl_expired``, ``prefix_changed@<layer or file>``,
``model_switch``, ``below_minimum``, or ``no_previous_run``), and when it ends (the reported
usage, read strictly by :mod:`promptdeck.core.records.usage`, priced with the same table). Usage
that is missing or invalid leaves the actual cost "unknown", with the reason.

Writing it never fails a run: the run policy calls these through its guarded steps.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..agent_names import is_simulation
from ..atomic import write_whole
from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, read_json_object
from ..project.workspace import Workspace
from ..prompt.request import ComposedPrompt
from ..records.usage import ReportedUsage, reported_usage
from ..tokens.counter import TokenCounter
from ..tokens.pricing import PriceTable, load_prices
from .client_model import ResolvedModel, resolve_model
from .prediction import money, price_unknown
from .relation import COST_FILE, run_prediction
from .reported import reported_models

COST_MAX_BYTES = 256 * 1024


def _write(path: Path, data: dict[str, Any]) -> None:
    write_whole(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=0o600)


def _read(run_dir: Path, root: Path) -> dict[str, Any] | None:
    data = read_json_object(run_dir / COST_FILE, root, limit=COST_MAX_BYTES)
    return None if isinstance(data, TextProblem) else data


def record_prediction(
    workspace: Workspace,
    prompt: ComposedPrompt,
    run_dir: Path,
    agent: str,
    *,
    now: float | None = None,
    counter: TokenCounter | None = None,
    model: ResolvedModel | None = None,
) -> dict[str, Any]:
    """Write the prediction of the run in ``run_dir`` (its prompt, before it starts), priced
    as ``model`` (resolved without the client's version when None)."""
    resolved = model or resolve_model(workspace, agent)
    cost, relation = run_prediction(
        workspace,
        prompt,
        resolved.model,
        counter=counter,
        now=now,
        exclude=run_dir,
        model_source=resolved.source,
    )
    data: dict[str, Any] = {
        "model": resolved.model,
        "model_source": resolved.source,
        "ttl": workspace.config.pricing_ttl,
        "predicted": cost.to_dict(),
        "cache": relation.to_dict(),
        "miss_cause": list(relation.misses),
    }
    _write(run_dir / COST_FILE, data)
    return data


def actual_dollars(
    usage: ReportedUsage, workspace: Workspace, model: str, table: PriceTable | None = None
) -> float | None:
    """What ``usage`` costs at the table's prices for ``model`` (None when it has none)."""
    price = (table or load_prices(workspace)).find(model) if model else None
    if price is None:
        return None
    dollars = (
        usage.input_tokens * price.input
        + usage.cache_write_tokens * price.cache_write(workspace.config.pricing_ttl)
        + usage.cache_read_tokens * price.cache_read
        + usage.output_tokens * price.output
    ) / 1_000_000
    return dollars if math.isfinite(dollars) else None


def _priced(
    workspace: Workspace, run_dir: Path, agent: str, usage: ReportedUsage
) -> tuple[list[str], float | None, str]:
    """The models the client reported, what ``usage`` cost at them, and why it is unknown."""
    reported = reported_models(run_dir, workspace.root, agent)
    models = list(reported.models)
    table = load_prices(workspace)
    if reported.unknown:
        return models, None, reported.unknown
    if reported.usage:
        # Each model's own usage at its own price: a helper model's calls are not billed at
        # the main model's rate, and a model without a price leaves the total unknown.
        total = 0.0
        for model, part in reported.usage.items():
            dollars = actual_dollars(part, workspace, model, table)
            if dollars is None:
                return models, None, price_unknown(model)
            total += dollars
        return models, total, ""
    if len(models) == 1:
        dollars = actual_dollars(usage, workspace, models[0], table)
        return models, dollars, "" if dollars is not None else price_unknown(models[0])
    if not models:
        return models, None, "model unknown: the client's stream names none"
    return models, None, f"the stream names {len(models)} models and no usage per model"


def record_actual(workspace: Workspace, run_dir: Path, agent: str) -> dict[str, Any] | None:
    """Add what the agent reported to the run's record (None when it has no prediction): its
    usage, the models its client said it used, and that usage priced at those models."""
    data = _read(run_dir, workspace.root)
    if data is None:
        return None
    usage = reported_usage(run_dir, workspace.root, agent)
    if is_simulation(agent):
        # Invented usage is no bill: kept for the record, never priced.
        counts = {} if isinstance(usage, str) else usage.to_dict()
        data["actual"] = {
            **counts,
            "models": [],
            "dollars": None,
            "unknown": f"the {agent} agent is a simulation: its usage is invented, not billed",
        }
    elif isinstance(usage, str):
        data["actual"] = {"dollars": None, "unknown": usage, "models": []}
    else:
        models, dollars, unknown = _priced(workspace, run_dir, agent, usage)
        data["actual"] = {
            **usage.to_dict(),
            "models": models,
            "dollars": dollars,
            "unknown": unknown or None,
        }
    _write(run_dir / COST_FILE, data)
    return data


@dataclass(frozen=True)
class CostRecord:
    """A run's cost record as read back.

    Attributes:
        model: the model the prediction priced ("" when unknown).
        predicted: the predicted dollars, None when unknown.
        actual: the reported usage priced, None when unknown (or the run has not ended).
        actual_unknown: why the actual cost is unknown ("" when known or not yet reported).
        misses: the named cache misses.
        reported: True once the run's end was recorded.
        used: the models the client reported using (empty until the end, or when it named
            none).
    """

    model: str
    predicted: float | None
    actual: float | None
    actual_unknown: str
    misses: tuple[str, ...]
    reported: bool
    used: tuple[str, ...] = ()

    def describe(self) -> str:
        """``predicted $0.0412 · actual $0.0388 (claude-opus-4-8) · miss ttl_expired``."""
        miss = f" · miss {', '.join(self.misses)}" if self.misses else ""
        return f"predicted {money(self.predicted)} · actual {self.actual_forms()[0]}{miss}"

    def actual_forms(self) -> tuple[str, ...]:
        """The reported cost as a table cell shows it, longest form first: the dollars and the
        models the client reported (``$0.0388 (claude-opus-4-8)``), the dollars alone, to the
        cent (``$0.04``); ``—`` until the run's end is recorded."""
        if not self.reported:
            return ("—",)
        dollars = money(self.actual)
        forms = [dollars]
        if self.actual is not None and dollars.startswith("$"):
            forms.append(f"${self.actual:.2f}")
        if self.used:
            forms.insert(0, f"{dollars} ({', '.join(self.used)})")
        return tuple(dict.fromkeys(forms))

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape in ``runs --json``."""
        return {
            "model": self.model or None,
            "models_used": list(self.used),
            "predicted_dollars": self.predicted,
            "actual_dollars": self.actual,
            "actual_unknown": self.actual_unknown or None,
            "miss_cause": list(self.misses),
        }


def _dollars(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def read_cost(run_dir: Path, root: Path) -> CostRecord | None:
    """The run's cost record, read through the guarded reader; None when it has none. A
    figure that is not a finite, non-negative number reads as unknown."""
    data = _read(run_dir, root)
    if data is None:
        return None
    predicted = data.get("predicted")
    actual = data.get("actual")
    misses = data.get("miss_cause")
    used = actual.get("models") if isinstance(actual, dict) else None
    return CostRecord(
        model=str(data.get("model") or ""),
        predicted=_dollars(predicted.get("dollars")) if isinstance(predicted, dict) else None,
        actual=_dollars(actual.get("dollars")) if isinstance(actual, dict) else None,
        actual_unknown=str(actual.get("unknown") or "") if isinstance(actual, dict) else "",
        misses=tuple(str(m) for m in misses) if isinstance(misses, list) else (),
        reported=isinstance(actual, dict),
        used=tuple(m for m in used if isinstance(m, str) and m.isprintable())
        if isinstance(used, list)
        else (),
    )
