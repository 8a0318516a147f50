"""An epic with no known title is labelled by its id alone ("Epic 5", never "Epic 5 · Epic 5")."""

from __future__ import annotations

from promptdeck.core.stories.filter import StoryGroup
from promptdeck.core.stories.model import Story


def test_an_epic_without_a_title_shows_its_id_once() -> None:
    story = Story(id="5-1", key="5-1", title="X", status="backlog", source="bmad", group="5")
    assert StoryGroup("bmad", "5", story.group_title, (story,)).label == "Epic 5"
    titled = StoryGroup("bmad", "2", "Class & Module Enrichment Detection", (story,))
    assert titled.label == "Epic 2 · Class & Module Enrichment Detection"
