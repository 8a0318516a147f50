"""The BMAD story source: ``sprint-status.yaml`` and the story files where the project keeps
them.

Stories come from two places that usually agree:

* ``<paths_artifacts>/sprint-status.yaml`` — its ``development_status:`` mapping
  (``1-2-user-registration: done``; ``epic-1: …`` and ``epic-1-retrospective: …`` are not
  stories), read by the strict line parser of :mod:`.sprint_status`. Keys are read by BMAD's
  own grammar first and leniently past it (:func:`~promptdeck.core.stories.keys.read_entry_keys`);
  an entry that names no story is an :class:`~promptdeck.core.stories.model.UnreadableEntry` with
  its line, never silently dropped.
* Markdown story files whose first heading is ``# Story <key>: <title>`` (or named after a
  sprint-status entry: exactly, or starting with its key when the story has no other file),
  in the artifacts folder and the folder ``story_location`` names, each with its subfolders
  down to :data:`.story_scan.STORY_DEPTH` levels (``stories/``, ``epic19/stories/``;
  ``{project-root}`` resolved inside the project; a location outside it, missing, or not a
  folder is one unreadable entry and is never read).
* Companions (:mod:`promptdeck.core.stories.companions`): a story's context (``<stem>.context.xml``,
  ``<stem>-context.md``), reports, validations, reviews and proposals named for it. They may
  open like the story, but they are never its file and never give its status; they are
  listed on the story (``Story.companions``) when their name starts with its key. A file
  whose name only ends like a context and that is headed as its own story, with no other
  file for that story (v4's ``2.4.conversation-context.md``, ``# Story 2.4: …``), is the
  story's own file; one whose name is in a report's words loses the story to one whose name
  is not (:func:`.story_scan._name_rank`).

A story found in both is one story; where their statuses disagree, ``sprint-status.yaml``
wins and the story says where its status came from and that the file drifts (see
:func:`_merge`). Statuses are read as written
(:func:`~promptdeck.core.stories.model.read_status`): an unknown one is kept verbatim and
marked, never read as backlog or done.

This module reads the sprint plan and joins it to the story files :mod:`.story_scan` finds and
assigns; reading one story file is :mod:`.bmad_story_file`'s job, the epics' titles
:mod:`.epic_titles`'.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import field, replace
from pathlib import Path

from ..lean_dataclass import dataclass
from ..project.bmad_folders import split_where
from ..project.listing import folder_names
from ..project.textfiles import DEFAULT_READ_LIMIT, TextProblem, read_text_file
from ..project.workspace import Workspace
from ..stories.keys import (
    epic_tracks,
    grammar_note,
    is_story_entry,
    leading_key,
    natural_key,
    normalize_key,
    read_entry_keys,
)
from ..stories.model import (
    Companion,
    SecondClaim,
    SkippedFile,
    SourceResult,
    StatusReading,
    Story,
    UnreadableEntry,
    read_status,
    relpath,
)
from .bmad_story_file import (
    DEFAULT_FILE_STATUS,
    StoryFile,
)
from .epic_titles import epic_of, resolve_epic_titles, sprint_epic_titles
from .sprint_status import (
    SPRINT_STATUS_NAME,
    SprintStatusError,
    parse_plan_entries,
    top_level_value,
)
from .story_scan import StoryScan, companions_of, dashed, scan_folder, story_folders


def _slug_title(slug: str | None, story_id: str) -> str:
    if not slug:
        return f"Story {story_id}"
    words = slug.replace("_", "-").split("-")
    return " ".join(words).capitalize()


@dataclass(frozen=True)
class _Tracked:
    """One story entry of ``sprint-status.yaml``."""

    id: str
    name: str
    slug: str | None
    raw_status: str
    reading: StatusReading
    line: int
    off_grammar: str
    epic: str = ""


@dataclass
class _SprintPlan:
    """What ``sprint-status.yaml`` says: its story entries by key, the entries it could not
    read, its epic titles and its ``story_location``."""

    rel: str
    tracked: dict[str, _Tracked] = field(default_factory=dict)
    unreadable: list[UnreadableEntry] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)
    story_location: tuple[str, int] | None = None


_LISTED_NOTE = (
    "listed as a story under 'epics:' in sprint-status.yaml: BMAD's workflows read only its"
    " development_status mapping"
)


def _read_sprint_status(
    root: Path, path: Path, skipped: list[SkippedFile], limit: int = DEFAULT_READ_LIMIT
) -> _SprintPlan:
    plan = _SprintPlan(relpath(root, path))
    text = read_text_file(path, root=root, limit=limit)
    if isinstance(text, TextProblem):
        if text.reason != "missing":
            skipped.append(SkippedFile(plan.rel, str(text)))
            plan.unreadable.append(UnreadableEntry(plan.rel, None, str(text)))
        return plan
    try:
        entries, listed = parse_plan_entries(text)
    except SprintStatusError as exc:
        skipped.append(SkippedFile(plan.rel, f"malformed: {exc}"))
        plan.unreadable.append(UnreadableEntry(plan.rel, exc.line or None, f"malformed: {exc}"))
        return plan
    plan.titles = sprint_epic_titles(text)
    plan.story_location = top_level_value(text, "story_location")
    stories = [entry for entry in entries if is_story_entry(entry.name)]
    tracks = epic_tracks([entry.name for entry in entries])
    keys = read_entry_keys([e.name for e in stories], tracks)
    for entry, key in zip(stories, keys, strict=True):
        if key is None:
            plan.unreadable.append(
                UnreadableEntry(
                    plan.rel,
                    entry.line,
                    f"'{entry.name}' is not a story key (BMAD's stories are "
                    "<epic>-<story>-<slug>, e.g. 1-2-user-login)",
                )
            )
            continue
        first = plan.tracked.get(key.key)
        if first is not None:
            plan.unreadable.append(
                UnreadableEntry(
                    plan.rel,
                    entry.line,
                    f"'{entry.name}' is story {first.id} again (first on line {first.line}, "
                    f"'{first.name}'); the first is used",
                    key.key,
                )
            )
            continue
        plan.tracked[key.key] = _Tracked(
            key.id,
            entry.name,
            key.slug,
            entry.value,
            read_status(entry.value),
            entry.line,
            _LISTED_NOTE if listed else key.off_grammar,
            key.epic,
        )
    return plan


def _key_note(key: str, story_id: str) -> str:
    """Why a key known only from a story file is past BMAD's grammar ("" when it is not),
    saying what BMAD's grammar does with an entry of that key."""
    parts = key.split("-")
    words = 0
    while words < len(parts) and not parts[words][:1].isdigit():
        words += 1
    if words > 1 or (words == 1 and len(parts[0]) > 3):
        return grammar_note(key, f"{key}-x", f"prefixed track key {story_id}")
    if words == 0 and len(parts) > 2 and parts[1].isalpha() and len(parts[1]) > 1:
        return grammar_note(key, f"{key}-x", f"track key {story_id}")
    if not parts[0].isdigit():
        return f"letter epic '{parts[0]}': BMAD's grammar wants an epic number"
    if len(parts) > 2:
        return grammar_note(key, f"{key}-x", f"three-level key {key}")
    if not re.fullmatch(r"\d+[a-z]?", parts[-1]):
        return f"story number '{parts[-1]}': BMAD's grammar wants a number and at most one letter"
    return ""


def _with_claims(story: Story, claims: list[SecondClaim] | tuple[()]) -> Story:
    """``story`` with the files that lost their claim on it, after any it already names."""
    if not claims:
        return story
    return replace(story, second_claims=(*story.second_claims, *claims))


def _merge(
    key: str,
    tracked: _Tracked | None,
    story_file: StoryFile | None,
    epic_titles: dict[str, str],
    plan_rel: str,
    nested: tuple[str, ...],
    companions: tuple[Companion, ...] = (),
    searched: tuple[str, ...] = (),
) -> Story:
    file_reading = None
    file_where = ""
    if story_file is not None and story_file.raw_status is not None:
        file_reading = read_status(story_file.raw_status)
        file_where = story_file.path + (
            f":{story_file.status_line}" if story_file.status_line else ""
        )
    drift: tuple[str, ...] = ()
    # sprint-status.yaml wins a disagreement: it is the file BMAD's workflows (sprint
    # planning, dev-story, code-review) read to pick the next story and update at every
    # transition, while a story file's Status line is prose an agent may leave behind.
    if tracked is not None:
        reading = tracked.reading
        source = f"{plan_rel}:{tracked.line}"
        if (
            file_reading is not None
            and story_file is not None
            and (file_reading.status != reading.status)
        ):
            noted = f" ({story_file.status_note})" if story_file.status_note else ""
            drift = (
                f"{file_where} says '{story_file.raw_status}'{noted}; "
                f"{source} says '{tracked.raw_status}'",
            )
    elif file_reading is not None:
        reading, source = file_reading, file_where
    else:
        # BMAD's sprint planning treats "the story file exists" as ready for development.
        reading, source = StatusReading(DEFAULT_FILE_STATUS, True), ""
    # The sprint-status spelling is the id: it is BMAD's tracking key (`1-2`), the one its
    # workflows and commit messages use; a story only on file keeps its heading's spelling,
    # in the same dashed style (`10.1.5` → `10-1-5`), so one id style shows everywhere.
    story_id = tracked.id if tracked is not None else dashed(story_file.id) if story_file else key
    if story_file is not None and story_file.title:
        title = story_file.title
    else:
        title = _slug_title(tracked.slug if tracked else None, story_id)
    epic = tracked.epic if tracked is not None and tracked.epic else epic_of(key)
    return Story(
        id=story_id,
        key=key,
        title=title,
        status=reading.status,
        source="bmad",
        group=epic,
        group_title=epic_titles.get(epic, ""),
        path=story_file.path if story_file else None,
        tasks=story_file.tasks if story_file else (),
        files=(story_file.path,) if story_file else (),
        layout="classic",
        status_source=source,
        status_drift=drift,
        status_known=reading.known,
        status_note=reading.note,
        off_grammar=tracked.off_grammar if tracked is not None else _key_note(key, story_id),
        nested_keys=nested,
        companions=companions,
        searched=searched,
    )


def _rekey_entries(plan: _SprintPlan, files: dict[str, StoryFile]) -> None:
    """An entry named exactly like a story file whose heading gives a deeper key
    (``10-5-a-nav`` alone is story 10-5 by BMAD's grammar; its file says ``Story 10.5.a``)
    is that deeper story: the file's heading settles what the lone entry left open.

    A heading whose key is an entry's whole name (``# Story 7-1-arkit-video: …`` for entry
    ``7-1-arkit-video``) names that entry's story, not a deeper one: the file moves to the
    entry's key. A file with no entry headed with a lone letter as a third level but named
    with it joined (``# Story 105.3.b`` in ``story-105-3b-fix.md``) is the split story
    ``105-3b`` its name writes in BMAD's form (``2-6a``)."""
    by_name = {t.name.lower(): key for key, t in plan.tracked.items()}
    whole = {normalize_key(t.name): key for key, t in plan.tracked.items()}
    for key, story_file in list(files.items()):
        if key in plan.tracked:
            continue
        moved = whole.get(key) or _split_letter_key(key, story_file)
        if moved is not None and moved != key:
            if moved not in files:
                story_id = plan.tracked[moved].id if moved in plan.tracked else moved
                files[moved] = replace(story_file, id=story_id, key=moved)
                del files[key]
            continue
        stem = story_file.path.rsplit("/", 1)[-1][:-3].lower()
        old = by_name.get(stem)
        if old is None or old in files or not key.startswith(old + "-"):
            continue
        entry = plan.tracked.pop(old)
        note = grammar_note(
            key, entry.name, f"three-level key {key} (from {story_file.path}'s heading)"
        )
        plan.tracked[key] = _Tracked(
            dashed(story_file.id),
            entry.name,
            entry.slug,
            entry.raw_status,
            entry.reading,
            entry.line,
            note,
        )


def _split_letter_key(key: str, story_file: StoryFile) -> str | None:
    """The split-story key (``105-3b``) a story file's name starts with when its heading
    writes the letter as a level of its own (``105-3-b``); None otherwise."""
    parts = key.split("-")
    if len(parts) < 3 or len(parts[-1]) != 1 or not parts[-1].isalpha():
        return None
    if not parts[-2].isdigit():
        return None
    joined = "-".join([*parts[:-2], parts[-2] + parts[-1]])
    name = story_file.path.rsplit("/", 1)[-1].lower()
    return joined if leading_key(name, (joined,)) == joined else None


def _nested_keys(every_key: set[str], keys: list[str]) -> dict[str, tuple[str, ...]]:
    """For each of ``keys``, the known keys under it (``10-1-5`` under ``10-1``) and the
    prefixed track keys that end with it (``petition-1-8`` for ``1-8``): a file named by one
    of them is that story's, never this one's.

    Keys under one key are neighbours in text order, so one sort and a binary search per
    key find them: a plan of thousands of stories is not compared pair by pair.
    """
    ordered = sorted(every_key)
    tracked_tails: dict[str, list[str]] = {}
    for known in every_key:
        parts = known.split("-")
        for start in range(1, len(parts) - 1):
            if parts[start - 1][:1].isdigit():
                break  # only the words of a track come before the tail
            tracked_tails.setdefault("-".join(parts[start:]), []).append(known)
    found: dict[str, tuple[str, ...]] = {}
    for key in keys:
        prefix = key + "-"
        start = bisect.bisect_left(ordered, prefix)
        end = bisect.bisect_left(ordered, key + ".")  # "." sorts right after "-"
        under = {*ordered[start:end], *tracked_tails.get(key, ())}
        found[key] = tuple(sorted(under, key=natural_key))
    return found


def load_stories(workspace: Workspace, only_key: str | None = None) -> SourceResult:
    """Every BMAD story of the workspace, in natural key order, with skipped files and the
    entries that could not be read.

    Args:
        workspace: the workspace; ``paths_artifacts`` and ``paths_planning`` name the folders.
        only_key: narrow the scan to story files whose names hold this normalized key (and
            the sprint-status entry of that key): a fast lookup of one story.
    """
    config = workspace.config
    artifacts = workspace.root / config.paths_artifacts
    skipped: list[SkippedFile] = []
    warnings: list[str] = []
    if not workspace.contains(artifacts):
        # A symlinked or configured folder outside the project is never read: its text would
        # reach the prompt although the user never saw it in their project.
        rel = relpath(workspace.root, artifacts)
        if artifacts.exists():
            skipped.append(SkippedFile(rel, "outside-project: the artifacts folder; not read"))
            outside = UnreadableEntry(rel, None, "the artifacts folder is outside the project")
            return SourceResult(skipped=tuple(skipped), unreadable=(outside,))
        return SourceResult(skipped=tuple(skipped))
    limit = config.read_max_bytes
    plan = _read_sprint_status(workspace.root, artifacts / SPRINT_STATUS_NAME, skipped, limit)
    entries = {key: t.name for key, t in plan.tracked.items()}
    # One listing of the artifacts folder serves both the search for subfolders and its scan.
    artifact_names = folder_names(artifacts) or []
    found = story_folders(workspace, artifacts, artifact_names, plan.story_location, plan.rel)
    unreadable = list(plan.unreadable)
    unreadable.extend(UnreadableEntry(*split_where(at), why) for at, why in config.bmad_problems)
    if found.problem is not None:
        unreadable.append(found.problem)
    if found.note is not None:
        warnings.append(found.note)
    scan = StoryScan()
    for folder in found.folders:
        names = artifact_names if folder == artifacts else None
        scan_folder(workspace, folder, scan, skipped, only_key, entries, names)
    scan.settle_context_named(skipped, entries)
    scan.settle_name_only(skipped)
    unreadable.extend(scan.losers)
    files = scan.files
    _rekey_entries(plan, files)
    tracked = plan.tracked
    every_key = {*tracked, *files}
    if only_key is not None:
        tracked = {key: entry for key, entry in tracked.items() if key == only_key}
        # A name holding the key inside another story's slug (`5-4-wcag-2-1-…` for 2-1) is
        # read by the narrowed scan but is that other story's file.
        files = {key: found for key, found in files.items() if key == only_key}
        unreadable = [u for u in unreadable if u.key == only_key]
    if not tracked and not files:
        return SourceResult(
            skipped=tuple(skipped), warnings=tuple(warnings), unreadable=tuple(unreadable)
        )
    keys = sorted({*tracked, *files}, key=natural_key)
    epic_titles = resolve_epic_titles(
        workspace.root / config.paths_planning,
        plan.titles,
        {epic_of(key) for key in keys},
        warnings,
        workspace.root,
        limit,
    )
    nested = _nested_keys(every_key, keys)
    # A file named for a story that lost its claim to another file of that story is named on
    # the story as well as under "could not be read": the injection's key scan would find it
    # by its name, so it becomes a row saying which file the story uses, never sent (doctor
    # and inspect agree). A file that claims the story only by its heading is never found by
    # that scan, and the narrowed one-story lookup does not read it, so it is not named here.
    claims: dict[str, list[SecondClaim]] = {}
    for loser in scan.losers:
        named_for = leading_key(Path(loser.path).name.lower(), every_key)
        if loser.key is not None and named_for == loser.key:
            claims.setdefault(loser.key, []).append(SecondClaim(loser.path, loser.reason))
    companions = companions_of(scan.companions, scan.files, every_key)
    stories = tuple(
        _with_claims(
            _merge(
                key,
                tracked.get(key),
                files.get(key),
                epic_titles,
                plan.rel,
                nested[key],
                companions.get(key, ()),
                found.roots,
            ),
            claims.get(key, ()),
        )
        for key in keys
    )
    return SourceResult(
        stories=stories,
        skipped=tuple(skipped),
        warnings=tuple(warnings),
        unreadable=tuple(unreadable),
    )
