"""A picture of the system prompt: its layers and injected files as one proportional bar, the
largest first, with the warning, argv and error lines on the same scale.

The app's composition view and ``promptdeck inspect --chart`` draw the same lines from here.
Sizes are tokens (as counted for the prompt) or bytes. The warning and error lines are byte
limits on the injection and the argv line one on the system prompt; on the token scale they
are placed at the prompt's own bytes-per-token ratio and marked ``≈``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..lean_dataclass import dataclass
from ..tokens.counter import ARGV_LIMIT_BYTES
from ..units import UNREAD_LABEL
from .request import ComposedPrompt

FILLS = "█▓▒░"
"""Fill characters of consecutive blocks, so neighbours stay apart without colour."""


@dataclass(frozen=True)
class Block:
    """One part of the system prompt.

    Attributes:
        label: ``Layer-1 Guardrails`` or ``file _bmad-output/…/1-2.md``.
        kind: ``layer``, ``file``, ``envelope``, or ``unread`` (a file too large to read,
            drawn in bytes as if it were).
        size: its size in the chart's measure.
    """

    label: str
    kind: str
    size: int


@dataclass(frozen=True)
class Composition:
    """The blocks of one prompt, largest first, and the lines on their scale.

    Attributes:
        measure: ``tokens`` or ``bytes``.
        blocks: the parts, largest first; they add up to :attr:`total`.
        total: the system prompt's size in the measure.
        lines: (name, position in the measure) of the warning, argv and error lines.
        estimated: True when the lines are placed by the bytes-per-token ratio.
    """

    measure: str
    blocks: tuple[Block, ...]
    total: int
    lines: tuple[tuple[str, int], ...]
    estimated: bool = False

    @property
    def scale(self) -> int:
        """The size the full width of the bar stands for: the prompt or the farthest line."""
        return max([self.total, *(position for _name, position in self.lines), 1])


def composition_of(prompt: ComposedPrompt, measure: str = "tokens") -> Composition:
    """Split ``prompt`` into blocks (the injection layer into its files and envelope).

    Raises:
        ValueError: ``measure`` is not ``tokens`` or ``bytes``, or tokens were not counted.
    """
    if measure not in ("tokens", "bytes"):
        raise ValueError(f"unknown measure {measure!r}")
    if measure == "tokens" and prompt.system_meter.tokens is None:
        raise ValueError("tokens are not counted for this prompt")

    def size(bytes_: int, tokens: int | None) -> int:
        return bytes_ if measure == "bytes" else tokens or 0

    injection = prompt.injection
    blocks: list[Block] = []
    for layer in prompt.layers:
        layer_size = size(layer.bytes, layer.tokens)
        if injection.text and injection.text in layer.content:
            parts = [
                Block(f"file {item.path}", "file", size(item.bytes, item.tokens))
                for item in injection.files
                if item.status == "included"
            ]
            rest = layer_size - sum(block.size for block in parts)
            # The rest of the layer: the envelope's tags and the layer's own words (token
            # counts of parts need not add up exactly; never below zero).
            parts.append(
                Block(f"{layer.layer_id} {layer.title} (envelope, text)", "envelope", max(rest, 0))
            )
            if measure == "bytes":
                # Files too large to read are not in the text, but they are why an injection
                # is over its line: drawn with their size on disk, as if read.
                parts.extend(
                    Block(f"file {item.path} (too large: {UNREAD_LABEL})", "unread", item.bytes)
                    for item in injection.files
                    if item.status == "too-large"
                )
            blocks.extend(parts)
        else:
            blocks.append(Block(f"{layer.layer_id} {layer.title}", "layer", layer_size))
    joiner = size(prompt.joiner.bytes, prompt.joiner.tokens)
    if joiner:
        blocks.append(Block("(joiners between layers)", "layer", joiner))
    blocks.sort(key=lambda block: -block.size)
    total = size(prompt.system_meter.bytes, prompt.system_meter.tokens)
    total += sum(block.size for block in blocks if block.kind == "unread")
    limits = (
        ("warn", injection.warn_bytes),
        ("argv", ARGV_LIMIT_BYTES),
        ("error", injection.error_bytes),
    )
    if measure == "bytes":
        lines = tuple(limits)
        estimated = False
    else:
        ratio = total / max(prompt.system_meter.bytes, 1)
        lines = tuple((name, round(limit * ratio)) for name, limit in limits)
        estimated = True
    return Composition(measure, tuple(b for b in blocks if b.size > 0), total, lines, estimated)


def apportion(sizes: Sequence[int], cells: int) -> list[int]:
    """Whole cells for ``sizes`` adding up to ``cells`` (largest remainder), so the bar is
    exactly as long as its share of the scale."""
    whole = sum(sizes)
    if whole <= 0 or cells <= 0:
        return [0 for _ in sizes]
    exact = [size * cells / whole for size in sizes]
    given = [int(value) for value in exact]
    order = sorted(range(len(sizes)), key=lambda i: -(exact[i] - given[i]))
    for i in order[: cells - sum(given)]:
        given[i] += 1
    return given


def _human(size: int, measure: str) -> str:
    if measure == "tokens":
        return f"{size:,} tok"
    if size < 1024:
        return f"{size} B"
    return f"{size / 1024:.1f} KiB"


def _shorten(text: str, width: int) -> str:
    # A path loses its middle, never its file name's end: ``file _bmad…/1-2-x.md``.
    if len(text) <= width:
        return text
    head, _, name = text.rpartition("/")
    if not head:
        return text[: max(width - 1, 0)] + "…"
    if len(name) + 2 <= width:
        return head[: width - len(name) - 2] + "…/" + name
    return "…" + name[-(width - 1) :]


def chart_lines(chart: Composition, width: int, *, limit: int | None = None) -> list[str]:
    """The picture as plain lines of at most ``width`` cells.

    The bar (the prompt's blocks, then the empty rest of the scale), the lines' marks and
    names under it, then one line per block (largest first): its fill, share, size and label.
    ``limit`` keeps only that many block lines (the rest are summed in one line).
    """
    width = max(width, 30)
    filled = min(round(chart.total / chart.scale * width), width)
    cells = apportion([block.size for block in chart.blocks], filled)
    bar = "".join(FILLS[i % len(FILLS)] * n for i, n in enumerate(cells))
    bar += "·" * (width - len(bar))
    marks = [" "] * width
    names = [" "] * width
    approx = "≈" if chart.estimated else ""
    # Right to left, each name ending at its mark, else starting at it: the first place where
    # it does not overlap another.
    for name, position in sorted(chart.lines, key=lambda line: -line[1]):
        cell = min(round(position / chart.scale * width), width - 1)
        marks[cell] = "│"
        label = approx + name
        for start in (max(cell - len(label) + 1, 0), min(cell, width - len(label))):
            if all(ch == " " for ch in names[start : start + len(label)]):
                names[start : start + len(label)] = list(label)
                break
    lines = [
        _shorten(
            f"prompt {_human(chart.total, chart.measure)}, {len(chart.blocks)} parts"
            f" · full width = {_human(chart.scale, chart.measure)}",
            width,
        ),
        bar,
        "".join(marks).rstrip(),
        "".join(names).rstrip(),
    ]
    shown = chart.blocks if limit is None else chart.blocks[:limit]
    for index, block in enumerate(shown):
        share = block.size / chart.total if chart.total else 0.0
        fill = FILLS[index % len(FILLS)]
        head = f"{fill} {share:6.1%} {_human(block.size, chart.measure):>10}  "
        lines.append(head + _shorten(block.label, width - len(head)))
    rest = chart.blocks[len(shown) :]
    if rest:
        size = sum(block.size for block in rest)
        lines.append(f"  … {len(rest)} smaller parts, {_human(size, chart.measure)} together")
    return lines
