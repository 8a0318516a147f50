"""The shared learnings file starts itself (seed 003).

Seed 003 gives the dev prompt a "Shared Learnings" section only when the learnings file holds
more than its template — so with no file at all, agents would never be told to record, and
shared learnings could never begin. promptdeck therefore:

- writes the file from :data:`~promptdeck.core.prompt.story.LEARNINGS_TEMPLATE` at the first
  dev run of a story whose learnings file does not exist yet (:func:`start_learnings`, called
  by the runner after its git snapshot, so the new file is staged with that story's changes);
- tells every dev prompt where to record (one line, not a section) while the file holds only
  the template; the Shared Learnings section, with the entries, appears once it holds more.

Which file: ``[paths] learnings`` (default ``.promptdeck/learnings.md``: one file for the
whole project, BMAD and OpenSpec alike). A ``{group}`` in the path is the story's epic (BMAD)
or change (OpenSpec), for a file per epic or per change, e.g.
``openspec/changes/{group}/learnings.md``.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..project.state_folder import STATE_DIRNAME, check_state_path, state_dir
from ..project.workspace import Workspace
from ..stories.model import Story
from .story import LEARNINGS_TEMPLATE


def learnings_path(workspace: Workspace, story: Story | None = None) -> str:
    """The learnings file of ``story`` as configured, ``{group}`` filled in."""
    configured = workspace.config.paths_learnings
    if story is not None:
        configured = configured.replace("{group}", story.group.replace(":", "-"))
    return Path(configured).as_posix()


def start_learnings(workspace: Workspace, story: Story) -> str | None:
    """Create ``story``'s learnings file from the template when it does not exist yet.

    Returns:
        The path created (as configured), or None when it existed, lies outside the project,
        or could not be written — a learnings file never stops a run.
    """
    shown = learnings_path(workspace, story)
    path = Path(shown)
    if not path.is_absolute():
        path = workspace.root / path
    if path.exists() or path.is_symlink():
        return None
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not workspace.contains(parent):
        return None
    try:
        if path.is_relative_to(workspace.root / STATE_DIRNAME):
            # The default `.promptdeck/learnings.md`: promptdeck's own folder has no links.
            state_dir(workspace.root, path.parent)
            check_state_path(workspace.root, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not workspace.contains(path.parent):
            return None
        with path.open("x", encoding="utf-8") as handle:
            handle.write(LEARNINGS_TEMPLATE)
    except (OSError, UsageError):
        return None
    return shown
