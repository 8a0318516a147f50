"""Fitting paths into a column: shortened from the middle, and never so that two files read
the same."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from promptdeck.core.textfit import shorten_path, shorten_paths

ART = "_bmad-output/implementation-artifacts"


def test_a_path_that_fits_is_shown_whole() -> None:
    assert shorten_paths([f"{ART}/1-2-a.md"], 80) == [f"{ART}/1-2-a.md"]


def test_names_that_would_read_the_same_keep_where_they_differ() -> None:
    paths = [f"{ART}/1-2-publish-pages.md", f"{ART}/1-2-publish-images.md"]
    # The plain rule gives both the same text at this width...
    assert len({shorten_path(path, 14) for path in paths}) == 1
    shown = shorten_paths(paths, 14)
    # ...the set rule keeps them apart, each with its key's start and its own middle.
    assert shown == ["1-2-…p…ages.md", "1-2-…im…ges.md"]
    assert all(len(text) <= 14 for text in shown)


def test_paths_that_come_out_distinct_are_shortened_as_usual() -> None:
    paths = [f"{ART}/1-2-publish-pages.md", f"{ART}/3-4-other-story.md"]
    assert shorten_paths(paths, 16) == [shorten_path(path, 16) for path in paths]


names = st.text(alphabet="abc-12.", min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(names, names, st.integers(12, 40))
def test_two_different_files_never_read_the_same(first: str, second: str, width: int) -> None:
    assume(first != second)
    shown = shorten_paths([f"docs/{first}", f"other/{second}"], width)
    assert all(len(text) <= width for text in shown)
    assert shown[0] != shown[1]
