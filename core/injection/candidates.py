"""The injection's candidate files: which they are, what the file system says of them, and
their content.

:func:`plan_candidates` lists every candidate in injection order (AC9) without reading
anything; :func:`resolve_candidates` classifies each from ``stat`` alone (missing, outside the
project, a duplicate, too large on its own); :func:`mark_over_budget` stops reading once the
sizes on disk add up past the error line; :func:`read_candidate` reads one fresh from disk.
"""

from __future__ import annotations

import errno
import os
import stat as stat_module
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..lean_dataclass import dataclass
from ..project.config import Config
from ..project.textfiles import TextProblem, printable_name, read_file_bytes
from ..secrets.scan import SecretFinding
from ..stories.keys import leading_key, normalize_key
from ..vocabulary import FileStatus
from .artifacts import matching_artifacts
from .choices import LEFT_OUT_REASON, TAKEN_IN_REASON
from .model import (
    CATEGORIES,
    DUPLICATE,
    ENVELOPE_BREAKERS,
    EXCLUDED,
    INCLUDED,
    MISSING,
    NOT_UTF8,
    OUTSIDE,
    SECRET_LIKE_REASON,
    TOO_LARGE,
    UNREADABLE,
    WHY_ADDED,
    WHY_CHANGE,
    WHY_CONTEXT,
    WHY_CONTEXT_LIST,
    WHY_DERIVED,
    WHY_EPIC_CONTEXT,
    WHY_HEADING,
    WHY_OWN_KEY,
    WHY_PATTERN,
    WHY_SECOND_CLAIM,
    WHY_SPEC,
    is_own_story_file,
    is_secret_like,
)


@dataclass
class Candidate:
    """A file on its way into the injection, before its content is read."""

    shown: str
    category: str
    reason: str
    path: Path
    wanted: bool
    status: FileStatus = INCLUDED
    size: int = 0
    content: str | None = None
    flags: tuple[str, ...] = ()
    secrets: tuple[SecretFinding, ...] = ()
    why: str = ""
    derived: bool = False
    """The content is text a source read out of a project file (OpenSpec's config ``context``)
    rather than a whole file: it is set before planning and never read again here."""


@dataclass(frozen=True)
class StoryContextFile:
    """A file a story's plan asks the agent to load (a spec's ``context:`` list, an epic's
    compiled context), with the reason and flags its row shows."""

    path: str
    reason: str
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class DerivedText:
    """Text taken out of a project file that the agent gets as it is (OpenSpec's config
    ``context`` and ``rules``): shown as its own row, metered, under ``label``."""

    label: str
    category: str
    reason: str
    text: str
    wanted: bool


@dataclass(frozen=True)
class PlanRow:
    """A file the story's plan names for a row of its own category: a v4 project's
    always-load file, a companion of the story file, the tech spec of its epic.

    Attributes:
        path: root-relative (as written when it points outside the project).
        category: its row's category, one of :data:`~.model.CATEGORIES` (never ``story``).
        reason: what its row says.
        why: why it is a candidate, one of :data:`~.model.WHY`.
        wanted: in the injection unless the user leaves it out (False: listed, out, until
            the user takes it in).
    """

    path: str
    category: str
    reason: str
    why: str
    wanted: bool


@dataclass(frozen=True)
class PlanFiles:
    """What a story's plan adds to the key scan.

    Attributes:
        context_files: files its plan asks for (a spec's ``context:`` list), with reasons.
        derived: text a source took out of a project file for the agent.
        left_out: paths the user left out: listed, excluded.
        own_reason: ``(why, reason)`` of the story's own files when no key names them;
            None: an OpenSpec change's documents.
        second_claims: files that claim the story too but are not its own (a second build
            spec of its key), each with the reason: listed, left out.
        rows: files of a category of their own (always-load files, companions, the epic's
            tech spec): each is one row, whatever the key scan or the story's own files
            would make of it.
    """

    context_files: tuple[StoryContextFile, ...] = ()
    derived: tuple[DerivedText, ...] = ()
    left_out: tuple[str, ...] = ()
    own_reason: tuple[str, str] | None = None
    second_claims: tuple[StoryContextFile, ...] = ()
    rows: tuple[PlanRow, ...] = ()


NO_PLAN_FILES = PlanFiles()


def _sorted_group(items: list[Candidate]) -> list[Candidate]:
    return sorted(items, key=lambda c: (c.shown.lower(), c.shown))


def plan_candidates(
    root: Path,
    config: Config,
    story_keys: Sequence[str],
    include_project_context: bool,
    include_discovery: bool,
    include_tech_spec: bool,
    additional_files: Iterable[str],
    story_files: Iterable[str],
    project_context: Sequence[str] | None = None,
    nested_keys: Sequence[str] = (),
    plan: PlanFiles | None = None,
) -> list[Candidate]:
    """Every candidate in injection order, resolved and classified, nothing read yet.

    The story's own files (``story_files``: the story file its source found, an OpenSpec
    change's documents) are story files whatever the key scan's category for their names;
    a name starting with one of ``nested_keys`` is that nested story's and never a
    candidate here. ``plan`` adds what the story's plan asks for; a path it leaves out
    stays a row, excluded, with its size.
    """
    plan = plan or NO_PLAN_FILES
    groups: dict[str, list[Candidate]] = {category: [] for category in CATEGORIES}

    def add(candidates: Iterable[Candidate]) -> None:
        for candidate in candidates:
            groups[candidate.category].append(candidate)

    add(_derived_candidates(root, plan))
    # 1. Project context: the first configured candidate that exists; or, when the source
    # names its own (OpenSpec's project.md and AGENTS.md), every one of those that exists.
    contexts = list(config.paths_project_context if project_context is None else project_context)
    add(_context_candidates(root, contexts, project_context is not None, include_project_context))

    # 2–4. Story, discovery and tech-spec files matched by key in the artifacts folder.
    keys = [key for key in story_keys if normalize_key(key)]
    # A file the plan gives a row of its own (a companion, the epic's tech spec, an
    # always-load file) is that row, and never also a story or key-matched row.
    rowed = {row.path for row in plan.rows}
    own = [name for name in dict.fromkeys(story_files) if name not in rowed]
    known = {normalize_key(key) for key in (*keys, *nested_keys)}
    if keys:
        switches = {"story": True, "discovery": include_discovery, "tech-spec": include_tech_spec}
        add(_key_candidates(root, config, keys, nested_keys, switches, set(own) | rowed))
    add(_own_candidates(root, own, keys, known, plan.own_reason))
    # A set, not a scan of the rows so far: a plan can list thousands of files.
    story_shown = {candidate.shown for candidate in groups["story"]} | rowed
    add(_context_list_candidates(root, plan.context_files, story_shown))
    add(_row_candidates(root, plan.rows))
    _mark_second_claims(root, groups, plan.second_claims)
    add(_additional_candidates(root, additional_files))
    return _in_order(groups, plan.left_out)


def _derived_candidates(root: Path, plan: PlanFiles) -> list[Candidate]:
    """The text a source took out of a project file, each a candidate of its category."""
    return [
        Candidate(
            text.label,
            text.category,
            text.reason,
            root,
            text.wanted,
            content=text.text,
            derived=True,
            why=WHY_DERIVED,
        )
        for text in plan.derived
    ]


def _context_candidates(
    root: Path, contexts: list[str], every_one: bool, include: bool
) -> list[Candidate]:
    """The project context files that exist (the first, or ``every_one`` the source names);
    when none does and the context is on, a row that says where it looked."""
    existing = [p for p in contexts if (root / p).is_file()]
    found_all = existing if every_one else existing[:1]
    candidates = [
        Candidate(
            found,
            "project-context",
            "project context" if include else "project context is off",
            root / found,
            include,
            why=WHY_CONTEXT,
        )
        for found in found_all
    ]
    if not found_all and include and contexts:
        candidates.append(
            Candidate(
                contexts[0],
                "project-context",
                "no project context file (looked for " + ", ".join(contexts) + ")",
                root / contexts[0],
                True,
                why=WHY_CONTEXT,
            )
        )
    return candidates


def _key_candidates(
    root: Path,
    config: Config,
    keys: list[str],
    nested_keys: Sequence[str],
    switches: dict[str, bool],
    skipped: set[str],
) -> list[Candidate]:
    """Story, discovery and tech-spec files of the artifacts folder matched by key, but for
    the ``skipped`` ones (the story's own files and the plan's rows, listed elsewhere)."""
    known = {normalize_key(key) for key in (*keys, *nested_keys)}
    nested = tuple(normalize_key(key) for key in nested_keys)
    matches = matching_artifacts(
        root / config.paths_artifacts, keys, config.injection_extensions, nested
    )
    candidates = []
    for name, file_path, key, category in matches:
        shown = f"{config.paths_artifacts.rstrip('/')}/{name}"
        if shown in skipped:
            continue  # the story's own file: listed below, as a story file
        wanted = switches[category]
        starts = leading_key(name, known) == normalize_key(key)
        why = WHY_OWN_KEY if starts and category == "story" else WHY_PATTERN
        if not wanted:
            reason = f"{category} files are off"
        elif why == WHY_OWN_KEY:
            reason = f"its name starts with story key {key}"
        else:
            reason = f"a {category} file by its name's pattern for story key {key}"
        candidates.append(Candidate(shown, category, reason, Path(file_path), wanted, why=why))
    return candidates


def _own_candidates(
    root: Path,
    own: list[str],
    keys: list[str],
    known: set[str],
    own_reason: tuple[str, str] | None,
) -> list[Candidate]:
    """The story's own files: the story file its source found (in the artifacts folder, a
    subfolder or the story_location), a build spec, an OpenSpec change's documents, the
    files a v7 ticket or a bmad-spec story names."""
    # Reasons name a key as the story spells it (`A-1`), not in its canonical lower case.
    spelled = {normalize_key(key): key for key in keys}
    candidates = []
    for name in own:
        base = name.rsplit("/", 1)[-1]
        lead = leading_key(base, known)
        if not keys:
            why, reason = own_reason or (WHY_CHANGE, "a document of the story's change")
        elif base.lower().startswith(("spec-", "tech-spec-")):
            why, reason = WHY_SPEC, "the story's spec: its key, story_key or [specs] attach"
        elif lead is not None and lead in spelled:
            shown_key = spelled[lead]
            why, reason = WHY_OWN_KEY, f"the story file: its name starts with story key {shown_key}"
        else:
            why, reason = WHY_HEADING, "the story file: its # Story heading names the story"
        candidates.append(Candidate(name, "story", reason, root / name, True, why=why))
    return candidates


def _context_list_candidates(
    root: Path, context_files: Sequence[StoryContextFile], listed: set[str]
) -> list[Candidate]:
    """The files the story's plan asks for (a spec's context: list, the epic's context), each
    a row of its own unless ``listed`` already; the resolution marks one outside the
    project, missing or not a regular file, and never reads it."""
    listed = set(listed)
    candidates = []
    for item in context_files:
        if item.path not in listed:
            listed.add(item.path)
            secret = is_secret_like(item.path)
            candidates.append(
                Candidate(
                    item.path,
                    "story",
                    SECRET_LIKE_REASON if secret else item.reason,
                    root / item.path,
                    not secret,
                    flags=item.flags,
                    why=WHY_EPIC_CONTEXT if "epic context" in item.reason else WHY_CONTEXT_LIST,
                )
            )
    return candidates


def _row_candidates(root: Path, rows: Sequence[PlanRow]) -> list[Candidate]:
    """Files of a category of their own, once each: a v4 project's always-load files, the
    story file's companions, its epic's tech spec."""
    seen_rows: set[str] = set()
    candidates = []
    for row in rows:
        if row.path in seen_rows:
            continue
        seen_rows.add(row.path)
        secret = is_secret_like(row.path)
        candidates.append(
            Candidate(
                row.path,
                row.category,
                SECRET_LIKE_REASON if secret else row.reason,
                root / row.path,
                row.wanted and not secret,
                why=row.why,
            )
        )
    return candidates


def _mark_second_claims(
    root: Path, groups: dict[str, list[Candidate]], claims: Sequence[StoryContextFile]
) -> None:
    """Files that claim the story too but lost to its own file: the key scan finds them by
    name, so each is kept as a row that says whose file the story uses, never sent."""
    by_shown: dict[str, list[Candidate]] = {}
    if claims:
        for group in groups.values():
            for candidate in group:
                by_shown.setdefault(candidate.shown, []).append(candidate)
    for claim in claims:
        holders = by_shown.get(claim.path, [])
        if not holders:
            holders = [Candidate(claim.path, "story", "", root / claim.path, False)]
            by_shown[claim.path] = holders
            groups["story"].append(holders[0])
        for candidate in holders:
            candidate.wanted, candidate.reason = False, claim.reason
            candidate.why = WHY_SECOND_CLAIM


def _additional_candidates(root: Path, additional_files: Iterable[str]) -> list[Candidate]:
    """5. Additional explicit files, relative to the root unless absolute."""
    candidates = []
    for name in additional_files:
        path = Path(name).expanduser()
        shown = name
        if not path.is_absolute():
            path = root / path
            shown = Path(os.path.normpath(name)).as_posix()
        candidates.append(
            Candidate(shown, "additional", "added by hand", path, True, why=WHY_ADDED)
        )
    return candidates


def _in_order(groups: dict[str, list[Candidate]], left_out: Sequence[str]) -> list[Candidate]:
    """The candidates in injection order, category by category; a wanted one the user left
    out is listed, excluded."""
    ordered: list[Candidate] = []
    for category in CATEGORIES:
        ordered.extend(_sorted_group(groups[category]))
    dropped = set(left_out)
    for candidate in ordered:
        if candidate.shown in dropped and candidate.wanted:
            candidate.wanted = False
            candidate.reason = f"left out ({candidate.reason})"
    return ordered


def _lexically_outside(path: Path, root: Path) -> bool:
    normal = os.path.normpath(path)
    return normal != str(root) and not normal.startswith(str(root).rstrip(os.sep) + os.sep)


def apply_choices(
    candidates: list[Candidate],
    root: Path,
    excluded: Sequence[str],
    included: Sequence[str],
) -> None:
    """The user's per-file choices (:mod:`.choices`), a filter over the planned candidates.

    An excluded candidate is left out with its reason, unless it is one of the story's own
    files (a file its plan asks for, a ``context:`` file, can be); an included one a toggle
    left out is taken in; an included path that is no candidate is added like ``--file``.
    """
    left_out, taken_in = set(excluded), set(included)
    for candidate in candidates:
        own = is_own_story_file(candidate.category, candidate.why)
        if candidate.shown in left_out and not own and candidate.wanted:
            candidate.wanted = False
            candidate.reason = LEFT_OUT_REASON
        elif candidate.shown in taken_in and not candidate.wanted:
            candidate.wanted = True
            candidate.reason = TAKEN_IN_REASON
    known = {c.shown for c in candidates}
    for name in included:
        if name not in known:
            candidates.append(
                Candidate(name, "additional", TAKEN_IN_REASON, root / name, name not in left_out)
            )


def resolve_candidates(candidates: list[Candidate], root: Path, error_bytes: int) -> None:
    """Set status and size of each candidate from the file system, without reading content."""
    seen: dict[str, Candidate] = {}
    for candidate in candidates:
        shown = printable_name(candidate.shown)
        if shown != candidate.shown:
            # The path attribute of the envelope must be text: such a file cannot be named.
            candidate.shown = shown
            candidate.status = NOT_UTF8
            candidate.reason = "file name is not valid UTF-8; not read"
            continue
        if candidate.derived:
            candidate.size = len((candidate.content or "").encode("utf-8"))
            candidate.status = INCLUDED if candidate.wanted else EXCLUDED
            continue
        if candidate.category != "additional" and _lexically_outside(candidate.path, root):
            # A plan file named it (a spec's context: list): outside the project it is never
            # looked at, not even to say whether it exists.
            candidate.status = OUTSIDE
            candidate.reason = f"{candidate.reason}: outside the project root; not read"
            continue
        if not candidate.wanted:
            candidate.status = EXCLUDED
            try:
                candidate.size = candidate.path.stat().st_size
            except OSError:
                candidate.size = 0
            continue
        try:
            real = candidate.path.resolve(strict=True)
        except RuntimeError:
            candidate.status = UNREADABLE
            candidate.reason = "a symlink loop; not read"
            continue
        except ValueError:
            candidate.status = UNREADABLE
            candidate.reason = "a NUL byte in the path; not read"
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                candidate.status = UNREADABLE
                candidate.reason = "a symlink loop; not read"
                continue
            candidate.status = MISSING
            if not candidate.reason.startswith("no project context"):
                candidate.reason = "no such file"
            continue
        try:
            inside = real.relative_to(root)
        except ValueError:
            candidate.status = OUTSIDE
            candidate.reason = "outside the project root; not read"
            continue
        if candidate.category == "additional":
            candidate.shown = inside.as_posix()
        key = str(real)
        first = seen.get(key)
        if first is not None:
            candidate.status = DUPLICATE
            candidate.reason = f"already included as {first.shown}"
            candidate.size = first.size
            continue
        seen[key] = candidate
        try:
            stat = real.stat()
        except OSError as exc:
            candidate.status = UNREADABLE
            candidate.reason = exc.strerror or "cannot stat"
            continue
        if not stat_module.S_ISREG(stat.st_mode):
            # A FIFO or a device would block or never end: it is never opened.
            candidate.status = UNREADABLE
            candidate.reason = "not a regular file; not read"
            continue
        candidate.size = stat.st_size
        if stat.st_size > error_bytes:
            candidate.status = TOO_LARGE
            candidate.reason = (
                f"{stat.st_size:,} bytes on disk, over the {error_bytes:,}-byte limit on its "
                "own; not read"
            )


def mark_over_budget(candidates: list[Candidate], error_bytes: int) -> None:
    """Mark as too large, unread, every included file past the point where the sizes on disk
    add up over the error line: the verdict comes from ``stat``, and no more than the error
    line is ever read, however many files match."""
    running = 0
    for candidate in candidates:
        if candidate.status != INCLUDED:
            continue
        running += candidate.size
        if running > error_bytes:
            candidate.status = TOO_LARGE
            candidate.reason = (
                f"not read: the files before it and this one are {running:,} bytes on disk, "
                f"over the {error_bytes:,}-byte limit"
            )


def read_candidate(candidate: Candidate, root: Path, limit: int) -> None:
    """Read one resolved candidate fresh from disk; mark it if it is not UTF-8 text.

    Every byte is kept (a BOM too): the injection sends the bytes on disk.
    """
    data = read_file_bytes(candidate.path, root, limit=limit)
    if isinstance(data, TextProblem):
        candidate.status = TOO_LARGE if data.reason == "too-large" else UNREADABLE
        candidate.reason = str(data)
        return
    candidate.size = len(data)
    nul = data.find(b"\x00")
    if nul != -1:
        candidate.status = NOT_UTF8
        candidate.reason = f"binary (NUL byte at offset {nul})"
        return
    try:
        # Decoded without newline translation: the bytes sent are the bytes on disk.
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        candidate.status = NOT_UTF8
        candidate.reason = f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        return
    candidate.content = text
    breakers = [tag for tag in ENVELOPE_BREAKERS if tag in text]
    if breakers:
        candidate.flags = (*candidate.flags, "breaks-envelope")
