"""A composed prompt's notes, the most serious first: what the agent will not see of the story
itself (no story file, the story file left out), then an injection over the error line, then
the rest.

Kept apart from :mod:`.compose` so a face can order the notes of a prompt it was handed (the
app's first frame gets its prompt from the opening helper) without importing the composer and
the injection builder behind it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..injection.model import Injection
from ..phases.table import Phase
from ..project.config import Config
from ..stories.model import Story
from .request import ComposedPrompt, check_request


def no_story_file_note(story: Story, config: Config) -> str:
    """The note for a story with no story file: where promptdeck looked, and what the agent
    gets instead. Its words live here alone, so they change in one place."""
    folders = story.searched or (config.paths_artifacts.rstrip("/"),)
    looked = ", ".join(f"{folder}/" for folder in folders)
    return (
        f"story {story.id} has no story file (looked in {looked} and their subfolders: "
        f"no {story.key}-*.md, no file headed '# Story {story.id}:'): the agent gets its id "
        "and title only"
    )


def notes_by_seriousness(
    prompt: ComposedPrompt, config: Config, more: Sequence[str] = ()
) -> tuple[str, ...]:
    """Every note of ``prompt`` (its compose's, its injection's) and ``more``, once each, the
    most serious first.

    First what the agent will not see of the story itself (no story file, the story file left
    out of the injection), then an injection over the error line (the run cannot start), then
    the rest in the order they were found. A face with room for a few notes shows the head of
    this order and counts the rest, so a serious note is never the one cut.

    Args:
        prompt: the composed prompt.
        config: the config it was composed with (the story-file note names its folder).
        more: notes of the face's own (a rules file its agent reads twice), least serious.
    """
    story_notes = set(
        story_file_warnings(
            prompt.story,
            check_request(prompt.request),
            prompt.injection,
            prompt.summarised,
            config,
        )
    )
    injection = prompt.injection
    # The builder says the error line first among the injection's notes.
    over = injection.level == "error" and injection.warnings
    error_line = injection.warnings[0] if over else None

    def rank(note: str) -> int:
        if note in story_notes:
            return 0
        return 1 if note == error_line else 2

    unique = dict.fromkeys((*prompt.warnings, *injection.warnings, *more))
    return tuple(sorted(unique, key=rank))


def story_file_warnings(
    story: Story,
    phase: Phase,
    injection: Injection,
    summarised: tuple[str, ...],
    config: Config,
) -> list[str]:
    """Why the agent may not see the story's file: it has none, or the injection left it out."""
    if story.path is None and phase.scope == "story" and story.layout not in ("classic", "spec"):
        return [
            f"story {story.id} has no file of its own yet ({story.layout}): the agent gets its "
            "id, title and the files listed for it"
        ]
    if story.path is None and phase.scope == "story":
        return [no_story_file_note(story, config)]
    if story.path is not None and story.id not in summarised and story.source == "bmad":
        shown = {f.path: f for f in injection.files}
        entry = shown.get(story.path)
        if entry is None or entry.status not in ("included", "duplicate"):
            status = entry.status if entry is not None else "not matched"
            return [
                f"story file {story.path} is not in the injection ({status}): the agent will "
                "not see it"
            ]
    return []
