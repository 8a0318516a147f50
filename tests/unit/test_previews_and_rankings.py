"""One preview of a tool line for both agent backends; one ranking of the largest files."""

from __future__ import annotations

from promptdeck.core.injection.model import largest_first
from promptdeck.core.textfit import one_line_preview


def test_a_preview_is_one_line_with_its_whitespace_collapsed() -> None:
    assert one_line_preview("ls  -la\n\t/tmp\n", 200) == "ls -la /tmp"


def test_a_long_preview_is_cut_to_its_limit_with_an_ellipsis() -> None:
    text = "x" * 50
    cut = one_line_preview(text, 10)
    assert cut == "x" * 9 + "…"
    assert len(cut) == 10
    assert one_line_preview("x" * 10, 10) == "x" * 10


def test_the_largest_files_come_first_ties_by_path() -> None:
    sized = [("b.md", 10), ("a.md", 10), ("c.md", 99), ("d.md", 1)]
    assert largest_first(sized) == [("c.md", 99), ("a.md", 10), ("b.md", 10), ("d.md", 1)]
    assert largest_first(sized, 2) == [("c.md", 99), ("a.md", 10)]
    assert largest_first([], 3) == []
