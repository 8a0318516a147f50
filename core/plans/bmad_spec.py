"""BMAD's build specs (v6.3+) and quick specs, read from the artifacts folder and joined to the
stories.

* A build spec ``<artifacts>/spec-<key>-<slug>.md`` is the working document of one epic story.
  Its front matter carries ``status`` (``draft | ready-for-dev | in-progress | in-review |
  done``), optionally ``story_key`` (the sprint-status key) and ``context:`` — the files BMAD
  itself wants the implementing agent to load (:mod:`.context_files`).
* A quick spec has no key in its name (``tech-spec-<slug>.md`` of v6.0–6.2, ``spec-<slug>.md``
  since): nothing ties it to a story unless the user attaches it (``[specs] attach``).
* ``tech-spec-epic-<N>.md`` (BMAD v5's epic tech context, in the artifacts folder or the
  output folder) is epic N's technical specification: every story of the epic names it in
  ``Story.epic_tech_spec``.

The scan also notes each epic's compiled context (:mod:`.context_files`); bmad-spec folders
are :mod:`.spec_folders`'. :mod:`promptdeck.core.plans.catalog` joins all of them to the
stories.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from ..lean_dataclass import dataclass
from ..project.listing import folder_names
from ..project.textfiles import TextProblem, read_text_file
from ..project.workspace import Workspace
from ..stories.companions import companion_kind
from ..stories.keys import leading_key, natural_key, normalize_key
from ..stories.model import (
    SecondClaim,
    Story,
    Task,
    UnreadableEntry,
    read_status,
    relpath,
    source_line,
)
from .context_files import (
    EPIC_CONTEXT_NAME,
    ContextEntry,
    EpicContext,
    context_entries,
    epic_context_of,
    epic_contexts_newer,
    grouped_epic_id,
    output_folder,
)
from .epic_titles import epic_of
from .markdown import (
    PlanYamlError,
    TaskNestingError,
    YamlDocument,
    iter_headings,
    parse_task_list,
    read_front_matter,
    scalar_text,
    section_lines,
)
from .sprint_status import SPRINT_STATUS_NAME, SprintStatusError, parse_sprint_status

SPEC_PREFIX = "spec-"
TECH_SPEC_PREFIX = "tech-spec-"
_TASKS_HEADING = re.compile(r"^Tasks\b", re.IGNORECASE)
EPIC_TECH_SPEC_NAME = re.compile(
    r"^tech-spec-epic-(?P<epic>[A-Za-z0-9]+)(?:-[^/]*)?\.md$", re.IGNORECASE
)
"""BMAD v5's per-epic tech spec: ``tech-spec-epic-2.md`` (``tech-spec-epic-2-payments.md``)."""


@dataclass(frozen=True)
class BuildSpec:
    """A BMAD build spec, quick spec or bmad-spec story file, as its front matter says.

    Attributes:
        path: root-relative path of the spec.
        key: the normalized story key (from ``story_key`` or the name), None for a quick spec.
        key_text: the key as the project writes it (``1-2``).
        title: front matter ``title``, else the first ``#`` heading, else the file name.
        raw_status: the ``status`` value as written, None when there is none.
        status_line: the line of ``status`` (0 when there is none).
        context: the ``context:`` files, in order.
        tasks: the checkboxes of its ``## Tasks …`` section.
        story_key: front matter ``story_key`` as written (``2-3-placement``), None without.
    """

    path: str
    key: str | None
    key_text: str | None
    title: str
    raw_status: str | None
    status_line: int
    context: tuple[ContextEntry, ...]
    tasks: tuple[Task, ...]
    story_key: str | None = None


@dataclass
class SpecScan:
    """Everything this module found: specs with a key, quick specs, epic contexts, problems."""

    keyed: list[BuildSpec]
    quick: list[BuildSpec]
    epic_contexts: dict[str, EpicContext]
    problems: list[UnreadableEntry]
    epic_tech_specs: dict[str, str] = field(default_factory=dict)
    """Epic id → root-relative ``tech-spec-epic-<N>.md``."""
    story_tech_specs: list[tuple[str, str]] = field(default_factory=list)
    """``(path, key)`` of each ``tech-spec-<key>-….md``: seed 000's tech spec of a story,
    found by its name for that story; one naming no known story is tied to none."""


def _title(fields: dict[str, Any], lines: list[str], start: int, fallback: str) -> str:
    title = scalar_text(fields.get("title"))
    if title:
        return title
    for heading in iter_headings(lines[start:]):
        if heading.level == 1 and heading.text:
            return heading.text
    return fallback


def _tasks(lines: list[str]) -> tuple[Task, ...]:
    headings = list(iter_headings(lines))
    for heading in headings:
        if heading.level == 2 and _TASKS_HEADING.match(heading.text):
            return parse_task_list(section_lines(lines, heading, headings))
    return ()


def read_build_spec(
    path: Path,
    rel: str,
    workspace: Workspace,
    problems: list[UnreadableEntry],
    *,
    name_key: str | None,
) -> BuildSpec | None:
    """Read one spec file; None (and an unreadable entry in ``problems``) when it cannot be read.

    Args:
        path: the file.
        rel: its root-relative path.
        workspace: the workspace (root, limits, folders for placeholders).
        problems: where unreadable files and entries are reported.
        name_key: the story key its file name carries, if any; ``story_key`` in its front
            matter wins over it.
    """
    text = read_text_file(path, root=workspace.root, limit=workspace.config.read_max_bytes)
    if isinstance(text, TextProblem):
        problems.append(UnreadableEntry(rel, None, str(text), name_key))
        return None
    lines = text.splitlines()
    try:
        front = read_front_matter(lines)
    except PlanYamlError as exc:
        problems.append(UnreadableEntry(rel, exc.line, f"front matter: {exc.message}", name_key))
        return None
    fields: dict[str, Any] = front.fields if front else {}
    document = front.document if front else YamlDocument({}, {}, {})
    key_text = name_key
    story_key = scalar_text(fields.get("story_key"))
    if story_key:
        lead = leading_key(story_key) or normalize_key(story_key)
        key_text = story_key if lead == normalize_key(story_key) else story_key[: len(lead)]
    key = normalize_key(key_text) if key_text else None
    raw_status = scalar_text(fields.get("status"))
    try:
        tasks = _tasks(lines)
    except TaskNestingError as exc:
        problems.append(UnreadableEntry(rel, None, f"tasks: {exc}", key))
        tasks = ()
    context = context_entries(document, "context", "context: list", workspace, rel, key, problems)
    return BuildSpec(
        path=rel,
        key=key,
        key_text=key_text,
        title=_title(fields, lines, front.body_start if front else 0, path.stem),
        raw_status=raw_status,
        status_line=document.line_of("status", 0) if raw_status else 0,
        context=context,
        tasks=tasks,
        story_key=story_key,
    )


def _spec_name_key(name: str) -> tuple[bool, str | None]:
    """Whether ``name`` is a spec's name, and the story key it starts with (None: a quick
    spec). ``tech-spec-<key>-…`` is seed 000's tech-spec file of that story, not a spec."""
    lower = name.lower()
    if not lower.endswith(".md"):
        return False, None
    if lower.startswith(TECH_SPEC_PREFIX):
        return leading_key(name[len(TECH_SPEC_PREFIX) :]) is None, None
    if lower.startswith(SPEC_PREFIX):
        rest = name[len(SPEC_PREFIX) :]
        lead = leading_key(rest)
        if lead is None or companion_kind(name) is not None or _second_key(rest, lead):
            # A change proposal or a spec naming two stories (`spec-1-16-1-20-sprint-change-
            # proposal.md`) is no one story's spec: a quick spec.
            return True, None
        return True, rest[: len(lead)]
    return False, None


def _second_key(rest: str, lead: str) -> bool:
    """Whether another story of the same epic follows the first key: ``1-16-1-20-x``."""
    after = rest[len(lead) :].lower()
    epic = re.escape(lead.split("-", 1)[0])
    return re.match(rf"[-_.]{epic}[-_.][0-9]+(?![0-9a-z])", after) is not None


_SCANNED_STARTS = frozenset(("epic", SPEC_PREFIX[:4], TECH_SPEC_PREFIX[:4]))
# Only these first letters lower-case to one of those starts: one set lookup a name spares
# a lower-cased copy of tens of thousands of names.
_SCANNED_FIRSTS = frozenset(c for start in _SCANNED_STARTS for c in (start[0], start[0].upper()))


def scan_artifacts(workspace: Workspace) -> SpecScan:
    """The build specs, quick specs and epic contexts of the artifacts folder."""
    scan = SpecScan([], [], {}, [])
    artifacts = workspace.root / workspace.config.paths_artifacts
    if not workspace.contains(artifacts):
        return scan
    names = folder_names(artifacts)
    if not names:
        return scan
    prefix = relpath(workspace.root, artifacts) + "/"
    # Only names starting like an epic context or a spec are looked at (and sorted): an
    # artifacts folder holds thousands of logs and notes. Case-insensitive, then exact order.
    wanted = [
        name
        for name in names
        if name[:1] in _SCANNED_FIRSTS and name[:4].lower() in _SCANNED_STARTS
    ]
    readable: list[str] = []
    for name in sorted(sorted(wanted), key=str.lower):
        epic = EPIC_CONTEXT_NAME.match(name)
        if epic is not None:
            found = epic_context_of(workspace, artifacts / name, prefix + name, epic.group("epic"))
            if found is not None and found[0].epic not in scan.epic_contexts:
                scan.epic_contexts[found[0].epic] = found[0]
                if found[1]:
                    readable.append(found[0].epic)
            continue
        tech_epic = EPIC_TECH_SPEC_NAME.match(name)
        if tech_epic is not None:
            scan.epic_tech_specs.setdefault(grouped_epic_id(tech_epic.group("epic")), prefix + name)
            continue
        is_spec, name_key = _spec_name_key(name)
        if not is_spec:
            if name.lower().startswith(TECH_SPEC_PREFIX):
                lead = leading_key(name[len(TECH_SPEC_PREFIX) :])
                if lead is not None:
                    scan.story_tech_specs.append((prefix + name, lead))
            continue
        spec = read_build_spec(
            artifacts / name, prefix + name, workspace, scan.problems, name_key=name_key
        )
        if spec is not None:
            (scan.keyed if spec.key else scan.quick).append(spec)
    _epic_tech_specs_beside(workspace, artifacts, scan)
    # Whether each is stale, asked of git once for all of them.
    newer = epic_contexts_newer(
        workspace, [scan.epic_contexts[epic_id].path for epic_id in readable]
    )
    for epic_id in readable:
        context = scan.epic_contexts[epic_id]
        scan.epic_contexts[epic_id] = replace(context, newer=newer[context.path])
    return scan


def _epic_tech_specs_beside(workspace: Workspace, artifacts: Path, scan: SpecScan) -> None:
    """The ``tech-spec-epic-<N>.md`` files of the output and planning folders (BMAD v5 wrote
    them to ``{output_folder}``, one level above ``sprint-artifacts/``); the artifacts
    folder's own come first."""
    config = workspace.config
    for rel in (output_folder(workspace), config.paths_planning.strip("/")):
        folder = workspace.root / rel
        if folder.resolve() == artifacts.resolve() or not workspace.contains(folder):
            continue
        names = folder_names(folder) or []
        for name in sorted(n for n in names if n[:15].lower() == "tech-spec-epic-"):
            match = EPIC_TECH_SPEC_NAME.match(name)
            if match is not None and (folder / name).is_file():
                path = name if rel in ("", ".") else f"{rel}/{name}"
                scan.epic_tech_specs.setdefault(grouped_epic_id(match.group("epic")), path)


# ------------------------------------------------------------------------- stories


def spec_status(raw: str | None) -> tuple[str, bool]:
    """``(status, known)`` for a spec's ``status`` (``draft | ready-for-dev | in-progress |
    in-review | done``, read as :func:`~promptdeck.core.stories.model.read_status` reads every
    status); a spec with no status is a draft, so backlog."""
    if raw is None:
        return "backlog", True
    reading = read_status(raw)
    return reading.status, reading.known


def _spec_story(spec: BuildSpec, key: str, workspace: Workspace) -> Story:
    status, known = spec_status(spec.raw_status)
    return Story(
        id=spec.key_text or key,
        key=key,
        title=spec.title,
        status=status,
        source="bmad",
        group=epic_of(key),
        path=spec.path,
        tasks=spec.tasks,
        files=(spec.path,),
        layout="spec",
        status_source=source_line(spec.path, spec.status_line),
        status_known=known,
        context_files=tuple(entry.path for entry in spec.context),
    )


def _with_spec(story: Story, spec: BuildSpec) -> Story:
    """``story`` with ``spec`` attached: its file, its context list, and a drift line when the
    two statuses disagree. A story known only from sprint-status becomes a ``spec`` story."""
    files = story.files if spec.path in story.files else (*story.files, spec.path)
    context = tuple(dict.fromkeys((*story.context_files, *(e.path for e in spec.context))))
    drift = story.status_drift
    if spec.raw_status is not None:
        status, _known = spec_status(spec.raw_status)
        if status != story.status:
            drift = (
                *drift,
                f"{source_line(spec.path, spec.status_line)} says '{spec.raw_status}'",
            )
    if story.path is None:
        return replace(
            story,
            path=spec.path,
            tasks=spec.tasks,
            files=files,
            context_files=context,
            status_drift=drift,
            layout="spec",
            title=spec.title,
        )
    return replace(story, files=files, context_files=context, status_drift=drift)


class _EntryNames:
    """The sprint-status entry name of a story (``2-3-placement-briefing``), read only when
    two specs claim one story: the spec named for the entry is that story's."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._by_line: dict[int, str] | None = None
        path = workspace.root / workspace.config.paths_artifacts / SPRINT_STATUS_NAME
        self._rel = relpath(workspace.root, path)

    def _lines(self) -> dict[int, str]:
        if self._by_line is None:
            self._by_line = {}
            ws = self._workspace
            text = read_text_file(ws.root / self._rel, root=ws.root, limit=ws.config.read_max_bytes)
            # A malformed file is reported by the story source itself.
            with contextlib.suppress(SprintStatusError):
                if isinstance(text, str):
                    self._by_line = {e.line: e.name for e in parse_sprint_status(text)}
        return self._by_line

    def of(self, story: Story | None) -> str | None:
        """The entry ``story``'s status came from, or None (no entry: a spec-only story)."""
        if story is None or not story.status_source.startswith(self._rel + ":"):
            return None
        line = story.status_source[len(self._rel) + 1 :]
        return self._lines().get(int(line)) if line.isdigit() else None


def _spec_rank(spec: BuildSpec, entry: str | None) -> tuple[int, str]:
    """How surely ``spec`` is the story's own (lower is surer), and why."""
    stem = posixpath.basename(spec.path)[: -len(".md")]
    if entry is not None and stem.lower() == f"{SPEC_PREFIX}{entry}".lower():
        return 0, f"named for the sprint-status entry {entry}"
    written = (spec.story_key or "").strip().lower()
    if entry is not None and written == entry.lower():
        return 1, f"its story_key is the sprint-status entry {entry}"
    if written:
        return 2, f"its story_key {spec.story_key} names the story"
    return 3, "its name starts with the story's key"


def _choose_spec(
    specs: list[BuildSpec], entry: str | None, story_id: str
) -> tuple[BuildSpec, tuple[SecondClaim, ...]]:
    """The spec of a story several specs claim, and the others as second claims.

    The spec named for the sprint-status entry wins, then one whose ``story_key`` is the
    entry, then one with a ``story_key`` at all; specs as good as each other go by name.
    """
    ranked = sorted(specs, key=lambda spec: (_spec_rank(spec, entry)[0], spec.path.lower()))
    chosen = ranked[0]
    rank, why = _spec_rank(chosen, entry)
    if rank == _spec_rank(ranked[1], entry)[0]:
        why = f"{why}, as are others'; it comes first by name"
    claims = tuple(
        SecondClaim(
            spec.path,
            f"also claims story {story_id}; {chosen.path} is its spec ({why}): listed, "
            "never injected as the story's own",
        )
        for spec in ranked[1:]
    )
    return chosen, claims


def _guessed_key(spec: BuildSpec, known: dict[str, int]) -> bool:
    """Whether ``spec``'s key is only a guess from its name's words: no ``story_key``, no
    known story of that key, and a first word that is no epic number (``spec-mvp-2-…``)."""
    if spec.story_key or spec.key is None or spec.key in known:
        return False
    return not spec.key.split("-", 1)[0][:1].isdigit()


def _attach_map(workspace: Workspace) -> dict[str, str]:
    """``[specs] attach`` as {spec path or file name: story id}."""
    attach: dict[str, str] = {}
    for item in workspace.config.specs_attach:
        name, sep, story = item.partition("=")
        if sep and name.strip() and story.strip():
            attach[name.strip()] = story.strip()
    return attach


def attach_specs(
    workspace: Workspace, stories: tuple[Story, ...], scan: SpecScan
) -> tuple[tuple[Story, ...], tuple[str, ...], tuple[UnreadableEntry, ...], tuple[str, ...]]:
    """Join the artifacts folder's specs and epic contexts to the v6 stories.

    A build spec attaches to the story with its key, or is a ``spec`` story of its own; a
    quick spec attaches only where ``[specs] attach`` says so; an epic's compiled context is
    in the context of each of its stories.

    Returns:
        The stories (natural key order), the quick specs tied to no story, what could not be
        read or joined, and notes.
    """
    by_key = {story.key: index for index, story in enumerate(stories)}
    merged = list(stories)
    problems = list(scan.problems)
    notes: list[str] = []
    specs_of: dict[str, list[BuildSpec]] = {}
    quick = list(scan.quick)
    for spec in scan.keyed:
        if _guessed_key(spec, by_key):
            # `spec-mvp-2-launch.md` names no story: a quick spec, never the first story
            # of an epic "MVP" nobody planned.
            quick.append(spec)
            continue
        specs_of.setdefault(spec.key or "", []).append(spec)
    entries = _EntryNames(workspace)
    for key, specs in specs_of.items():
        index = by_key.get(key)
        story = merged[index] if index is not None else None
        spec, claims = (
            _choose_spec(specs, entries.of(story), story.id if story else key)
            if len(specs) > 1
            else (specs[0], ())
        )
        problems.extend(UnreadableEntry(c.path, None, c.reason, key) for c in claims)
        if story is None:
            by_key[key] = len(merged)
            merged.append(replace(_spec_story(spec, key, workspace), second_claims=claims))
        else:
            assert index is not None
            merged[index] = replace(
                _with_spec(story, spec), second_claims=(*story.second_claims, *claims)
            )
    attach = _attach_map(workspace)
    unattached: list[str] = []
    for path, key in scan.story_tech_specs:
        if key not in by_key and not attach.get(path) and not attach.get(posixpath.basename(path)):
            unattached.append(path)
    for spec in quick:
        target = attach.get(spec.path) or attach.get(posixpath.basename(spec.path))
        index = by_key.get(normalize_key(target)) if target else None
        if index is None:
            if target:
                notes.append(f"[specs] attach: {spec.path} names story '{target}', not known")
            unattached.append(spec.path)
            continue
        merged[index] = _with_spec(merged[index], spec)
    for index, story in enumerate(merged):
        epic = scan.epic_contexts.get(story.group)
        if epic is not None and epic.path not in story.context_files:
            story = replace(story, context_files=(*story.context_files, epic.path))
        tech_spec = scan.epic_tech_specs.get(story.group)
        if tech_spec is not None and story.epic_tech_spec is None:
            story = replace(story, epic_tech_spec=tech_spec)
        merged[index] = story
    merged.sort(key=lambda story: natural_key(story.key))
    return tuple(merged), tuple(unattached), tuple(problems), tuple(notes)
