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

import math
import statistics
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from ..agent_names import is_simulation
from ..errors import PromptdeckError
from ..injection.model import Selection
from ..lean_dataclass import dataclass
from ..project.workspace import Workspace
from ..prompt.request import ComposedPrompt, PromptRequest
from ..records.reader import RunInfo, list_runs
from ..terminal import printable_line
from ..tokens.counter import TokenCounter, get_counter
from ..tokens.pricing import ModelPrice, PriceTable, load_prices
from .client_model import ResolvedModel, forecast_model
from .prefix import DEFAULT_SEQUENCE, CacheMeter, measure_prompts
from .prefix import compose_sequence as _compose_sequence

DEFAULT_OUTPUT_TOKENS = 4000
"""The output a phase is expected to write when nothing better is known."""
SCOPE = "first request of each phase only"
ONE_PHASE_SCOPE = "first request only"
"""The scope of one phase's prediction (the run confirmation's): :data:`SCOPE` for one."""
"""What a forecast covers: an agent run re-sends its context on every later model call and
adds its own system prompt and tools, none of which is predicted."""


def simulated(run: RunInfo) -> bool:
    """Whether ``run`` was a simulation (the replay agent): its usage and output are invented,
    so it never feeds a prediction, a calibration or the cache a next run reads."""
    meta = run.meta
    agent = str(meta.get("agent") or "")
    return meta.get("simulation") is True or agent == "simulation" or is_simulation(agent)


def price_unknown(model: str, source: str = "") -> str:
    """Why a cost is unknown: no model, or no price for it."""
    if not model:
        return f"model unknown ({source})" if source else "model unknown"
    return f"price unknown for {model}"


def money(dollars: float | None) -> str:
    """``$0.0412``, or ``unknown`` (for None, and for a figure that is not finite)."""
    return "unknown" if dollars is None or not math.isfinite(dollars) else f"${dollars:.4f}"


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
        checked: the day the price row used was checked ("" when there is none).
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
    checked: str = ""

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
            "scope": SCOPE,
            "prices_checked": self.checked or None,
        }

    def describe(self) -> str:
        """One line: the dollars (or unknown) and the token split they come from."""
        why = f" ({self.unknown})" if self.unknown else ""
        # The model once: an unknown one is already named by the reason.
        model = f" · {self.model}" if self.model and self.model not in self.unknown else ""
        return (
            f"{money(self.dollars)}{why}{model} · cache write "
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
        model_source: where the model came from (:class:`~.client_model.ResolvedModel`).
    """

    story_id: str
    model: str
    ttl: str
    encoding: str
    phases: tuple[PhaseCost, ...]
    price: ModelPrice | None
    problems: tuple[str, ...] = field(default=())
    model_source: str = ""

    @property
    def basis(self) -> str:
        """What the forecast rests on, in one line: its scope, the price row's date, where
        the model came from and where the output figure came from."""
        return forecast_basis(self.model, self.model_source, self.price, self.phases)

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
            "model": self.model or None,
            "model_source": self.model_source or None,
            "scope": SCOPE,
            "basis": self.basis,
            "ttl": self.ttl,
            "encoding": self.encoding,
            "estimate": (
                f"token counts are {self.encoding} counts, an estimate for "
                f"{self.model or 'the model'}"
            ),
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
        if simulated(run):
            continue
        result = run.run_result
        if result is None or result.usage is None or result.usage.output_tokens <= 0:
            continue
        outputs.setdefault(run.phase, []).append(result.usage.output_tokens)
    own = outputs.get(phase, [])
    if own:
        return int(statistics.median(own)), f"median of {len(own)} real {phase} run(s)"
    every = [value for values in outputs.values() for value in values]
    if every:
        return int(statistics.median(every)), f"median of {len(every)} real run(s)"
    return DEFAULT_OUTPUT_TOKENS, f"stated default {DEFAULT_OUTPUT_TOKENS:,} (no real run yet)"


def forecast_basis(
    model: str, source: str, price: ModelPrice | None, phases: Sequence[PhaseCost]
) -> str:
    """``first request of each phase only · prices checked 2026-11-25 · model: … · output: …``."""
    prices = (
        f"prices checked {price.checked}" if price is not None else price_unknown(model, source)
    )
    outputs = ", ".join(dict.fromkeys(phase.output_source for phase in phases)) or "none"
    origin = source or "the caller"
    return f"{SCOPE} · {prices} · model {model or 'unknown'} from {origin} · output: {outputs}"


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
        unknown = unknown or price_unknown(model)
    else:
        dollars = (
            plain * price.input
            + write * price.cache_write(ttl)
            + read * price.cache_read
            + output_tokens * price.output
        ) / 1_000_000
        if not math.isfinite(dollars):  # never shown or printed as $inf / Infinity
            dollars, unknown = None, unknown or "the cost is too large to compute"
    checked = price.checked if price is not None else ""
    return PhaseCost(
        phase, model, plain, write, read, output_tokens, source, dollars, unknown, checked
    )


def forecast_prompts(
    workspace: Workspace,
    prompts: Sequence[ComposedPrompt],
    meter: CacheMeter,
    model: str,
    table: PriceTable | None = None,
    model_source: str = "",
) -> CostForecast:
    """The forecast of already-composed ``prompts`` (one per phase, in sequence order, stepped
    within the cache's lifetime), with their cache meter; ``model_source`` says where the
    model came from."""
    table = table or load_prices(workspace)
    price = table.find(model) if model else None
    ttl = workspace.config.pricing_ttl
    runs = list_runs(workspace.root)
    unknown = table_problem(table, model) or (
        price_unknown(model, model_source) if not model else ""
    )
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
        model_source,
    )


def table_problem(table: PriceTable, model: str) -> str:
    """The price table's line about ``model``'s row, "" when it has none."""
    return next((p for p in table.problems if model and f"model {model}:" in p), "")


def forecast(
    workspace: Workspace,
    story_id: str,
    model: str,
    *,
    model_source: str = "",
    phases: Sequence[str] = DEFAULT_SEQUENCE,
    selection: Selection | None = None,
    delivery: str | None = None,
    counter: TokenCounter | None = None,
) -> tuple[CacheMeter, CostForecast]:
    """Compose ``phases`` of ``story_id``, measure what they share, and price them."""
    counter = counter or get_counter(workspace.config.tokens_encoding)
    table = load_prices(workspace)
    price = table.find(model) if model else None
    prompts = _compose_sequence(
        workspace, story_id, phases=phases, selection=selection, delivery=delivery, counter=counter
    )
    meter = measure_prompts(
        prompts, counter, price.min_cacheable_tokens if price is not None else None, model
    )
    return meter, forecast_prompts(workspace, prompts, meter, model, table, model_source)


def cost_line(cost: PhaseCost, model: ResolvedModel | None = None) -> str:
    """The confirmation's cost line: the prediction, labelled as one, with its scope and
    where its model came from."""
    # Where an unknown model came from is already in the reason ("model unknown (…)").
    source = f" · model from {model.source}" if model is not None and model.model else ""
    checked = f" · prices checked {cost.checked}" if cost.checked else ""
    return printable_line(
        f"predicted cost ({ONE_PHASE_SCOPE}) {cost.describe()}{source}{checked} · token counts "
        "are an "
        "estimate"
    )


def cache_row(
    workspace: Workspace,
    request: PromptRequest,
    agent: str,
    counter: TokenCounter | None = None,
    model: ResolvedModel | None = None,
) -> str:
    """The app's one-line row under the meters for ``request``'s story and delivery: the
    predicted cost of the phase sequence, how many flags there are (``inspect --cache`` lists
    them), and each consecutive pair's shared prefix against its system prompt. A story that
    cannot be composed says why, in the row. ``model`` is the app's resolution (with the
    client's version); without it the model is resolved without starting the client
    (:func:`~.client_model.forecast_model` with no version): when only the client's default
    would name it, it is unknown here."""
    resolved = model or forecast_model(workspace, agent or None)
    phases = DEFAULT_SEQUENCE if request.phase in DEFAULT_SEQUENCE else (request.phase,)
    try:
        meter, predicted = forecast(
            workspace,
            request.story_id,
            resolved.model,
            model_source=resolved.source,
            phases=phases,
            selection=request.selection,
            delivery=request.delivery,
            counter=counter,
        )
    except PromptdeckError as exc:
        return f"cache · not measured: {exc}"
    # The sequence's cost and the flags first: a narrow preview cuts the row at its end.
    flags = f" · ⚠ {len(meter.flags)} flag(s): inspect --cache" if meter.flags else ""
    return (
        f"cache · {meter.delivery} · sequence {money(predicted.total)} "
        f"({resolved.model or 'model unknown'}, estimated, first requests only)"
        f"{flags} · shared prefix {meter.summary()}"
    )
