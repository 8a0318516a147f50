"""The composition view: the system prompt as one proportional bar of its layers and files,
largest first, with the warning, argv and error lines on the same scale (drawn by core)."""

from __future__ import annotations

from collections.abc import Sequence

from promptdeck.core.prompt import FILLS, ComposedPrompt, chart_lines, composition_of
from promptdeck.core.tokens import ContextUse
from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

SCROLLBAR_ROOM = 2
PALETTE = ("$accent", "$primary", "$secondary", "$warning")


class CompositionChart(Widget):
    """The chart of :attr:`prompt` in :attr:`measure` (``tokens``, or ``bytes``)."""

    DEFAULT_CSS = """
    CompositionChart {
        height: auto;
        padding: 0 1;
        background: $surface;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    prompt: reactive[ComposedPrompt | None] = reactive(None, always_update=True)
    """The prompt charted; set it last (after :attr:`context` and :attr:`context_notes`, set
    with ``set_reactive``) and the chart is drawn once."""
    measure: reactive[str] = reactive("tokens")
    context: reactive[ContextUse | None] = reactive(None)
    """The prompt's place in the model's context window (None until tokens are counted)."""
    context_notes: reactive[tuple[str, ...]] = reactive(())
    """The lines under the context figures: where a measured overhead comes from, what it
    holds and what its capture left out; what the client keeps back of the window."""

    _drawn: tuple[ComposedPrompt | None, tuple[object, ...], list[str]] | None = None

    def lines(self, width: int) -> list[str]:
        """The chart's lines at ``width`` (bytes while tokens are not counted yet).

        Drawn once per prompt, measure, context and width: the height and the paint both ask."""
        prompt = self.prompt
        key = (self.measure, self.context, self.context_notes, width)
        drawn = self._drawn
        if drawn is not None and drawn[0] is prompt and drawn[1] == key:
            return drawn[2]
        lines = self._draw(prompt, width)
        self._drawn = (prompt, key, lines)
        return lines

    def _draw(self, prompt: ComposedPrompt | None, width: int) -> list[str]:
        if prompt is None:
            return ["composing…"]
        measure = self.measure
        if measure == "tokens" and prompt.system_meter.tokens is None:
            measure = "bytes"
        chart = composition_of(prompt, measure)
        lines = chart_lines(chart, width)
        other = "bytes" if measure == "tokens" else "tokens"
        note = "≈ lines placed at this prompt's bytes per token · " if chart.estimated else ""
        context = context_lines(self.context, width, self.context_notes)
        return [*context, *lines, "", f"{note}b again: by {other}"]

    def _chart_width(self, width: int) -> int:
        # Room for the scrollbar of the view around it, so nothing is cut at the edge.
        return max(width - SCROLLBAR_ROOM, 30)

    def _changed(self) -> None:
        # A new prompt, measure or context: repainted in place, and laid out again only when
        # the chart's height changes (a relayout of the screen cost more than the chart).
        width = self.content_region.width
        if not width or not self.size.height:
            self.refresh(layout=True)
            return
        height = len(self.lines(self._chart_width(width)))
        self.refresh(layout=height != self.size.height)

    watch_prompt = watch_measure = watch_context = watch_context_notes = _changed

    def render(self) -> Text:
        """Plain lines; the bar's fills are coloured apart by the theme's colours."""
        width = self._chart_width(self.content_region.width or self.size.width)
        text = Text("\n".join(self.lines(width)), no_wrap=True, overflow="ellipsis")
        variables = self.app.theme_variables
        for index, fill in enumerate(FILLS):
            colour = variables.get(PALETTE[index].lstrip("$"), "")
            if colour:
                text.highlight_regex(f"{fill}+", style=colour)
        return text

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """As many rows as the chart has lines."""
        return len(self.lines(self._chart_width(width)))


def context_lines(use: ContextUse | None, width: int, notes: Sequence[str] = ()) -> list[str]:
    """The context window before the run, like Claude Code's ``/context``: one bar (prompt,
    client overhead, free before the client compacts, what the client keeps back) and the
    figures, the overhead said to be measured or estimated; then ``notes``, one line each."""
    if use is None:
        return ["context window: waiting for the token count", ""]
    cells = max(width - 2, 10)
    held = use.kept_back
    back = held.output_reserve + held.autocompact_buffer if held else 0
    prompt = min(round(use.prompt_tokens / use.window * cells), cells)
    overhead = min(round(use.overhead / use.window * cells), cells - prompt)
    kept = min(round(back / use.window * cells), cells - prompt - overhead)
    free = cells - prompt - overhead - kept
    bar = "█" * prompt + "▒" * overhead + "░" * free + "▓" * kept
    how = "measured" if use.overhead_measured else "estimate"
    # Kept back or not, free is what the agent's work may fill (before the client compacts).
    left = use.before_compaction if held else use.free
    return [
        f"context window {use.window:,} tok · {use.share:.0%} used before the run",
        bar,
        f"█ prompt {use.prompt_tokens:,}  ▒ client overhead {use.overhead:,} ({how})  "
        f"░ free {left:,}",
        *(f"  {note}" for note in notes),
        "",
    ]
