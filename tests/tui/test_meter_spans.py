"""The meter's bars are drawn a cell at a time and painted as runs: joining neighbouring spans
of one style must leave every character with the style it had."""

from __future__ import annotations

from promptdeck.tui.widgets.meter_line import merged_spans
from rich.style import Style
from rich.text import Text

FILL = Style(color="green")
TRACK = Style(color="grey50")
MARK = Style(bold=True)


def _styles_per_character(text: Text) -> list[list[str | Style]]:
    per: list[list[str | Style]] = [[] for _ in text.plain]
    for span in text.spans:
        for index in range(span.start, span.end):
            per[index].append(span.style)
    return per


def _bar() -> Text:
    text = Text("injection ", style="dim")
    for cell in range(24):
        style = MARK if cell == 17 else FILL if cell < 12 else TRACK
        text.append("│" if cell == 17 else "█" if cell < 12 else "░", style=style)
    text.append(" warn", style="dim")
    return text


def test_runs_of_one_style_become_one_span_and_every_character_keeps_its_style() -> None:
    drawn = _bar()
    before = _styles_per_character(drawn.copy())
    spans_before = len(drawn.spans)
    merged = merged_spans(drawn)
    assert merged.plain == _bar().plain
    assert _styles_per_character(merged) == before
    # 12 fill cells, 5 track, 1 mark, 6 track, and the words: five runs, not 25 spans.
    assert len(merged.spans) == 5 < spans_before


def test_spans_of_one_style_that_do_not_touch_stay_apart() -> None:
    text = Text()
    text.append("ab", style=FILL)
    text.append("cd")
    text.append("ef", style=FILL)
    merged = merged_spans(text)
    assert [(s.start, s.end) for s in merged.spans] == [(0, 2), (4, 6)]
