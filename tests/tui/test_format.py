"""How sizes and deltas read on screen."""

from __future__ import annotations

from promptdeck.core.units import human_bytes, human_tokens
from promptdeck.tui.format import delta_text, share_bar


def test_human_sizes() -> None:
    assert human_bytes(512) == "512 B"
    assert human_bytes(39_117) == "38.2 KiB"
    assert human_bytes(-39_117) == "-38.2 KiB"
    assert human_tokens(9_600) == "9.6k"
    assert human_tokens(None) == "…"


def test_delta_reads_like_the_issue() -> None:
    assert delta_text(39_117, 9_600) == "+38.2 KiB  +9.6k tok"
    assert delta_text(-39_117, -9_600) == "-38.2 KiB  -9.6k tok"
    assert delta_text(39_117, None) == "+38.2 KiB"
    assert delta_text(0, 0) == ""


def test_share_bar_is_proportional_and_fixed_width() -> None:
    assert share_bar(0, 100, 8) == " " * 8
    assert share_bar(100, 100, 8) == "█" * 8
    half = share_bar(50, 100, 8)
    assert half == "████    "
    assert len(share_bar(1, 10_000, 8)) == 8
