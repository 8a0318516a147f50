"""What a phase, and a story's phase sequence, will cost before it runs.

The prediction prices the prompt a phase sends, as providers bill it with prompt caching:

- the prefix the system prompt shares with the previous phase's (run within the cache's
  lifetime) is a cache read; the rest of the system prompt a cache write; the user turn plain
  input. A system prompt below the model's minimum cacheable prefix is all plain input.
- output: ``[pricing] output_tokens`` when set, else the median output of this project's
  finished runs of the same phase (of any phase when that one has none), else
  :data:`DEFAULT_OUTPUT_TOKENS` — the source is always said.

Token counts are the configured tiktoken encoding's (an estimate for Claude, whose tokenizer
is not public; the figures say so). An agent run makes several model calls that re-send the
context; the prediction is of its first call and its expected output, which is what the
prompt decides. A model without a usable price gives ``dollars = None``: "unknown", never a
guessed figure.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cache_prefix import (
    DEFAULT_SEQUENCE,
    CacheMeter,
    common_prefix_bytes,
    measure_prompts,
    part_at,
)
from .cache_prefix import compose_sequence as _compose_sequence
from .errors import PromptdeckError
from .injection_model import Selection
from .pricing import TTL_SECONDS, ModelPrice, PriceTable, load_prices, priced_model
from .prompt_request import ComposedPrompt, PromptRequest
from .records import RunInfo, list_runs
from .terminal import printable_line
from .textfiles import TextProblem, read_text
from .tokens import TokenCounter, get_counter
from .workspace import Workspace

DEFAULT_OUTPUT_TOKENS = 4000
"""The output a phase is expected to write when nothing better is known."""


def money(dollars: float | None) -> str:
    """``$0.0412``, or ``unknown``: a cost as every face shows it."""
    return "unknown" if dollars is None else f"${dollars:.4f}"


@dataclass(frozen=True)
class PhaseCost:
    """The predicted cost of one phase's prompt.

    Attributes:
        phase: the phase.
        model: the model priced.
        input_tokens: plain input (the user turn, and the system prompt when not cacheable).
        cache_write_tokens: the system prompt written to the cache.
        cache_read_tokens: the system prompt read from the cache.
        output_tokens: the expected output.
        output_source: where the output figure comes from.
        dollars: the predicted cost, None when unknown.
        unknown: why the cost is unknown ("" when known).
    """

    phase: str
    model: str
    input_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int
    output_source: str
    dollars: float | None
    unknown: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "phase": self.phase,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "output_tokens": self.output_tokens,
            "output_source": self.output_source,
            "dollars": self.dollars,
            "unknown": self.unknown or None,
        }

    def describe(self) -> str:
        """One line: the dollars (or unknown) and the token split they come from."""
        why = f" ({self.unknown})" if self.unknown else ""
        return (
            f"{money(self.dollars)}{why} · {self.model} · cache write "
            f"{self.cache_write_tokens:,} · read {self.cache_read_tokens:,} · input "
            f"{self.input_tokens:,} · output {self.output_tokens:,} ({self.output_source})"
        )


@dataclass(frozen=True)
class CostForecast:
    """The predicted cost of a story's phase sequence, phase by phase.

    Attributes:
        story_id: the story.
        model: the model priced.
        ttl: the cache lifetime assumed (phases stepped within it).
        encoding: the tokenizer of the counts.
        phases: each phase's cost, in order.
        price: the price row used, None when the model has none.
        problems: the price table's problems, one line each.
    """

    story_id: str
    model: str
    ttl: str
    encoding: str
    phases: tuple[PhaseCost, ...]
    price: ModelPrice | None
    problems: tuple[str, ...] = field(default=())

    @property
    def total(self) -> float | None:
        """The sum of the phases' dollars; None when any is unknown."""
        values = [phase.dollars for phase in self.phases]
        if any(value is None for value in values):
            return None
        return sum(value for value in values if value is not None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``inspect --cost --json``)."""
        return {
            "story": self.story_id,
            "model": self.model,
            "ttl": self.ttl,
            "encoding": self.encoding,
            "estimate": f"token counts are {self.encoding} counts, an estimate for {self.model}",
            "price": None if self.price is None else self.price.to_dict(),
            "phases": [phase.to_dict() for phase in self.phases],
            "total_dollars": self.total,
            "problems": list(self.problems),
        }


def expected_output(
    workspace: Workspace, phase: str, runs: Sequence[RunInfo] | None = None
) -> tuple[int, str]:
    """The output tokens a run of ``phase`` is expected to write, and where that comes from."""
    configured = workspace.config.pricing_output_tokens
    if configured:
        return configured, "[pricing] output_tokens"
    runs = list_runs(workspace.root) if runs is None else runs
    outputs: dict[str, list[int]] = {}
    for run in runs:
        result = run.run_result
        if result is None or result.usage is None or result.usage.output_tokens <= 0:
            continue
        outputs.setdefault(run.phase, []).append(result.usage.output_tokens)
    own = outputs.get(phase, [])
    if own:
        return int(statistics.median(own)), f"median of {len(own)} past {phase} run(s)"
    every = [value for values in outputs.values() for value in values]
    if every:
        return int(statistics.median(every)), f"median of {len(every)} past run(s)"
    return DEFAULT_OUTPUT_TOKENS, "default"


def price_prompt(
    phase: str,
    model: str,
    price: ModelPrice | None,
    *,
    ttl: str,
    system_tokens: int,
    user_tokens: int,
    shared_tokens: int,
    output: tuple[int, str],
    unknown: str = "",
) -> PhaseCost:
    """Price one prompt: ``shared_tokens`` of its system prompt read from the cache, the rest
    written, the user turn plain input (all plain input below the cache minimum)."""
    cacheable = price is not None and system_tokens >= price.min_cacheable_tokens
    read = min(shared_tokens, system_tokens) if cacheable else 0
    if price is not None and read < price.min_cacheable_tokens:
        read = 0
    write = system_tokens - read if cacheable else 0
    plain = user_tokens + (0 if cacheable else system_tokens)
    output_tokens, source = output
    if price is None:
        dollars = None
        unknown = unknown or f"no price for model {model} in the price table"
    else:
        dollars = (
            plain * price.input
            + write * price.cache_write(ttl)
            + read * price.cache_read
            + output_tokens * price.output
        ) / 1_000_000
    return PhaseCost(phase, model, plain, write, read, output_tokens, source, dollars, unknown)


def forecast_prompts(
    workspace: Workspace,
    prompts: Sequence[ComposedPrompt],
    meter: CacheMeter,
    model: str,
    table: PriceTable | None = None,
) -> CostForecast:
    """The forecast of already-composed ``prompts`` (one per phase, in sequence order, stepped
    within the cache's lifetime), with their cache meter."""
    table = table or load_prices(workspace)
    price = table.find(model)
    ttl = workspace.config.pricing_ttl
    runs = list_runs(workspace.root)
    unknown = next((p for p in table.problems if f"model {model}:" in p), "")
    phases: list[PhaseCost] = []
    for index, prompt in enumerate(prompts):
        shared = meter.pairs[index - 1].shared_prefix_tokens if index else 0
        phases.append(
            price_prompt(
                prompt.request.phase,
                model,
                price,
                ttl=ttl,
                system_tokens=prompt.system_meter.tokens or 0,
                user_tokens=prompt.user_meter.tokens or 0,
                shared_tokens=shared or 0,
                output=expected_output(workspace, prompt.request.phase, runs),
                unknown=unknown,
            )
        )
    return CostForecast(
        prompts[0].story.id,
        model,
        ttl,
        meter.encoding,
        tuple(phases),
        price,
        table.problems,
    )


def forecast(
    workspace: Workspace,
    story_id: str,
    model: str,
    *,
    phases: Sequence[str] = DEFAULT_SEQUENCE,
    selection: Selection | None = None,
    delivery: str | None = None,
    counter: TokenCounter | None = None,
) -> tuple[CacheMeter, CostForecast]:
    """Compose ``phases`` of ``story_id``, measure what they share, and price them."""
    counter = counter or get_counter(workspace.config.tokens_encoding)
    table = load_prices(workspace)
    price = table.find(model)
    prompts = _compose_sequence(
        workspace, story_id, phases=phases, selection=selection, delivery=delivery, counter=counter
    )
    meter = measure_prompts(
        prompts, counter, price.min_cacheable_tokens if price is not None else None, model
    )
    return meter, forecast_prompts(workspace, prompts, meter, model, table)


COST_FILE = "cost.json"
"""The run folder's record of its predicted and actual cost (see :mod:`.cost_record`)."""


@dataclass(frozen=True)
class PreviousRun:
    """The run a new one may read the cache of: the project's latest that recorded its system
    prompt.

    Attributes:
        run_id: its id.
        finished: when its last request was sent, epoch seconds (its start plus its duration;
            its start while it has no result).
        system: the system prompt it sent.
        model: the model it was priced as ("" when its record does not say).
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
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) else ""


def previous_run(
    workspace: Workspace, runs: Sequence[RunInfo] | None = None, exclude: Path | None = None
) -> PreviousRun | None:
    """The latest run of the project (other than ``exclude``) whose ``system.md`` can be read
    through the guarded reader, or None."""
    runs = list_runs(workspace.root) if runs is None else runs
    for run in sorted(runs, key=lambda r: r.started, reverse=True):
        if exclude is not None and run.dir.resolve() == exclude.resolve():
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
    if previous.model and previous.model != model:
        misses.append("model_switch")
    parts_at = "end" if length == len(data) else part_at(prompt, length)
    if length < len(data):
        where = parts_at.removeprefix("file ")
        misses.append(f"prefix_changed@{where}")
    usable = not any(m in ("ttl_expired", "model_switch", "below_minimum") for m in misses)
    shared = counter.count(data[:length].decode("utf-8", errors="ignore")) if usable else 0
    return CacheRelation(previous.run_id, gap, length, shared, parts_at, tuple(misses))


def run_cost(
    workspace: Workspace,
    prompt: ComposedPrompt,
    model: str,
    *,
    counter: TokenCounter | None = None,
    now: float | None = None,
    table: PriceTable | None = None,
    exclude: Path | None = None,
) -> PhaseCost:
    """The predicted cost of running ``prompt`` now: what it shares with the project's latest
    run is a cache read when that run finished within the cache's lifetime on the same model."""
    return run_prediction(
        workspace, prompt, model, counter=counter, now=now, table=table, exclude=exclude
    )[0]


def run_prediction(
    workspace: Workspace,
    prompt: ComposedPrompt,
    model: str,
    *,
    counter: TokenCounter | None = None,
    now: float | None = None,
    table: PriceTable | None = None,
    exclude: Path | None = None,
) -> tuple[PhaseCost, CacheRelation]:
    """:func:`run_cost` with the cache relation it rests on."""
    table = table or load_prices(workspace)
    price = table.find(model)
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
        unknown=next((p for p in table.problems if f"model {model}:" in p), ""),
    )
    return cost, relation


def cost_line(cost: PhaseCost) -> str:
    """The confirmation's cost line: the prediction, labelled as one."""
    return printable_line(f"predicted cost {cost.describe()} · token counts are an estimate")


def cache_row(
    workspace: Workspace,
    request: PromptRequest,
    agent: str,
    counter: TokenCounter | None = None,
) -> str:
    """The app's one-line row under the meters for ``request``'s story and delivery: each
    consecutive phase pair's shared prefix against its system prompt, how many flags there are
    (``inspect --cache`` lists them), and the predicted cost of the sequence. A story that
    cannot be composed says why, in the row."""
    model = priced_model(workspace, agent or "claude")
    phases = DEFAULT_SEQUENCE if request.phase in DEFAULT_SEQUENCE else (request.phase,)
    try:
        meter, predicted = forecast(
            workspace,
            request.story_id,
            model,
            phases=phases,
            selection=request.selection,
            delivery=request.delivery,
            counter=counter,
        )
    except PromptdeckError as exc:
        return f"cache · not measured: {exc}"
    flags = f" · ⚠ {len(meter.flags)} flag(s): promptdeck inspect --cache" if meter.flags else ""
    return (
        f"cache · {meter.delivery} · shared prefix {meter.summary()} · sequence "
        f"{money(predicted.total)} ({model}, estimated){flags}"
    )
