"""The cache row's cost cell in core's words shortens like every other cell; a cost that is
not known never shortens into a figure."""

from __future__ import annotations

from promptdeck.tui.session.cache_cells import fitted_cache_row

PRICED = (
    "cache · layered · sequence $0.4701 (claude-sonnet-4-6, estimated, first requests only)"
    " · shared prefix kickoff→dev 4,326/15,621 B (parts at Layer-2)"
)
UNPRICED = PRICED.replace("$0.4701 (claude-sonnet-4-6", "unknown (model unknown")


def test_a_priced_sequence_shortens_to_cents_marked_as_an_estimate() -> None:
    shown = fitted_cache_row(PRICED, 40)
    assert "≈$0.47" in shown and len(shown) <= 40
    assert "seq ≈$0.4701 (claude-sonnet-4-6)" in fitted_cache_row(PRICED, 100)


def test_an_unknown_cost_shortens_to_a_question_never_a_figure() -> None:
    shown = fitted_cache_row(UNPRICED, 40)
    assert "seq ?" in shown and "$" not in shown and len(shown) <= 40
