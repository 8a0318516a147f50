"""How a prompt about to be sent stands to the prompt cache the project's latest run left.

A run reads from the cache what its system prompt shares with the system prompt the project's
latest run sent — if that run finished within the cache's lifetime, on the same model, and the
shared prefix reaches the model's minimum. :func:`cache_relation` measures it and names each
reason the rest will be written again (``ttl_expired``, ``prefix_changed@<layer or file>``,
``model_switch``, ``below_minimum``, ``no_previous_run``); :func:`run_prediction` prices the
run on it (the run confirmation's figure, and the prediction a run records at launch).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, read_text
from ..project.workspace import Workspace
from ..prompt.request import ComposedPrompt
from ..records.reader import RunInfo, list_runs
from ..tokens.counter import TokenCounter, get_counter
from ..tokens.pricing import TTL_SECONDS, ModelPrice, PriceTable, load_prices
from .prediction import (
    PhaseCost,
    expected_output,
    price_prompt,
    price_unknown,
    simulated,
    table_problem,
)
from .prefix import common_prefix_bytes, part_at

COST_FILE = "cost.json"
"""The run folder's record of its predicted and actual cost (see :mod:`.record`)."""


@dataclass(frozen=True)
class PreviousRun:
    """The run a new one may read the cache of: the project's latest that recorded its system
    prompt.

    Attributes:
        run_id: its id.
        finished: when its last request was sent, epoch seconds (its start plus its duration;
            its start while it has no result).
        system: the system prompt it sent.
        model: the model the client reported using (its stream, recorded at its end), else
            the model it was predicted on; "" when its record says neither.
    """

    run_id: str
    finished: float
    system: str
    model: str


def _recorded_model(run: RunInfo, root: Path) -> str:
    text = read_text(run.dir / COST_FILE, root, limit=64 * 1024)
    if isinstance(text, TextProblem):
        return ""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return ""
    if not isinstance(data, dict):
        return ""
    actual = data.get("actual")
    used = actual.get("models") if isinstance(actual, dict) else None
    # What the client said it used wins over what was predicted: a run priced as one model
    # may have been served by another (the client's own default, an alias, a fallback).
    if isinstance(used, list) and used and all(isinstance(m, str) and m for m in used):
        return str(used[-1])
    model = data.get("model")
    return model if isinstance(model, str) else ""


def previous_run(
    workspace: Workspace, runs: Sequence[RunInfo] | None = None, exclude: Path | None = None
) -> PreviousRun | None:
    """The latest real run of the project (other than ``exclude``) whose ``system.md`` can be
    read through the guarded reader, or None. A simulated run sent nothing to a provider, so
    it left no cache to read."""
    runs = list_runs(workspace.root) if runs is None else runs
    for run in sorted(runs, key=lambda r: r.started, reverse=True):
        if exclude is not None and run.dir.resolve() == exclude.resolve():
            continue
        if simulated(run):
            continue
        text = read_text(
            run.dir / "system.md", workspace.root, limit=workspace.config.read_max_bytes
        )
        if isinstance(text, TextProblem):
            continue
        result = run.run_result
        duration = result.duration_s if result is not None else 0.0
        finished = run.started + (duration if math.isfinite(duration) and duration > 0 else 0.0)
        return PreviousRun(run.id, finished, text, _recorded_model(run, workspace.root))
    return None


@dataclass(frozen=True)
class CacheRelation:
    """How a prompt about to be sent stands to the cache the project's latest run left.

    Attributes:
        previous_run: that run's id, "" when there is none.
        gap_s: seconds since it finished, None when there is none.
        shared_prefix_bytes: the system prompts' common prefix.
        shared_prefix_tokens: the same in tokens (0 when the cache cannot serve it).
        parts_at: where this prompt parts from that one (layer id or ``file <path>``).
        misses: why the system prompt will not (all) be read from the cache: ``ttl_expired``,
            ``prefix_changed@<layer or file>``, ``model_switch``, ``below_minimum``, or
            ``no_previous_run``; empty when all of it should be.
    """

    previous_run: str
    gap_s: float | None
    shared_prefix_bytes: int
    shared_prefix_tokens: int
    parts_at: str
    misses: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape in ``cost.json``."""
        return {
            "previous_run": self.previous_run or None,
            "gap_s": self.gap_s,
            "shared_prefix_bytes": self.shared_prefix_bytes,
            "shared_prefix_tokens": self.shared_prefix_tokens,
            "parts_at": self.parts_at,
            "misses": list(self.misses),
        }


def cache_relation(
    workspace: Workspace,
    prompt: ComposedPrompt,
    model: str,
    price: ModelPrice | None,
    counter: TokenCounter,
    *,
    now: float | None = None,
    runs: Sequence[RunInfo] | None = None,
    exclude: Path | None = None,
) -> CacheRelation:
    """Compare ``prompt`` with the project's latest run: what the cache can serve, and each
    reason it cannot serve the rest."""
    ttl = workspace.config.pricing_ttl
    moment = time.time() if now is None else now
    previous = previous_run(workspace, runs, exclude)
    system_tokens = prompt.system_meter.tokens
    if system_tokens is None:
        system_tokens = counter.count(prompt.system)
    misses: list[str] = []
    if price is not None and system_tokens < price.min_cacheable_tokens:
        misses.append("below_minimum")
    if previous is None:
        return CacheRelation("", None, 0, 0, "", ("no_previous_run", *misses))
    gap = max(0.0, moment - previous.finished)
    data = prompt.system.encode("utf-8")
    length = common_prefix_bytes(previous.system.encode("utf-8"), data)
    if gap > TTL_SECONDS[ttl]:
        misses.insert(0, "ttl_expired")
    if previous.model and model and previous.model != model:
        misses.append("model_switch")
    parts_at = "end" if length == len(data) else part_at(prompt, length)
    if length < len(data):
        where = parts_at.removeprefix("file ")
        misses.append(f"prefix_changed@{where}")
    usable = not any(m in ("ttl_expired", "model_switch", "below_minimum") for m in misses)
    shared = counter.count(data[:length].decode("utf-8", errors="ignore")) if usable else 0
    return CacheRelation(previous.run_id, gap, length, shared, parts_at, tuple(misses))


def run_prediction(
    workspace: Workspace,
    prompt: ComposedPrompt,
    model: str,
    *,
    counter: TokenCounter | None = None,
    now: float | None = None,
    table: PriceTable | None = None,
    exclude: Path | None = None,
    model_source: str = "",
) -> tuple[PhaseCost, CacheRelation]:
    """The predicted cost of running ``prompt`` now, with the cache relation it rests on: what
    it shares with the project's latest run is a cache read when that run finished within the
    cache's lifetime on the same model."""
    table = table or load_prices(workspace)
    price = table.find(model) if model else None
    counter = counter or get_counter(workspace.config.tokens_encoding)
    runs = list_runs(workspace.root)
    relation = cache_relation(
        workspace, prompt, model, price, counter, now=now, runs=runs, exclude=exclude
    )
    system_tokens = prompt.system_meter.tokens
    user_tokens = prompt.user_meter.tokens
    cost = price_prompt(
        prompt.request.phase,
        model,
        price,
        ttl=workspace.config.pricing_ttl,
        system_tokens=counter.count(prompt.system) if system_tokens is None else system_tokens,
        user_tokens=counter.count(prompt.user) if user_tokens is None else user_tokens,
        shared_tokens=relation.shared_prefix_tokens,
        output=expected_output(workspace, prompt.request.phase, runs),
        unknown=table_problem(table, model)
        or ("" if model else price_unknown(model, model_source)),
    )
    return cost, relation
