"""The meter line: the system prompt's size against the warning, argv and error lines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from promptdeck.core.tokens import ARGV_LIMIT_BYTES
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ..format import human_bytes, human_tokens

LEVEL_WORDS = {
    "ok": "ok",
    "warning": "over warn",
    "error": "over error: cannot run",
}


@dataclass(frozen=True)
class MeterReading:
    """What the meter line shows; every figure comes from the composed prompt.

    Attributes:
        system_bytes: bytes of the exact system prompt.
        system_tokens: its tokens, None until counted.
        injection_bytes: the injection size the thresholds compare.
        injection_text_bytes: bytes of the injection text actually in the prompt (smaller
            than ``injection_bytes`` when a file is too large to be read).
        level: ``ok``, ``warning`` or ``error`` as core decided it.
        warn_bytes: the warning line.
        error_bytes: the error line.
        encoding: the tokenizer the counts are in.
        delta: the change the last toggle caused, e.g. ``+38.2 KiB  +9.6k tok``.
    """

    system_bytes: int
    system_tokens: int | None
    injection_bytes: int
    level: str
    warn_bytes: int
    error_bytes: int
    encoding: str
    delta: str = ""
    injection_text_bytes: int | None = None

    @property
    def would_send_bytes(self) -> int:
        """The system prompt as it would be with every file read (what the bar shows)."""
        if self.injection_text_bytes is None:
            return self.system_bytes
        return self.system_bytes + max(self.injection_bytes - self.injection_text_bytes, 0)


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

    reading: reactive[MeterReading | None] = reactive(None)
    placeholder: reactive[str] = reactive("composing…")
    """What shows while there is no reading (``no story to compose`` in an empty workspace)."""

    def render(self) -> Text:
        """The totals line and the bar line."""
        reading = self.reading
        if reading is None:
            return Text(self.placeholder, style="dim")
        level_style = self.get_component_rich_style(f"meter-line--{reading.level}")
        head = Text.assemble(
            ("system ", "dim"),
            (human_bytes(reading.system_bytes), "bold"),
            "  ",
            (human_tokens(reading.system_tokens), "bold"),
            (" tok", "dim"),
            ("  injection ", "dim"),
            (human_bytes(reading.injection_bytes), level_style),
            " ",
            (LEVEL_WORDS.get(reading.level, reading.level), level_style),
        )
        if reading.delta:
            head.append("  Δ ", style="dim")
            head.append(reading.delta, style=self.get_component_rich_style("meter-line--delta"))
        head.append("\n")
        head.append_text(self._bar(reading, max(self.size.width - 2, 20)))
        return head

    def _bar(self, reading: MeterReading, width: int) -> Text:
        lines = (
            ("warn", reading.warn_bytes),
            ("argv", ARGV_LIMIT_BYTES),
            ("error", reading.error_bytes),
        )
        label = (
            f" warn {human_bytes(reading.warn_bytes)} · argv {human_bytes(ARGV_LIMIT_BYTES)}"
            f" · error {human_bytes(reading.error_bytes)}"
        )
        if width - len(label) < 20:
            label = " │ warn · argv · error"
        cells = max(width - len(label), 10)
        size = reading.would_send_bytes
        scale = max(reading.error_bytes, ARGV_LIMIT_BYTES, size) * 1.1
        filled = min(round(size / scale * cells), cells)
        marks = {min(round(limit / scale * cells), cells - 1): name for name, limit in lines}
        system_level = "ok"
        if reading.level == "error" or size > reading.error_bytes:
            system_level = "error"
        elif reading.level == "warning" or size > min(reading.warn_bytes, ARGV_LIMIT_BYTES):
            system_level = "warning"
        fill_style = self.get_component_rich_style(f"meter-line--{system_level}")
        track_style = self.get_component_rich_style("meter-line--track")
        mark_style = self.get_component_rich_style("meter-line--mark")
        bar = Text()
        for cell in range(cells):
            if cell in marks:
                bar.append("│", style=mark_style)
            elif cell < filled:
                bar.append("█", style=fill_style)
            else:
                bar.append("░", style=track_style)
        bar.append(label, style="dim")
        return bar
