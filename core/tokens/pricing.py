"""The price table: what a model's tokens cost, read from a dated data file, never from code.

The bundled table is ``core/assets/prices.toml`` (one ``[[model]]`` per model: ``input``,
``output``, ``cache_write_5m``, ``cache_write_1h``, ``cache_read`` in USD per million tokens,
``min_cacheable_tokens``, and the ``checked`` date and ``source`` of the figures). A project
adds or overrides models with a file of the same shape named by ``[pricing] file``.

Bad rows never stop anything: a row with a missing figure, or one that is not a finite number
from 0 to :data:`PRICE_CEILING`, is left out with one line in :attr:`PriceTable.problems`, and
a model the table does not hold has no price — its cost reads "unknown" wherever it is shown.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..lean_dataclass import dataclass
from ..project.textfiles import StructuredProblem, TextProblem, parse_toml, read_text
from ..project.workspace import Workspace

BUNDLED_PRICES = Path(__file__).resolve().parent.parent / "assets" / "prices.toml"
PRICE_FIELDS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
TTL_SECONDS = {"5m": 300, "1h": 3600}
PRICES_MAX_BYTES = 256 * 1024
PRICE_CEILING = 10_000.0
"""The highest price taken, USD per million tokens (today's dearest model is under 1% of it):
a row above it is a mistake or an attack (``1e308`` would make every cost infinite)."""
MAX_CACHEABLE_TOKENS = 1_000_000_000
"""The highest ``min_cacheable_tokens`` taken (beyond any context window)."""


@dataclass(frozen=True)
class ModelPrice:
    """One model's prices, USD per million tokens.

    Attributes:
        model: the model id (``claude-sonnet-4-6``); longer ids that start with it (dated
            snapshots) share its prices.
        family: ``claude`` or ``openai``.
        input, output, cache_write_5m, cache_write_1h, cache_read: the prices.
        min_cacheable_tokens: the shortest prefix the provider caches.
        checked: the day the figures were read.
        source: where they were read.
    """

    model: str
    family: str
    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    min_cacheable_tokens: int
    checked: str
    source: str

    def cache_write(self, ttl: str) -> float:
        """The cache-write price for ``ttl`` (``5m`` or ``1h``)."""
        return self.cache_write_1h if ttl == "1h" else self.cache_write_5m

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``inspect --cost --json``)."""
        return {
            "model": self.model,
            "family": self.family,
            **{name: getattr(self, name) for name in PRICE_FIELDS},
            "min_cacheable_tokens": self.min_cacheable_tokens,
            "checked": self.checked,
            "source": self.source,
        }


@dataclass(frozen=True)
class PriceTable:
    """The prices in force: the bundled table with the project's file over it.

    Attributes:
        models: the usable rows by model id.
        problems: one line per row or file that could not be used.
    """

    models: dict[str, ModelPrice]
    problems: tuple[str, ...] = ()

    def find(self, model: str) -> ModelPrice | None:
        """The row for ``model``: its own, else the longest id it starts with, else None."""
        if model in self.models:
            return self.models[model]
        matches = [m for m in self.models if model.startswith((m + "-", m + "["))]
        return self.models[max(matches, key=len)] if matches else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return number if math.isfinite(number) and 0 <= number <= PRICE_CEILING else None


def parse_row(row: object, where: str) -> ModelPrice | str:
    """One ``[[model]]`` row as a :class:`ModelPrice`, or the one line saying why not."""
    if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not row["id"]:
        return f"price table {where}: a [[model]] row without an id is left out"
    model = row["id"]
    figures: dict[str, float] = {}
    for name in PRICE_FIELDS:
        number = _number(row.get(name))
        if number is None:
            value = row.get(name)
            if name not in row:
                what = "missing"
            elif isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                what = f"over the ceiling of {PRICE_CEILING:,.0f} USD per million tokens"
            else:
                what = "not a non-negative number"
            return f"price table {where}: model {model}: {name} is {what}; its cost is unknown"
        figures[name] = number
    minimum = row.get("min_cacheable_tokens", 1024)
    if (
        isinstance(minimum, bool)
        or not isinstance(minimum, int)
        or not 0 <= minimum <= MAX_CACHEABLE_TOKENS
    ):
        return (
            f"price table {where}: model {model}: min_cacheable_tokens is not an integer "
            f"from 0 to {MAX_CACHEABLE_TOKENS:,}; its cost is unknown"
        )
    return ModelPrice(
        model=model,
        family=str(row.get("family") or ("claude" if model.startswith("claude") else "openai")),
        min_cacheable_tokens=minimum,
        checked=str(row.get("checked") or "undated"),
        source=str(row.get("source") or where),
        **figures,
    )


def parse_prices(text: str, where: str) -> tuple[list[ModelPrice], list[str]]:
    """The rows of one price file and the problems met; malformed TOML is one problem."""
    try:
        data = parse_toml(text)
    except StructuredProblem as exc:
        return [], [f"price table {where}: {exc}; it is not used"]
    rows = data.get("model", [])
    if not isinstance(rows, list):
        return [], [f"price table {where}: [[model]] rows expected; it is not used"]
    prices: list[ModelPrice] = []
    problems: list[str] = []
    for row in rows:
        parsed = parse_row(row, where)
        if isinstance(parsed, str):
            problems.append(parsed)
        else:
            prices.append(parsed)
    return prices, problems


def load_prices(workspace: Workspace | None = None) -> PriceTable:
    """The bundled table, with the project's ``[pricing] file`` over it when set."""
    models: dict[str, ModelPrice] = {}
    problems: list[str] = []
    bundled, found = parse_prices(BUNDLED_PRICES.read_text(encoding="utf-8"), "(bundled)")
    problems.extend(found)
    models.update((price.model, price) for price in bundled)
    configured = workspace.config.pricing_file if workspace is not None else ""
    if workspace is not None and configured:
        text = read_text(workspace.root / configured, workspace.root, limit=PRICES_MAX_BYTES)
        if isinstance(text, TextProblem):
            problems.append(f"price table {configured}: {text}; the bundled prices are used")
        else:
            own, found = parse_prices(text, configured)
            problems.extend(found)
            # A project's row that could not be used must not leave the bundled one standing
            # silently: the model is then unknown, as the problem line says.
            for line in found:
                for model in list(models):
                    if f"model {model}:" in line:
                        del models[model]
            models.update((price.model, price) for price in own)
    return PriceTable(models, tuple(problems))


def priced_model(workspace: Workspace, agent: str) -> str:
    """The model promptdeck's own config names for ``agent``: ``[pricing] model``, else
    ``[agent] claude_model``; ``""`` when it names none — never a stand-in. The model the
    client will really use (its own settings, its version's default) is
    :func:`promptdeck.core.cost.resolve_model`'s."""
    config = workspace.config
    if config.pricing_model:
        return config.pricing_model
    if agent == "claude" and config.agent_claude_model:
        return config.agent_claude_model
    return ""
