"""Discovery's quick name tests choose exactly the names its exact test chooses.

An artifacts folder holds tens of thousands of names; discovery narrows them with cheap
necessary tests before the exact one (:func:`_may_be_story_file`). These tests pin that the
narrowing never changes which files are opened, for ASCII names and for the Unicode letters and
digits that fold or match unlike their ASCII look-alikes.
"""

from __future__ import annotations

import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from promptdeck.core.plans.story_scan import _may_be_story_file, story_file_names
from promptdeck.core.stories.keys import artifact_category, leading_key, leading_key_category

_PIECES = st.one_of(
    st.sampled_from(["1", "2", "12", "0042", "12345", "a", "A", "ab", "abcd", "x", "10"]),
    st.sampled_from(["-", ".", "_", " ", "-", "-"]),
    st.sampled_from(["sprint-", "tech-spec-", "tech_spec", "techspec-", "story-", "spec-"]),
    st.sampled_from(["discovery", "tech-spec", "review", "round", "epic"]),
    st.sampled_from([".md", ".MD", ".Md", ".log", ".md.bak"]),
    # Letters and digits that regular expressions treat unlike their ASCII look-alikes.
    st.sampled_from(["İ", "ı", "ſ", "\u212a", "é", "٣", "５", "Ⅿ", "ᴰ"]),
    st.characters(blacklist_characters="\0/", blacklist_categories=("Cs",)),
)
_NAME = st.lists(_PIECES, min_size=1, max_size=10).map("".join)


@settings(max_examples=400, deadline=None)
@example(names=["a-1٣٣٣5.md", "a-1234٥.md", "x-٣.md"])  # Unicode digits after a key
@example(names=["standup-000123.md", "review-1-2-round-3.md", "22-3-agent-discovery.md"])
@example(names=["sprint-1-2-discovery.md", "tech-spec-1-2-x.md", "1-1a-split.MD"])
@given(names=st.lists(_NAME, max_size=40))
def test_the_quick_tests_keep_what_the_exact_test_keeps(names: list[str]) -> None:
    assert story_file_names(names) == [name for name in names if _may_be_story_file(name)]


@pytest.mark.parametrize(
    ("name", "opened"),
    [
        ("1-2-user-login.md", True),
        ("review-1-2-round-3.md", True),  # its heading may still say `# Story 1.2: …`
        ("22-3-agent-discovery.md", True),  # starts with the key: its heading decides
        ("standup-000123.md", False),  # a six-digit number is no story number
        ("sprint-1-2-discovery.md", False),
        ("tech-spec-1-2-plan.md", False),
        ("1-2-user-login.log", False),
        ("notes.md", False),
    ],
)
def test_names_discovery_opens(name: str, opened: bool) -> None:
    assert story_file_names([name]) == ([name] if opened else [])


def test_only_the_letters_of_md_lower_case_to_them() -> None:
    # The `.md` test compares endings as written (four spellings) instead of a lower-cased
    # copy of every name: that is the same only while no other character lower-cases to
    # `.`, `m` or `d`.
    others = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if not 0xD800 <= code <= 0xDFFF
        and chr(code) not in ".mMdD"
        and any(char in ".md" for char in chr(code).lower())
    ]
    assert others == []


@settings(max_examples=400, deadline=None)
@example(name="sprint-1-2-discovery.md")
@example(name="tech-spec-1-2٣-x.md")
@example(name="story-a.1-tech_spec.md")
@given(name=_NAME)
def test_one_reading_of_a_name_gives_its_key_and_category(name: str) -> None:
    lead = leading_key(name)
    expected = (lead, artifact_category(name, lead) if lead is not None else None)
    assert leading_key_category(name) == expected
