"""Story keys: one key in its forms, matched on word boundaries in file names."""

from __future__ import annotations

import pytest
from promptdeck.core.stories.keys import name_matches_key, normalize_key


@pytest.mark.parametrize(
    ("key", "name", "expected"),
    [
        ("A-1", "sprint-a-1-discovery.md", True),
        ("A-1", "sprint-A-10-story.md", False),
        ("a-1", "SPRINT-A-1.md", True),
        ("1-1", "11-1-x.md", False),
        ("1-1", "1-10-x.md", False),
        ("1.2", "1-2-user-registration.md", True),
        ("1_2", "1.2-notes.md", True),
        ("A-1", "epica-1.md", False),
        ("A-1", "a-1b.md", False),
    ],
)
def test_key_matching_is_on_boundaries(key: str, name: str, expected: bool) -> None:
    assert name_matches_key(name, key) is expected


def test_key_forms_are_one_key() -> None:
    assert normalize_key("1.2") == normalize_key("1-2") == normalize_key("1_2") == "1-2"
    assert normalize_key(" A-1 ") == "a-1"
