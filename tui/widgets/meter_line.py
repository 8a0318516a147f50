"""The meter: two labelled bars, one per measure — the injection against the warning and error
lines, the system prompt against the argv line — on one width so they line up.

The system bar is the composed system prompt, the bytes the agent receives (what ``inspect``
and the fit view say). A file too large to be read is not in it: its size on disk is named
beside the bar (``199 KiB on disk, not read``), never added to the prompt's figure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.tokens import ARGV_LIMIT_BYTES
from rich.style import Style
from rich.text import Span, Text
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from ...core.units import human_bytes, human_tokens
from ..format import SENT

if TYPE_CHECKING:
    from promptdeck.core.prompt import ComposedPrompt

MIN_BAR_CELLS = 8
"""Narrower than this, a bar says nothing: the figures show alone."""

LEVEL_WORDS = {
    "ok": "ok",
    "warning": "over warn",
    "error": "over error: cannot run",
}
COMPACT_LEVEL_WORDS = {"ok": "ok", "warning": "warn", "error": "error"}
"""The level in a narrow meter (80 columns), where the bar keeps the room."""


@dataclass(frozen=True)
class MeterReading:
    """What the meter line shows; every figure comes from the composed prompt.

    Attributes:
        system_bytes: bytes of the exact system prompt (what the system bar shows).
        system_tokens: its tokens, None until counted.
        injection_bytes: the injection size the thresholds compare (the text, plus the size
            on disk of a file too large to be read).
        level: ``ok``, ``warning`` or ``error`` as core decided it.
        warn_bytes: the warning line.
        error_bytes: the error line.
        encoding: the tokenizer the counts are in.
        delta: the change the last toggle caused, e.g. ``+38.2 KiB  +9.6k tok``.
        unread_bytes: the size on disk of the files too large to be read: named beside the
            system bar, not part of it (0 when every file was read).
    """

    system_bytes: int
    system_tokens: int | None
    injection_bytes: int
    level: str
    warn_bytes: int
    error_bytes: int
    encoding: str
    delta: str = ""
    unread_bytes: int = 0

    @property
    def tokens_text(self) -> str:
        """The token figure beside :attr:`system_bytes`: ``…`` until counted."""
        return human_tokens(self.system_tokens)

    @property
    def over_argv(self) -> bool:
        """The composed system prompt is longer than a command line can carry."""
        return self.system_bytes > ARGV_LIMIT_BYTES


def meter_reading(prompt: ComposedPrompt, *, counted: bool, delta: str = "") -> MeterReading:
    """The meter's figures for ``prompt``: the composed system prompt's bytes (and its tokens
    once ``counted``), the injection against its lines, and the size on disk of any file
    too large to be read, apart."""
    injection = prompt.injection
    return MeterReading(
        system_bytes=prompt.system_meter.bytes,
        system_tokens=prompt.system_meter.tokens if counted else None,
        injection_bytes=injection.size_bytes,
        level=injection.level,
        warn_bytes=injection.warn_bytes,
        error_bytes=injection.error_bytes,
        encoding=injection.encoding,
        delta=delta,
        unread_bytes=injection.unread_bytes,
    )


def merged_spans(text: Text) -> Text:
    """``text`` with each run of same-styled neighbouring spans joined into one span.

    Every span is painted as a segment of its own: the figures and the bars' runs that meet
    in one style (a fill next to a mark of its colour) go to the screen as one."""
    spans: list[Span] = []
    for span in text.spans:
        last = spans[-1] if spans else None
        if last is not None and last.end == span.start and last.style == span.style:
            spans[-1] = Span(last.start, span.end, last.style)
        else:
            spans.append(span)
    text.spans = spans
    return text


@dataclass(frozen=True)
class _MeterParts:
    """The words around the two bars, at one width (full or compact)."""

    injection_head: Text
    injection_tail: Text
    system_head: Text
    system_tail: Text
    heads: int
    tails: int


class MeterLine(Widget):
    """Two lines: the totals with the last delta, then a bar with the three lines marked."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "meter-line--ok",
        "meter-line--warning",
        "meter-line--error",
        "meter-line--mark",
        "meter-line--track",
        "meter-line--delta",
    }

    DEFAULT_CSS = """
    MeterLine {
        height: 2;
        padding: 0 1;
        background: $panel;
        & > .meter-line--ok { color: $success; }
        & > .meter-line--warning { color: $warning; }
        & > .meter-line--error { color: $error; text-style: bold; }
        & > .meter-line--mark { color: $foreground; text-style: bold; }
        & > .meter-line--track { color: $foreground 20%; }
        & > .meter-line--delta { color: $accent; text-style: bold; }
    }
    """

    ALLOW_SELECT: ClassVar[bool] = False
    """A drawing, not text to select: its strips carry none of the offsets Textual's text
    selection maps the mouse with (see :meth:`render_line`)."""

    reading: reactive[MeterReading | None] = reactive(None)
    placeholder: reactive[str] = reactive("composing…")
    """What shows while there is no reading (``no story to compose`` in an empty workspace)."""

    _resolved_styles: dict[tuple[str, ...], Style] | None = None
    _painted: tuple[tuple[MeterReading | None, str, int], list[Strip]] | None = None

    def get_component_rich_style(
        self, *names: str, partial: bool = False, default: Style | None = None
    ) -> Style:
        """The component's style, resolved once per theme and state: Textual resolves it
        again after every repaint, which was most of the cost of a new reading."""
        if partial or default is not None:
            return super().get_component_rich_style(*names, partial=partial, default=default)
        if self._resolved_styles is None:
            self._resolved_styles = {}
        style = self._resolved_styles.get(names)
        if style is None:
            style = self._resolved_styles[names] = super().get_component_rich_style(*names)
        return style

    def notify_style_update(self) -> None:
        """The theme or the state changed: resolve the component styles again."""
        self._resolved_styles = None
        self._painted = None
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of :meth:`render`, painted once per reading and width.

        The two lines go to the screen as strips of the text's own segments: Textual's general
        text layout (wrapping, alignment, a style per span) cost several times the drawing
        itself on every toggle."""
        width = self.size.width
        key = (self.reading, self.placeholder, width)
        if self._painted is None or self._painted[0] != key:
            self._painted = (key, self._paint(width))
        strips = self._painted[1]
        if y < len(strips):
            return strips[y]
        return Strip.blank(width, self.visual_style.rich_style)

    def _paint(self, width: int) -> list[Strip]:
        base = self.visual_style.rich_style
        console = self.app.console
        strips = []
        for line in self.render().split("\n"):
            line.truncate(width, overflow="ellipsis")
            if line.style and not line.spans:
                # Text.render leaves out the text's own style when no span carries one.
                line.stylize(line.style)
            # Not padded: the widget's style fills the rest of the line, as it does for text.
            strips.append(Strip(line.render(console)).apply_style(base))
        return strips

    def render(self) -> Text:
        """Two bars, one per measure, each with its own figures and lines:

        * ``injection`` — the injected files' bytes, against the warning and error lines
          (what decides ok / over warn / cannot run);
        * ``system`` — the composed system prompt against the argv line (what a command line
          could carry), and its tokens; the size on disk of a file too large to be read,
          named apart; then the last change's Δ.
        """
        reading = self.reading
        if reading is None:
            return Text(self.placeholder, style="dim")
        width = max(self.size.width - 2, 30)
        if self.size.height == 1:
            return self._folded(reading, width)
        parts = self._parts(reading, compact=False)
        cells = width - parts.heads - parts.tails
        if cells < MIN_BAR_CELLS:
            # Narrower: the labels whole, the limits bare, while the bars keep some room.
            parts = self._parts(reading, compact=False, bare=True)
            cells = width - parts.heads - parts.tails
            cells = cells if cells >= 2 * MIN_BAR_CELLS else -1
        if cells < MIN_BAR_CELLS:
            # Narrow: short words and bare limits, so the bars stay (they say more at a glance
            # than the figures do).
            parts = self._parts(reading, compact=True)
            cells = max(width - parts.heads - parts.tails, 0)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append_text(parts.injection_head)
        if cells >= MIN_BAR_CELLS // 2:
            text.append_text(self._injection_bar(reading, cells))
        text.append_text(parts.injection_tail)
        text.append("\n")
        text.append_text(parts.system_head)
        if cells >= MIN_BAR_CELLS // 2:
            text.append_text(self._system_bar(reading, cells))
        text.append_text(parts.system_tail)
        return merged_spans(text)

    def _folded(self, reading: MeterReading, width: int) -> Text:
        """Both measures on one row (a short terminal): the compact words, each bar in half
        the room left, or no bars when that is too little."""
        parts = self._parts(reading, compact=True)
        heads = [parts.injection_head.copy(), parts.system_head.copy()]
        for head in heads:
            head.rstrip()
            head.append(" ")
        tails = (parts.injection_tail, parts.system_tail)
        gap = " │ "
        fixed = sum(t.cell_len for t in (*heads, *tails)) + len(gap)
        cells = (width - fixed) // 2
        if cells < MIN_BAR_CELLS // 2:
            # No room for bars: the words naming their marks go too, what warns stays.
            warns = reading.over_argv or reading.unread_bytes
            tails = (Text(), parts.system_tail if warns else Text())
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append_text(heads[0])
        if cells >= MIN_BAR_CELLS // 2:
            text.append_text(self._injection_bar(reading, cells))
        text.append_text(tails[0])
        text.append(gap if tails[0] else gap.lstrip(), style="dim")
        text.append_text(heads[1])
        if cells >= MIN_BAR_CELLS // 2:
            text.append_text(self._system_bar(reading, cells))
        text.append_text(tails[1])
        return merged_spans(text)

    def _injection_bar(self, reading: MeterReading, cells: int) -> Text:
        scale = max(reading.error_bytes, reading.injection_bytes) * 1.1
        lines = (reading.warn_bytes, reading.error_bytes)
        return self._bar(reading.injection_bytes, lines, scale, cells, reading.level)

    def _system_bar(self, reading: MeterReading, cells: int) -> Text:
        size = reading.system_bytes
        level = "error" if reading.over_argv else "ok"
        scale = max(ARGV_LIMIT_BYTES, size) * 1.1
        return self._bar(size, (ARGV_LIMIT_BYTES,), scale, cells, level)

    def _parts(self, reading: MeterReading, *, compact: bool, bare: bool = False) -> _MeterParts:
        level_style = self.get_component_rich_style(f"meter-line--{reading.level}")
        error_style = self.get_component_rich_style("meter-line--error")
        words = COMPACT_LEVEL_WORDS if compact else LEVEL_WORDS
        injection_head = Text.assemble(
            ("inj " if compact else "injection ", "dim"),
            (human_bytes(reading.injection_bytes), level_style),
            " ",
            (words.get(reading.level, reading.level), level_style),
            " ",
        )
        bare = bare or compact
        if bare:
            injection_tail = Text(" warn·error", style="dim")
        else:
            injection_tail = Text(
                f" warn {human_bytes(reading.warn_bytes)} · "
                f"error {human_bytes(reading.error_bytes)}",
                style="dim",
            )
        if reading.level == "error":
            # The error line is crossed: the limit it names is marked, not left dim.
            injection_tail.stylize(error_style, injection_tail.plain.index("error"))
        system_head = Text.assemble(
            ("sys " if compact else "system ", "dim"),
            (human_bytes(reading.system_bytes), "bold"),
            (f" {SENT} ", "dim"),
            (reading.tokens_text, "bold"),
            (" tok ", "dim"),
        )
        argv = " argv" if bare else f" argv {human_bytes(ARGV_LIMIT_BYTES)}"
        if reading.over_argv:
            system_tail = Text(" over" + argv, style=error_style)
        else:
            system_tail = Text(argv, style="dim")
        if reading.unread_bytes:
            # Not in the prompt: named with where the figure comes from, never added to it.
            unread = human_bytes(reading.unread_bytes)
            apart = f" {unread} unread" if bare else f" · {unread} on disk, not read"
            system_tail.append(apart, style=level_style)
        if reading.delta and not bare:
            system_tail.append("  Δ ", style="dim")
            system_tail.append(
                reading.delta, style=self.get_component_rich_style("meter-line--delta")
            )
        # Both bars get the same number of cells, so they line up.
        heads = max(injection_head.cell_len, system_head.cell_len)
        injection_head.pad_right(heads - injection_head.cell_len)
        system_head.pad_right(heads - system_head.cell_len)
        tails = max(injection_tail.cell_len, system_tail.cell_len)
        return _MeterParts(injection_head, injection_tail, system_head, system_tail, heads, tails)

    def _bar(self, size: int, lines: tuple[int, ...], scale: float, cells: int, level: str) -> Text:
        filled = min(round(size / scale * cells), cells)
        marks = {min(round(limit / scale * cells), cells - 1) for limit in lines}
        # The last line is the hard one (error, argv): gone past, it is drawn heavy in the
        # error colour; a crossed warning line keeps its plain mark.
        hard = lines[-1]
        crossed = min(round(hard / scale * cells), cells - 1) if size > hard else -1
        fill = ("█", self.get_component_rich_style(f"meter-line--{level}"))
        track = ("░", self.get_component_rich_style("meter-line--track"))
        mark = ("│", self.get_component_rich_style("meter-line--mark"))
        heavy = ("┃", self.get_component_rich_style("meter-line--error"))
        # Drawn as runs between the marks: one append per run, not one per cell.
        bar = Text()
        start = 0
        for cell in (*sorted(marks), cells):
            if start < min(filled, cell):
                bar.append(fill[0] * (min(filled, cell) - start), style=fill[1])
            if max(filled, start) < cell:
                bar.append(track[0] * (cell - max(filled, start)), style=track[1])
            if cell < cells:
                glyph, style = heavy if cell == crossed else mark
                bar.append(glyph, style=style)
            start = cell + 1
        return bar
