"""The clients' cut lines as gauges under the meter: each line drawn on a bar of what it
measures (Codex's AGENTS.md chain, a CLAUDE.md, the story spec's and the epic context's
tokens), the line marked where it falls, heavy in the error colour once passed.

The argv line is the system prompt's and is drawn on the meter's own system bar; the rest
are listed here, over ones first, as :func:`promptdeck.core.fit.cut_lines` orders them. The
tooltip names every line and says where it cuts; what does not fit the width is counted
(``+2``) and left to the tooltip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ...core.terminal import printable_line
from ...core.units import human_bytes, human_tokens

if TYPE_CHECKING:  # the lines come measured: drawing them needs no solver
    from promptdeck.core.fit import CutLine

FULL_BAR_CELLS = 10
COMPACT_BAR_CELLS = 6
LABELS = {
    "AGENTS.md budget": ("Codex AGENTS.md", "AGENTS"),
    "large CLAUDE.md warning": ("Claude {subject}", "CLAUDE"),
    "story spec target": ("BMAD spec", "spec"),
    "epic context target": ("BMAD epic context", "epic"),
}
"""Each line's label on the gauge, full and compact (a ``{subject}`` is the file's name)."""


def drawn_here(lines: Sequence[CutLine]) -> tuple[CutLine, ...]:
    """The lines this row draws: every line but those on the system prompt's own scale."""
    return tuple(line for line in lines if not line.on_system_scale)


def _label(line: CutLine, compact: bool) -> str:
    full, short = LABELS.get(line.name, (line.name, line.name))
    return printable_line(short if compact else full.format(subject=line.subject))


def _amount(value: int | None, unit: str) -> str:
    if unit == "bytes":
        return "…" if value is None else human_bytes(value)
    if unit == "chars":
        return "…" if value is None else f"{human_tokens(value)} ch"
    return f"{human_tokens(value)} tok"


def _figures(line: CutLine, limits: bool) -> str:
    """``39.6 KiB/32.0 KiB``, ``712/1.6k tok``, ``20/40.0k ch``; the size alone without
    ``limits``."""
    if not limits:
        return _amount(line.size, line.unit)
    if line.unit == "bytes":
        return f"{_amount(line.size, 'bytes')}/{_amount(line.limit, 'bytes')}"
    suffix = " tok" if line.unit == "tokens" else " ch"
    return f"{human_tokens(line.size)}/{human_tokens(line.limit)}{suffix}"


def legend(lines: Sequence[CutLine]) -> str:
    """The tooltip: one line per cut line, naming it and saying where it falls."""
    return "\n".join(
        f"{'✖' if line.over else '·'} {line.client} {line.name} "
        f"({_amount(line.limit, line.unit)}): {printable_line(line.says)}"
        for line in lines
    )


class CutLinesMeter(Widget):
    """One row of gauges, one per client cut line (hidden when there is none)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "cut-lines-meter--fill",
        "cut-lines-meter--over",
        "cut-lines-meter--mark",
        "cut-lines-meter--track",
    }

    DEFAULT_CSS = """
    CutLinesMeter {
        height: 1;
        padding: 0 1;
        background: $panel;
        display: none;
        &.-shown { display: block; }
        & > .cut-lines-meter--fill { color: $success; }
        & > .cut-lines-meter--over { color: $error; text-style: bold; }
        & > .cut-lines-meter--mark { color: $foreground; text-style: bold; }
        & > .cut-lines-meter--track { color: $foreground 20%; }
    }
    """

    lines: reactive[tuple[CutLine, ...]] = reactive((), layout=True)
    """The lines to draw (set by the preview; the argv line is left to the meter)."""

    def watch_lines(self, lines: tuple[CutLine, ...]) -> None:
        """Show the row when there is a line to draw; the tooltip is the legend."""
        self.set_class(bool(lines), "-shown")
        self.tooltip = legend(lines) if lines else None

    def render(self) -> Text:
        """As many gauges as the width holds, full words first, then compact ones."""
        width = max(self.size.width - 2, 20)
        lines = self.lines
        # Full words, then short labels, then short labels with the size alone.
        for compact, limits in ((False, True), (True, True), (True, False)):
            text, shown = self._gauges(lines, width, compact, limits)
            if shown == len(lines):
                return text
        return text

    def _gauges(
        self, lines: tuple[CutLine, ...], width: int, compact: bool, limits: bool
    ) -> tuple[Text, int]:
        cells = COMPACT_BAR_CELLS if compact else FULL_BAR_CELLS
        text = Text("cuts " if not compact else "", style="dim", no_wrap=True, overflow="crop")
        shown = 0
        for index, line in enumerate(lines):
            gauge = self._gauge(line, cells, compact, limits)
            left = len(lines) - index - 1
            more = f"  +{left}" if left else ""
            gap = "  " if shown else ""
            if text.cell_len + len(gap) + gauge.cell_len + len(more) > width:
                break
            text.append(gap)
            text.append_text(gauge)
            shown += 1
        if shown < len(lines):
            text.append(f"  +{len(lines) - shown}", style="dim")
        return text, shown

    def _gauge(self, line: CutLine, cells: int, compact: bool, limits: bool) -> Text:
        gauge = Text(no_wrap=True)
        over_style = self.get_component_rich_style("cut-lines-meter--over")
        gauge.append(_label(line, compact) + " ", style=over_style if line.over else "")
        gauge.append_text(self._bar(line, cells))
        figures = " " + _figures(line, limits)
        gauge.append(figures, style=over_style if line.over else "dim")
        return gauge

    def _bar(self, line: CutLine, cells: int) -> Text:
        size = line.size or 0
        scale = max(line.limit, size) * 1.1 or 1
        filled = min(round(size / scale * cells), cells)
        mark = min(round(line.limit / scale * cells), cells - 1)
        fill_style = self.get_component_rich_style(
            "cut-lines-meter--over" if line.over else "cut-lines-meter--fill"
        )
        bar = Text()
        for cell in range(cells):
            if cell == mark:
                style = "cut-lines-meter--over" if line.over else "cut-lines-meter--mark"
                bar.append("┃" if line.over else "│", self.get_component_rich_style(style))
            elif cell < filled:
                bar.append("█", fill_style)
            else:
                bar.append("░", self.get_component_rich_style("cut-lines-meter--track"))
        return bar
