"""The story catalog: both sources side by side.

:func:`load_catalog` asks each reader (:mod:`.bmad`, :mod:`.openspec`, …) for its
stories and the files it passed over, and returns them as one :class:`StoryCatalog`: BMAD
stories first, in natural key order (``1-10`` after ``1-9``), then OpenSpec changes
alphabetically with their task groups in ``tasks.md`` order.

The text-file checks the readers share live in :mod:`promptdeck.core.project.textfiles`; the
result type, paths and sort order they share in the stories room (its model and keys), so the
readers never import this module.

The plan snapshot (:class:`PlanSnapshot`, :func:`take_snapshot`) is what the project's plan
files look like on disk now, to tell when the story tree is stale. The plan is a handful of
files and folders: ``sprint-status.yaml``, the story files, the artifacts folder (a new story
file changes its listing), ``openspec/changes`` and each change's ``tasks.md``. A
:class:`PlanSnapshot` records each one's ``stat`` stamp; two snapshots that differ mean the
catalog should be read again.

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
from dataclasses import field

from ..lean_dataclass import dataclass
from ..project.listing import one_scan
from ..project.textfiles import TextProblem, stat_regular
from ..project.workspace import Workspace
from ..stories.model import SourceResult, Story, StoryCatalog, relpath


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


def load_bmad_plan(workspace: Workspace, only_key: str | None = None) -> SourceResult:
    """Every BMAD story of the workspace, whichever layout keeps it.

    A v7 initiative ticket tree, when the workspace has one, is the plan: BMAD v7 no longer
    reads the v6 folders (a migrated project keeps them in ``archive-v6/`` as history), so
    neither does promptdeck. Otherwise the v6 stories come with the artifacts folder's build
    specs and epic contexts joined to them, and the bmad-spec folders' stories follow.

    Args:
        workspace: the workspace to scan.
        only_key: keep only the story with this normalized key (a one-story lookup).
    """
    # The v6 reader and the spec scan both list the artifacts folder: one listing serves both.
    with one_scan():
        return _load_bmad_plan(workspace, only_key)


def _load_bmad_plan(workspace: Workspace, only_key: str | None) -> SourceResult:
    # The sources load with the first read of a plan: the app's screen, handed a catalog read
    # by its opening helper, needs this module's plan watch and notes only.
    from . import bmad, bmad_spec, bmad_v7, spec_folders
    from .context_files import output_folder

    v7 = bmad_v7.load_stories(workspace)
    if v7 is not None and v7[1]:
        result, initiatives = v7
        notes = result.warnings
        artifacts = workspace.root / workspace.config.paths_artifacts
        if (
            artifacts.is_dir()
            or (workspace.root / output_folder(workspace)).joinpath(bmad_v7.ARCHIVE_V6).is_dir()
        ):
            notes = (
                *notes,
                f"BMAD v7: the plan is {', '.join(initiatives)}; the v6 folders"
                f" ({workspace.config.paths_artifacts}, {bmad_v7.ARCHIVE_V6}/) are history"
                " and not read",
            )
        stories = result.stories
        if only_key is not None:
            stories = tuple(s for s in stories if s.key == only_key)
        return SourceResult(stories, result.skipped, notes, result.unreadable)
    v6 = bmad.load_stories(workspace, only_key=only_key)
    scan = bmad_spec.scan_artifacts(workspace)
    stories, unattached, problems, notes = bmad_spec.attach_specs(workspace, v6.stories, scan)
    folders = spec_folders.spec_folder_stories(workspace)
    stories += folders.stories
    if only_key is not None:
        stories = tuple(s for s in stories if s.key == only_key)
    unreadable = v6.unreadable + problems + folders.unreadable
    if v7 is not None:
        unreadable += v7[0].unreadable
    return SourceResult(
        stories, v6.skipped, v6.warnings + notes, unreadable, v6.unattached + unattached
    )


def load_catalog(workspace: Workspace) -> StoryCatalog:
    """Every story of the workspace, from both sources, and every file passed over.

    Never raises for a bad story file: each one is a :class:`SkippedFile` with its reason.

    Args:
        workspace: the workspace to scan.

    Returns:
        BMAD stories (natural key order), then OpenSpec stories (changes alphabetically,
        groups in ``tasks.md`` order), with the skipped files and warnings of both sources.
    """
    from . import openspec

    bmad_result = load_bmad_plan(workspace)
    openspec_result = openspec.load_stories(workspace)
    stories: tuple[Story, ...] = bmad_result.stories + openspec_result.stories
    return StoryCatalog(
        stories=stories,
        skipped=bmad_result.skipped + openspec_result.skipped,
        warnings=bmad_result.warnings + openspec_result.warnings,
        unreadable=bmad_result.unreadable + openspec_result.unreadable,
        unattached=bmad_result.unattached + openspec_result.unattached,
    )


def where_stories_come_from(workspace: Workspace) -> list[str]:
    """What promptdeck looks for, which folder it took as the plan and why, and how to start,
    for a workspace with no stories (the app's empty preview, ``promptdeck stories`` and
    ``promptdeck doctor`` say the same)."""
    config = workspace.config
    origin = [f"  (the plan folder is {config.paths_artifacts}: {config.plan_origin})"]
    origin.extend(
        f"  (also looked at {folder}: {why})" for folder, why in config.plan_alternatives[:5]
    )
    if len(config.plan_alternatives) > 5:
        origin.append(
            f"  (and {len(config.plan_alternatives) - 5} more: promptdeck doctor lists them)"
        )
    if not config.plan_origin.startswith("[paths]"):
        origin.append(
            "  (name another folder with [paths] artifacts and planning in"
            " .promptdeck/config.toml, or BMAD's own configuration)"
        )
    return [
        f"No stories found in {workspace.root}.",
        "promptdeck looks for:",
        f"  BMAD: {config.paths_artifacts}/sprint-status.yaml and story files"
        f" {config.paths_artifacts}/<epic>-<story>-<slug>.md (v4: <epic>.<story>.<slug>.md)",
        *origin,
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
    from ..stories.keys import normalize_key
    from . import openspec

    wanted = story_id.strip()
    if ":" in wanted:
        change, _, _number = wanted.partition(":")
        change_dir = workspace.root / workspace.config.paths_openspec / "changes" / change
        if change and "/" not in change and change_dir.is_dir():
            result = openspec.load_change(workspace, change_dir)
            narrowed = StoryCatalog(
                result.stories, result.skipped, result.warnings, result.unreadable
            )
            if any(s.id.lower() == wanted.lower() for s in narrowed.stories):
                return narrowed
    elif normalize_key(wanted):
        result = load_bmad_plan(workspace, only_key=normalize_key(wanted))
        if (
            len(result.stories) == 1
            and result.stories[0].path is not None
            and not result.unreadable
        ):
            return StoryCatalog(result.stories, result.skipped, result.warnings, result.unreadable)
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


RUN_WARNINGS = "run warnings"
UNREADABLE = "unreadable plan entries"
DRIFT = "statuses that drift"
UNKNOWN_STATUS = "unknown statuses"
OFF_GRAMMAR = "keys past BMAD's grammar"
SKIPPED = "files passed over"
UNATTACHED = "specs tied to no story"
OTHER = "other notes"
KINDS = (RUN_WARNINGS, UNREADABLE, DRIFT, UNKNOWN_STATUS, OFF_GRAMMAR, SKIPPED, UNATTACHED, OTHER)
"""The kinds, in the order they are shown: what needs the user's eyes first."""


@dataclass(frozen=True)
class NoteGroup:
    """The notes of one kind, each a readable line."""

    kind: str
    lines: tuple[str, ...]

    @property
    def count(self) -> int:
        """How many notes of this kind there are."""
        return len(self.lines)

    def to_dict(self) -> dict[str, object]:
        """The JSON shape used under ``"notes"``."""
        return {"kind": self.kind, "count": self.count, "lines": list(self.lines)}


def group_notes(catalog: StoryCatalog, run_warnings: Sequence[str] = ()) -> list[NoteGroup]:
    """Every loading note of ``catalog`` (and a run's own warnings) grouped by kind, in
    :data:`KINDS` order; kinds with no note are left out."""
    found: dict[str, list[str]] = {kind: [] for kind in KINDS}
    found[RUN_WARNINGS].extend(run_warnings)
    for entry in catalog.unreadable:
        found[UNREADABLE].append(f"{entry.where}: {entry.reason}")
    for story in catalog.stories:
        for drift in story.status_drift:
            found[DRIFT].append(f"story {story.id}: {drift}; {story.status_source} is used")
        if not story.status_known:
            found[UNKNOWN_STATUS].append(
                f"story {story.id}: unknown status '{story.status}'"
                + (f" ({story.status_source})" if story.status_source else "")
                + "; shown as written, never as backlog or done"
            )
        if story.off_grammar:
            found[OFF_GRAMMAR].append(f"story {story.id}: {story.off_grammar}")
    claimed = {entry.path for entry in catalog.unreadable}
    for skipped in catalog.skipped:
        # A file that lost a two-way claim is already told, with the choice, as unreadable.
        if skipped.path not in claimed:
            found[SKIPPED].append(f"{skipped.path}: {skipped.reason}")
    found[UNATTACHED].extend(_unattached_line(path) for path in catalog.unattached)
    found[OTHER].extend(catalog.warnings)
    return [NoteGroup(kind, tuple(lines)) for kind, lines in found.items() if lines]


def _unattached_line(path: str) -> str:
    """Why a spec is tied to no story: no key in its name, or a key no story of the plan has
    (``tech-spec-ui-3-panels.md``, ``spec-mvp-2-launch.md``)."""
    from ..stories.keys import leading_key

    name = path.rsplit("/", 1)[-1]
    rest = name.removeprefix("tech-spec-").removeprefix("spec-")
    key = leading_key(rest) if rest != name else None
    why = f"its name starts with '{key}', no story of the plan" if key else "no story key"
    return f"{path}: {why}; attach it in .promptdeck/config.toml"


def summary_lines(groups: Sequence[NoteGroup], details: str = "promptdeck doctor") -> list[str]:
    """One line per kind with its count, and where the details are (``details``); a kind
    with a single note shows the note itself."""
    lines: list[str] = []
    for group in groups:
        if group.count == 1:
            lines.append(group.lines[0])
        else:
            lines.append(f"{group.count} {group.kind} (details: {details})")
    return lines


# ---------------------------------------------------------------- the plan snapshot

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
    # Here, not at import: the app's screen imports this module, but its first catalog comes
    # read by the opening helper, and the plan readers' key patterns take some 6 ms to compile.
    from .sprint_status import SPRINT_STATUS_NAME

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
