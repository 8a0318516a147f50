"""What the project's plan files look like on disk now, to tell when the story tree is stale.

The plan is a handful of files and folders: ``sprint-status.yaml``, the story files, the
artifacts folder (a new story file changes its listing), ``openspec/changes`` and each
change's ``tasks.md``. A :class:`PlanSnapshot` records each one's ``stat`` stamp; two
snapshots that differ mean the catalog should be read again.

Why polling and not an OS file watcher: the watched set is tens to hundreds of files, and one
``stat`` each costs microseconds, so a poll every second is cheap; it needs no inotify
(containers, network mounts and WSL folders often have none or run out of watches), no
native dependency, and it answers a file swapped for a FIFO, a symlink out of the project or
a huge file with the guarded reader's own verdict
(:func:`~promptdeck.core.project.textfiles.stat_regular`) before anything is read. The bound
:data:`WATCH_LIMIT` keeps a project with thousands of plan files from turning each poll into a
crawl: past it, the first files (sprint status and stories in catalog order) are watched and the
snapshot says how many were left out.
"""

from __future__ import annotations

import os
import stat as stat_module
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..project.textfiles import TextProblem, stat_regular
from ..project.workspace import Workspace
from .model import StoryCatalog
from .sources.sprint_status import SPRINT_STATUS_NAME

WATCH_LIMIT = 400
"""Most plan files and folders one snapshot stats."""

Stamp = tuple[int, int, int]
"""``(st_mtime_ns, st_size, st_ino)``: what changes when a file is written or replaced."""


@dataclass(frozen=True)
class PlanSnapshot:
    """Each watched plan path (relative to the root) and its stamp, or why it is unusable.

    Attributes:
        entries: path → stamp, or the guarded reader's verdict (``unreadable: fifo``); a
            missing path has no entry.
        total: how many plan paths there were (more than ``entries`` past the bound).
    """

    entries: Mapping[str, Stamp | str] = field(default_factory=dict)
    total: int = 0

    @property
    def left_out(self) -> int:
        """Plan paths not watched because of :data:`WATCH_LIMIT`."""
        return max(0, self.total - WATCH_LIMIT)

    def problems(self) -> list[str]:
        """One line per watched file the guarded reader refuses (``path: unreadable: fifo``)."""
        return [
            f"{path}: {entry}" for path, entry in self.entries.items() if isinstance(entry, str)
        ]

    def changed_since(self, earlier: PlanSnapshot) -> list[str]:
        """The paths whose stamp or verdict differs from ``earlier`` (added and gone too)."""
        paths = set(self.entries) | set(earlier.entries)
        return sorted(p for p in paths if self.entries.get(p) != earlier.entries.get(p))


def plan_paths(workspace: Workspace, catalog: StoryCatalog) -> list[str]:
    """The plan paths to watch, most telling first: the sprint status, the folders whose
    listing shows a new story or change, then each story's file (once each)."""
    config = workspace.config
    artifacts = config.paths_artifacts.rstrip("/")
    changes = f"{config.paths_openspec.rstrip('/')}/changes"
    paths = [f"{artifacts}/{SPRINT_STATUS_NAME}", artifacts, changes]
    paths += [story.path for story in catalog.stories if story.path]
    return list(dict.fromkeys(paths))


def _folder_stamp(path: str) -> Stamp | str | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat_module.S_ISDIR(info.st_mode):
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def take_snapshot(workspace: Workspace, paths: Sequence[str]) -> PlanSnapshot:
    """Stat the first :data:`WATCH_LIMIT` of ``paths`` (nothing is opened or read).

    A file is stamped only if the guarded reader would read it (inside the project, a regular
    file, within ``[read] max_bytes``); otherwise its entry is the reader's verdict.
    """
    root = workspace.root
    limit = workspace.config.read_max_bytes
    entries: dict[str, Stamp | str] = {}
    for rel in paths[:WATCH_LIMIT]:
        full = root / rel
        folder = _folder_stamp(str(full))
        if folder is not None:
            entries[rel] = folder
            continue
        checked = stat_regular(full, root, limit)
        if isinstance(checked, TextProblem):
            if checked.reason != "missing":
                entries[rel] = str(checked)
            continue
        info = checked[1]
        entries[rel] = (info.st_mtime_ns, info.st_size, info.st_ino)
    return PlanSnapshot(entries, len(paths))
