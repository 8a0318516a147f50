"""The cache row under the meters, fitted to its width by shortening its cells rather than
cutting the row: every part — the delivery, the sequence's estimated cost, the flags, each
pair's shared prefix — stays in view at any width, in fewer words as the room shrinks.

The row is core's (:func:`promptdeck.core.cost.cache_row`): cells joined by `` · ``. Each cell
this module knows has shorter forms, level by level (``sequence $0.4701 (model, estimated)`` →
``seq ≈$0.4701 (model)`` → ``≈$0.4701`` → ``≈$0.47``; ``kickoff→dev 4,326/15,621 B (parts at
Layer-2)`` → ``kickoff→dev 4.2/15.3 KiB @Layer-2`` → ``kickoff→dev 28% @L2`` → … →
``k→d 28%@L2``);
a cell it does not know is kept whole. The estimate stays marked as one (``≈``) at every level.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from promptdeck.core.units import human_bytes
from rich.cells import cell_len

LEVELS = 5
"""How many forms each cell has, from the whole words (0) to the shortest."""

SEPARATORS = (" · ", " · ", " · ", " · ", "·")
"""What joins the cells at each level."""

_COST = re.compile(r"^sequence (\$[\d.,]+|unknown) \((.+?), estimated(?:, [^()]*)?\)$")
_FLAGS = re.compile(r"^⚠ (\d+) flag\(s\): (.+)$")
_PREFIX = re.compile(r"^shared prefix (.+)$")
_PAIR = re.compile(r"^(\S+)→(\S+) ([\d,]+)/([\d,]+) B(?: \(parts at (\S+)\))?$")
_LAYER = re.compile(r"^Layer-(\w+)$")
_DELIVERY = {"layered": "lay", "cache-aware": "aware"}


def _cost(match: re.Match[str], level: int) -> str:
    price, model = match.group(1), match.group(2)
    if not price.startswith("$"):  # no price known: never shortened into a figure
        return f"seq unknown ({model})" if level == 1 else "seq unknown" if level == 2 else "seq ?"
    if level == 1:
        return f"seq ≈{price} ({model})"
    if level == 2:
        return f"seq ≈{price}"
    cents = price if "." not in price else price[: price.index(".") + 3]
    return f"≈{cents}"


def _flags(match: re.Match[str], level: int) -> str:
    count = match.group(1)
    return f"⚠ {count} flags" if level < 3 else f"⚠{count}"


def _pair(match: re.Match[str], level: int) -> str:
    before, after, shared, whole, parts = match.groups()
    shared_bytes, whole_bytes = int(shared.replace(",", "")), int(whole.replace(",", ""))
    if level == 1:
        part, of = human_bytes(shared_bytes).split(), human_bytes(whole_bytes).split()
        # One unit for both when they share it: ``4.2/15.3 KiB``.
        sizes = f"{part[0] if part[1:] == of[1:] else ' '.join(part)}/{' '.join(of)}"
        return f"{before}→{after} {sizes}" + (f" @{parts}" if parts else "")
    share = f"{round(100 * shared_bytes / whole_bytes) if whole_bytes else 0}%"
    layer = _LAYER.match(parts or "")
    at = f"@L{layer.group(1)}" if layer else (f"@{parts}" if parts else "")
    if level == 2:
        return f"{before}→{after} {share}" + (f" {at}" if at else "")
    if level == 3:
        return f"{before}→{after} {share}{at}"
    return f"{before[:1]}→{after[:1]} {share}{at}"


def _shorter(cell: str, level: int) -> str:
    """``cell`` at ``level`` (0: as core wrote it)."""
    if level == 0:
        return cell
    forms: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], int], str]], ...] = (
        (_COST, _cost),
        (_FLAGS, _flags),
        (_PAIR, _pair),
    )
    for pattern, shorten in forms:
        match = pattern.match(cell)
        if match:
            return shorten(match, level)
    prefix = _PREFIX.match(cell)
    if prefix:
        inner = _shorter(prefix.group(1), level)
        return f"prefix {inner}" if level < 3 else inner
    if level == 4:
        return _DELIVERY.get(cell, cell)
    return cell


def fitted_cache_row(line: str, width: int) -> str:
    """``line`` (core's cache row) in at most ``width`` cells if any level of its cells fits;
    else its shortest form (which the row then cuts at its end)."""
    cells = line.split(" · ")
    shortest = line
    for level in range(LEVELS):
        shortest = SEPARATORS[level].join(_shorter(cell, level) for cell in cells)
        if cell_len(shortest) <= width:
            return shortest
    return shortest
