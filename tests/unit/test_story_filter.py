"""Filtering and grouping the story tree's contents (pure functions, no app)."""

from __future__ import annotations

from promptdeck.core.stories.filter import filter_stories, group_stories
from promptdeck.core.stories.model import Story

STORIES = (
    Story("1-1", "1-1", "Parse the config", "done", "bmad", "1", "Foundations"),
    Story("1-2", "1-2", "Token meters", "in-progress", "bmad", "1", "Foundations"),
    Story("2-1", "2-1", "Story tree", "backlog", "bmad", "2", "The app"),
    Story("add-auth:1", "add-auth-1", "Login form", "ready-for-dev", "openspec", "add-auth"),
)


def test_blank_query_keeps_everything_in_order() -> None:
    assert filter_stories(STORIES, "  ") == STORIES


def test_query_matches_every_word_case_insensitively() -> None:
    assert [s.id for s in filter_stories(STORIES, "TOKEN")] == ["1-2"]
    assert [s.id for s in filter_stories(STORIES, "foundations done")] == ["1-1"]
    assert [s.id for s in filter_stories(STORIES, "add-auth")] == ["add-auth:1"]
    assert filter_stories(STORIES, "nothing-like-this") == ()


def test_groups_keep_first_appearance_order_and_sources_apart() -> None:
    groups = group_stories(STORIES)
    assert [(g.source, g.group) for g in groups] == [
        ("bmad", "1"),
        ("bmad", "2"),
        ("openspec", "add-auth"),
    ]
    assert groups[0].label == "Epic 1 · Foundations"
    assert groups[2].label == "change add-auth"
    assert [s.id for s in groups[0].stories] == ["1-1", "1-2"]
