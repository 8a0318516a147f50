"""Where a phase's spend went: categories that sum to the requests' reported usage, and the
flags for what looks wasted."""

from __future__ import annotations

from pathlib import Path

from flight_runs import INJECTED, INJECTED_TEXT, SYSTEM, claude_stream
from promptdeck.core.flight.attribution import (
    CATEGORIES,
    SpendInput,
    injected_files,
    spend,
)
from promptdeck.core.flight.claude import claude_turns
from promptdeck.core.flight.model import Addition, Request, TurnList
from promptdeck.core.tokens.pricing import load_prices

ROOT = Path("/project")


def _given(**changes: object) -> SpendInput:
    values: dict[str, object] = {
        "prompt_bytes": len(SYSTEM),
        "injected": injected_files(SYSTEM),
        "cwd": str(ROOT),
        "root": ROOT,
        "price": load_prices().find("claude-sonnet-4-6"),
    }
    values.update(changes)
    return SpendInput(**values)  # type: ignore[arg-type]


def _turns() -> TurnList:
    return claude_turns(claude_stream(str(ROOT)), cwd=None)


def test_the_categories_sum_to_the_reported_usage_in_tokens_and_dollars() -> None:
    result = spend(_turns(), _given())
    assert [c.name for c in result.categories] == list(CATEGORIES)
    assert sum(c.tokens for c in result.categories) == result.total_tokens
    assert result.total_tokens == 17_763
    dollars = [c.dollars for c in result.categories]
    assert all(d is not None for d in dollars)
    assert abs(sum(d for d in dollars if d is not None) - (result.total_dollars or 0)) < 1e-12
    by_name = {c.name: c.tokens for c in result.categories}
    # The subagent's own requests, and its answer carried in the parent's next request.
    assert by_name["subagents"] > 900 + 30 + 950 + 25
    assert [r.name for r in result.reads] == [INJECTED]


def test_unknown_price_leaves_dollars_unknown() -> None:
    result = spend(_turns(), _given(price=None))
    assert result.total_dollars is None
    assert all(c.dollars is None for c in result.categories)


def test_the_injected_file_read_unchanged_is_flagged_with_its_bytes_and_layer() -> None:
    (flag,) = [f for f in spend(_turns(), _given()).flags if "injected" in f]
    assert INJECTED in flag and "Layer-5" in flag
    assert f"{len(INJECTED_TEXT.encode())} bytes paid twice" in flag


def test_a_changed_injected_file_is_not_flagged() -> None:
    other = SYSTEM.replace("One parser per format.", "Two parsers.")
    assert not [
        f for f in spend(_turns(), _given(injected=injected_files(other))).flags if "injected" in f
    ]


def _request(
    index: int, context: int, write: int, at: float, added: tuple[Addition, ...] = ()
) -> Request:
    return Request(index, f"m{index}", "", context - write, 0, write, 10, at, added)


def test_a_file_read_twice_a_mid_phase_write_and_the_window_line_are_flagged() -> None:
    read = Addition("Read", "/project/a.py", 400, "t", "")
    turns = TurnList(
        "claude",
        "x",
        requests=(
            _request(1, 5000, 5000, 0.0),
            _request(2, 5200, 100, 10.0, (read,)),
            _request(3, 5400, 5400, 700.0, (read,)),
            _request(4, 170_000, 170_000, 710.0),
        ),
    )
    flags = spend(turns, _given()).flags
    assert "read a.py 2 times" in flags
    (ttl,) = [f for f in flags if "at 3:" in f]
    assert "TTL gap: 690 s" in ttl
    (changed,) = [f for f in flags if "at 4:" in f]
    assert "changed block" in changed
    assert any("request 4 is near the auto-compact line" in f for f in flags)


def test_a_request_with_unknown_usage_is_never_summed_in() -> None:
    turns = TurnList(
        "claude",
        "x",
        requests=(_request(1, 5000, 5000, 0.0), Request(2, "m2", "", None, 0, 0, 5)),
    )
    result = spend(turns, _given())
    assert result.unknown == 1
    assert result.total_tokens == 5010
