"""The story catalog: both sources side by side.

:func:`load_catalog` asks each adapter (``sources/bmad.py``, ``sources/openspec.py``) for its
stories and the files it passed over, and returns them as one :class:`StoryCatalog`: BMAD
stories first, in natural key order (``1-10`` after ``1-9``), then OpenSpec changes
alphabetically with their task groups in ``tasks.md`` order.

The text-file checks the sources share live in :mod:`promptdeck.core.project.textfiles`; the result
type, paths and sort order they share in :mod:`.sources.common`, so the sources never import this
module.
"""

from __future__ import annotations

from ..project.workspace import Workspace
from .keys import normalize_key
from .model import Story, StoryCatalog
from .sources import bmad, openspec
from .sources.common import relpath


def project_context_path(workspace: Workspace) -> str | None:
    """The first configured project-context file that exists, root-relative, or None.

    Args:
        workspace: the workspace whose ``paths.project_context`` list is checked in order.
    """
    for candidate in workspace.config.paths_project_context:
        path = workspace.root / candidate
        if path.is_file():
            return relpath(workspace.root, path)
    return None


def load_catalog(workspace: Workspace) -> StoryCatalog:
    """Every story of the workspace, from both sources, and every file passed over.

    Never raises for a bad story file: each one is a :class:`SkippedFile` with its reason.

    Args:
        workspace: the workspace to scan.

    Returns:
        BMAD stories (natural key order), then OpenSpec stories (changes alphabetically,
        groups in ``tasks.md`` order), with the skipped files and warnings of both sources.
    """
    bmad_result = bmad.load_stories(workspace)
    openspec_result = openspec.load_stories(workspace)
    stories: tuple[Story, ...] = bmad_result.stories + openspec_result.stories
    return StoryCatalog(
        stories=stories,
        skipped=bmad_result.skipped + openspec_result.skipped,
        warnings=bmad_result.warnings + openspec_result.warnings,
    )


def where_stories_come_from(workspace: Workspace) -> list[str]:
    """What promptdeck looks for and how to start, for a workspace with no stories (the app's
    empty preview and ``promptdeck stories`` say the same)."""
    config = workspace.config
    return [
        f"No stories found in {workspace.root}.",
        "promptdeck looks for:",
        f"  BMAD: {config.paths_artifacts}/sprint-status.yaml and story files"
        f" {config.paths_artifacts}/<epic>-<story>-<slug>.md",
        f"  OpenSpec: {config.paths_openspec}/changes/<change>/tasks.md (## N. task groups)",
        "To start: create one of those, open another folder (promptdeck --root PATH),"
        " or try the demo (promptdeck demo).",
    ]


def load_story_catalog(workspace: Workspace, story_id: str) -> StoryCatalog:
    """A catalog that is sure to answer ``find(story_id)`` as :func:`load_catalog`'s would.

    A BMAD id is looked up first with a scan narrowed to file names holding its key; an
    OpenSpec id (``change:N``) reads only that change. Whenever the narrowed scan cannot be
    sure — no story file found, or not exactly one story — the full catalog is loaded, so the
    answer and its errors are the full catalog's. This keeps one-story commands (``inspect``,
    ``compose``, ``run``) from reading every story of a large workspace.
    """
    wanted = story_id.strip()
    if ":" in wanted:
        change, _, _number = wanted.partition(":")
        change_dir = workspace.root / workspace.config.paths_openspec / "changes" / change
        if change and "/" not in change and change_dir.is_dir():
            result = openspec.load_change(workspace, change_dir)
            narrowed = StoryCatalog(result.stories, result.skipped, result.warnings)
            if any(s.id.lower() == wanted.lower() for s in narrowed.stories):
                return narrowed
    elif normalize_key(wanted):
        result = bmad.load_stories(workspace, only_key=normalize_key(wanted))
        if len(result.stories) == 1 and result.stories[0].path is not None:
            return StoryCatalog(result.stories, result.skipped, result.warnings)
    return load_catalog(workspace)


def epic_stories(catalog: StoryCatalog, story: Story) -> tuple[Story, ...]:
    """The stories of ``story``'s epic (at least ``story`` itself)."""
    return catalog.in_group(story.group) or (story,)


def gather_story(
    workspace: Workspace, catalog: StoryCatalog | None, story_id: str, *, whole_epic: bool
) -> tuple[Story, tuple[Story, ...]]:
    """The story a prompt is composed for and the stories the phase covers with it.

    Args:
        workspace: the workspace whose plan files hold the stories.
        catalog: the stories already loaded; when None, only what the phase needs is loaded.
        story_id: the story's id.
        whole_epic: True for an epic-scope phase (its stories are every story of the epic);
            False for a story phase (its stories are the story alone).

    Raises:
        StoryNotFound: no story matches ``story_id``.
    """
    if catalog is None:
        # An epic-scope phase needs every story of the epic; a story phase needs only its own.
        catalog = load_catalog(workspace) if whole_epic else load_story_catalog(workspace, story_id)
    story = catalog.find(story_id)
    return story, (epic_stories(catalog, story) if whole_epic else (story,))
