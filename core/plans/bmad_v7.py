"""BMAD v7's initiative ticket tree.

Everything lives under ``{output_folder}/{active_initiative}/``::

    initiative-<slug>/
      tickets.toml                [[epic]] id, slug (the folder's name), title
                                  (or [[entry]] tables directly)
      epic-<slug>/
        epic-<slug>.md
        tickets.toml              [[entry]] id (1 or "6a"), type story|spike|bug, title, …
        story-<slug>.md           the story (optional); front matter ``id: <entry id>``
        story-<slug>-plan.md      front matter ``ticket: <entry id>``; owns the status;
                                  ``context:`` the files the implementing agent loads
    backlog/                      story-|spike-|bug-<slug>.md (+ -plan.md), no entry

The active initiative is ``active_initiative`` under ``[core]`` or ``[modules.bmm]`` of
``_bmad/custom/config.user.toml`` (then ``_bmad/custom/config.toml``, ``_bmad/config.user.toml``,
``_bmad/config.toml``); with none set, every ``initiative-*`` folder is read. The order of the
tables is the build order; keys this reader does not know are ignored. Status never lives in
``tickets.toml``: an entry with no plan is planned, a plan carries ``status`` (joined to its
entry by ``ticket``, never by file name), and a tracker sync may write ``tracker_status`` in
the leaf file. A plan's status shows as BMAD's board shows it (none, ``draft``,
``ready-for-dev`` → backlog; ``in-progress``, ``blocked`` → in-progress; ``in-review``,
``built`` → review; ``done``; ``dropped``), its own word kept in :attr:`Story.status_note`.
An epic's ``slug`` is its folder's name (``epic-pricing-rules``); a slug written without the
prefix names the same folder. TOML is read with the standard library's ``tomllib``.
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..lean_dataclass import dataclass
from ..project.bmad_folders import BMAD_TOML_LAYERS
from ..project.listing import folder_names
from ..project.textfiles import (
    LONG_NUMBER,
    MAX_TOML_DEPTH,
    TextProblem,
    check_toml_shape,
    read_text_file,
)
from ..project.workspace import Workspace
from ..stories.keys import normalize_key
from ..stories.model import (
    SourceResult,
    Story,
    Task,
    UnreadableEntry,
    plan_status,
    source_line,
)
from .context_files import ContextEntry, context_entries, output_folder
from .markdown import (
    PlanYamlError,
    TaskNestingError,
    iter_headings,
    parse_task_list,
    read_front_matter,
    scalar_text,
)

ARCHIVE_V6 = "archive-v6"
_LEAF = re.compile(r"^(?P<type>story|spike|bug)-(?P<slug>.+?)(?P<plan>-plan)?\.md$")
_TOML_LINE = re.compile(r"at line (?P<line>\d+)")
_TABLE_HEADER = re.compile(r"^\s*\[\[\s*(?P<name>[A-Za-z_]+)\s*\]\]")


@dataclass(frozen=True)
class LeafFile:
    """A ``story-|spike-|bug-<slug>[-plan].md`` file and what its front matter says."""

    path: str
    kind: str
    slug: str
    is_plan: bool
    ticket: str | None
    title: str | None
    raw_status: str | None
    status_line: int
    tasks: tuple[Task, ...] = ()
    context: tuple[ContextEntry, ...] = ()


@dataclass
class V7Ticket:
    """One ticket of the tree: an ``[[entry]]`` (or a backlog file), its leaf and its plan.

    Attributes:
        epic_id: the epic's id (``""`` for an initiative with no epics, ``backlog``).
        entry_id: the entry's id as written (``1``, ``6a``); the slug for a backlog file.
        kind: ``story``, ``spike`` or ``bug``.
        title: the entry's title.
        source: where the ticket is declared: ``tickets.toml:line`` or the backlog file.
        epic_title: the epic's title.
        epic_file: the epic's own ``epic-<slug>.md``, when there is one.
        leaf: the story file; plan: the plan that owns the status.
        after: the entries this one comes after (``after``), as written: an entry id of the
            same epic, or ``<epic id>.<entry id>`` for another epic's.
    """

    epic_id: str
    entry_id: str
    kind: str
    title: str
    source: str
    epic_title: str = ""
    epic_file: str | None = None
    leaf: LeafFile | None = None
    plan: LeafFile | None = None
    after: tuple[str, ...] = ()


@dataclass
class V7Tree:
    """What the reader found: the initiative folders read, tickets in build order, problems."""

    initiatives: list[str] = field(default_factory=list)
    tickets: list[V7Ticket] = field(default_factory=list)
    problems: list[UnreadableEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _toml(
    path: Path, rel: str, root: Path, limit: int, problems: list[UnreadableEntry]
) -> tuple[dict[str, Any], str] | None:
    """The parsed TOML file and its text (tomllib keeps no positions; the text gives the
    lines of its tables), or None when it is missing or cannot be read."""
    text = read_text_file(path, root=root, limit=limit)
    if isinstance(text, TextProblem):
        if text.reason != "missing":
            problems.append(UnreadableEntry(rel, None, str(text)))
        return None
    # Imported here: a v6 plan (the common one) has no TOML to read.
    import tomllib

    try:
        # tomllib recurses on nesting: a hostile file is refused before it is parsed.
        check_toml_shape(text, rel)
        return tomllib.loads(text), text
    except ConfigError:
        problems.append(UnreadableEntry(rel, None, f"nested deeper than {MAX_TOML_DEPTH} levels"))
        return None
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE.search(str(exc))
        problems.append(
            UnreadableEntry(rel, int(found.group("line")) if found else None, f"TOML: {exc}")
        )
        return None
    except ValueError:
        # tomllib's `int()` refuses a number past 4,300 digits with a bare ValueError.
        problems.append(UnreadableEntry(rel, None, f"TOML: {LONG_NUMBER}"))
        return None


def active_initiatives(workspace: Workspace, tree: V7Tree) -> list[str]:
    """The initiative folder names to read, root-relative (see the module's docstring)."""
    root = workspace.root
    limit = workspace.config.read_max_bytes
    out = output_folder(workspace)
    # BMAD's layered config, most specific first: the first that sets the initiative wins.
    for layer in BMAD_TOML_LAYERS:
        parsed = _toml(root / layer, layer, root, limit, tree.problems)
        if parsed is None:
            continue
        data = parsed[0]
        tables = [data.get("core"), (data.get("modules") or {}).get("bmm")]
        for table in tables:
            value = table.get("active_initiative") if isinstance(table, dict) else None
            if isinstance(value, str) and value.strip():
                name = value.strip()
                if "/" in name or name in (".", "..") or name.startswith("."):
                    tree.problems.append(
                        UnreadableEntry(
                            layer, None, f"active_initiative '{name}' is not a folder name"
                        )
                    )
                    return []
                return [f"{out}/{name}" if out != "." else name]
    names = folder_names(root / out) or []
    return [
        f"{out}/{name}" if out != "." else name
        for name in sorted(names)
        if name.startswith("initiative-") and (root / out / name).is_dir()
    ]


def _table_lines(text: str, name: str) -> list[int]:
    """1-based lines of each ``[[name]]`` header, in order (tomllib keeps no positions)."""
    return [
        i + 1
        for i, line in enumerate(text.splitlines())
        if (m := _TABLE_HEADER.match(line)) and m.group("name") == name
    ]


def _after_text(value: Any) -> str | None:
    """An ``after`` item: an entry id, or ``<epic id>.<entry id>`` (another epic's entry)."""
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9]+\.[A-Za-z0-9]+", value.strip()):
        return value.strip()
    return _id_text(value)


def _id_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9]+", value.strip()):
        return value.strip()
    return None


def _read_leaf(
    path: str,
    rel: str,
    workspace: Workspace,
    problems: list[UnreadableEntry],
    *,
    listed: bool = False,
) -> LeafFile | None:
    # Plain strings rather than Path objects: a tree of thousands of tickets passes here.
    match = _LEAF.match(rel.rsplit("/", 1)[-1])
    if match is None:
        return None
    text = read_text_file(
        path, root=workspace.root, limit=workspace.config.read_max_bytes, listed=listed
    )
    if isinstance(text, TextProblem):
        problems.append(UnreadableEntry(rel, None, str(text)))
        return None
    lines = text.splitlines()
    try:
        front = read_front_matter(lines)
    except PlanYamlError as exc:
        problems.append(UnreadableEntry(rel, exc.line, f"front matter: {exc.message}"))
        return None
    fields = front.fields if front else {}
    is_plan = bool(match.group("plan"))
    status_field = "status" if is_plan else "tracker_status"
    raw_status = scalar_text(fields.get(status_field))
    start = front.body_start if front else 0
    title = scalar_text(fields.get("title"))
    if title is None and not is_plan:
        heading = next((h for h in iter_headings(lines[start:]) if h.level == 1), None)
        title = heading.text if heading is not None and heading.text else None
    # A plan names its entry by ``ticket``; a leaf file carries the entry's own ``id``
    # (BMAD's template: "the leaf file carries it as `id:`"), older trees ``ticket``.
    ticket = _id_text(fields.get("ticket" if is_plan else "id"))
    if ticket is None and not is_plan:
        ticket = _id_text(fields.get("ticket"))
    context: tuple[ContextEntry, ...] = ()
    if is_plan and front is not None:
        # BMAD's plan template: ``context:`` lists the files the implementing agent loads.
        context = context_entries(
            front.document, "context", "context: list", workspace, rel, None, problems
        )
    tasks: tuple[Task, ...] = ()
    if "[" in text:
        try:
            tasks = parse_task_list(lines[start:])
        except TaskNestingError as exc:
            problems.append(UnreadableEntry(rel, None, f"tasks: {exc}"))
    return LeafFile(
        path=rel,
        kind=match.group("type"),
        slug=match.group("slug"),
        is_plan=is_plan,
        ticket=ticket,
        title=title,
        raw_status=raw_status,
        status_line=front.document.line_of(status_field, 0) if front and raw_status else 0,
        tasks=tasks,
        context=context,
    )


def _leaves(
    folder: Path, rel: str, workspace: Workspace, problems: list[UnreadableEntry]
) -> list[LeafFile]:
    """The story, spike and bug files of one folder (inside the project, not a symlink).

    The listing's own file types spare a ``stat`` per file: a regular file is read as
    listed; a symlink goes through the guarded reader's full checks; a FIFO or a device
    named like a leaf is reported, never opened.
    """
    try:
        with os.scandir(folder) as scan:
            entries = sorted(
                (e for e in scan if _LEAF.match(e.name) is not None), key=lambda e: e.name
            )
    except OSError:
        return []
    found: list[LeafFile] = []
    for entry in entries:
        leaf_rel = f"{rel}/{entry.name}"
        try:
            link = entry.is_symlink()
            regular = link or entry.is_file(follow_symlinks=False)
        except OSError:
            regular = False
        if not regular:
            if not entry.is_dir(follow_symlinks=False):
                problems.append(UnreadableEntry(leaf_rel, None, "not a regular file; not read"))
            continue
        leaf = _read_leaf(entry.path, leaf_rel, workspace, problems, listed=not link)
        if leaf is not None:
            found.append(leaf)
    return found


def _join(tickets: list[V7Ticket], leaves: list[LeafFile], problems: list[UnreadableEntry]) -> None:
    """Give each ticket its plan (by ``ticket`` id) and its leaf (the plan's slug, or its own
    ``ticket``); a plan naming no entry is reported, never guessed onto one."""
    by_id = {t.entry_id.lower(): t for t in tickets}
    plans = [leaf for leaf in leaves if leaf.is_plan]
    stories = {(leaf.kind, leaf.slug): leaf for leaf in leaves if not leaf.is_plan}
    claimed: set[str] = set()
    for plan in plans:
        ticket = by_id.get(plan.ticket.lower()) if plan.ticket else None
        if ticket is None:
            why = (
                f"ticket '{plan.ticket}' is no entry of this epic"
                if plan.ticket
                else "no 'ticket' id"
            )
            problems.append(UnreadableEntry(plan.path, None, f"plan has {why}; not joined"))
            continue
        if ticket.plan is not None:
            problems.append(
                UnreadableEntry(
                    plan.path,
                    None,
                    f"entry {ticket.entry_id} already has plan {ticket.plan.path}; not read",
                )
            )
            continue
        ticket.plan = plan
        leaf = stories.get((plan.kind, plan.slug))
        if leaf is not None:
            ticket.leaf = leaf
            claimed.add(leaf.path)
    for leaf in stories.values():
        if leaf.path in claimed:
            continue
        ticket = by_id.get(leaf.ticket.lower()) if leaf.ticket else None
        if ticket is not None and ticket.leaf is None:
            ticket.leaf = leaf
            continue
        problems.append(
            UnreadableEntry(
                leaf.path, None, "no plan or 'ticket' id joins it to an entry; not read"
            )
        )


def _entries(
    data: dict[str, Any],
    text_lines: list[int],
    rel: str,
    epic_id: str,
    epic_title: str,
    epic_file: str | None,
    problems: list[UnreadableEntry],
) -> list[V7Ticket]:
    raw = data.get("entry", [])
    if not isinstance(raw, list):
        problems.append(UnreadableEntry(rel, None, "'entry' is not an array of tables"))
        return []
    tickets: list[V7Ticket] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        line = text_lines[index] if index < len(text_lines) else None
        entry_id = _id_text(entry.get("id")) if isinstance(entry, dict) else None
        if entry_id is None or not isinstance(entry, dict):
            problems.append(UnreadableEntry(rel, line, "entry has no usable 'id'; not read"))
            continue
        if entry_id.lower() in seen:
            problems.append(
                UnreadableEntry(
                    rel, line, f"entry id '{entry_id}' appears twice; the first is kept"
                )
            )
            continue
        seen.add(entry_id.lower())
        kind = str(entry["type"]) if entry.get("type") in ("story", "spike", "bug") else "story"
        title = scalar_text(entry.get("title")) or f"Entry {entry_id}"
        after = entry.get("after")
        named = after if isinstance(after, list) else [after] if after is not None else []
        tickets.append(
            V7Ticket(
                epic_id,
                entry_id,
                kind,
                title.strip(),
                f"{rel}:{line}" if line else rel,
                epic_title,
                epic_file,
                after=tuple(i for i in (_after_text(v) for v in named[:100]) if i is not None),
            )
        )
    return tickets


def _read_tickets(
    folder: Path, rel: str, workspace: Workspace, tree: V7Tree
) -> tuple[dict[str, Any], str] | None:
    path = folder / "tickets.toml"
    limit = workspace.config.read_max_bytes
    return _toml(path, f"{rel}/tickets.toml", workspace.root, limit, tree.problems)


def epic_folder_name(slug: str) -> str:
    """The folder of the epic an ``[[epic]]`` table names by ``slug``.

    BMAD's own template writes the folder name itself (``slug = "epic-pricing-rules"``, "the
    epic's folder name") and its reader looks the folder up by that name; a slug written
    without the prefix (``pricing-rules``) names the same ``epic-pricing-rules/``.
    """
    return slug if slug.startswith("epic-") else f"epic-{slug}"


def load_initiative(workspace: Workspace, rel: str, tree: V7Tree) -> None:
    """Read one initiative folder into ``tree``: its epics in order, then their entries."""
    root = workspace.root
    folder = root / rel
    if not workspace.contains(folder) or not folder.is_dir():
        tree.problems.append(
            UnreadableEntry(rel, None, "the active initiative's folder is missing; not read")
        )
        return
    tree.initiatives.append(rel)
    parsed = _read_tickets(folder, rel, workspace, tree)
    if parsed is None:
        return
    data, text = parsed
    toml_rel = f"{rel}/tickets.toml"
    epics = data.get("epic", [])
    if "entry" in data:
        # An initiative with no epics holds its entries directly.
        lines = _table_lines(text, "entry")
        tickets = _entries(data, lines, toml_rel, "", "", None, tree.problems)
        _join(tickets, _leaves(folder, rel, workspace, tree.problems), tree.problems)
        tree.tickets.extend(tickets)
    if not isinstance(epics, list):
        tree.problems.append(UnreadableEntry(toml_rel, None, "'epic' is not an array of tables"))
        return
    epic_lines = _table_lines(text, "epic")
    for index, epic in enumerate(epics):
        line = epic_lines[index] if index < len(epic_lines) else None
        epic_id = _id_text(epic.get("id")) if isinstance(epic, dict) else None
        slug = epic.get("slug") if isinstance(epic, dict) else None
        if (
            epic_id is None
            or not isinstance(slug, str)
            or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", slug)
        ):
            tree.problems.append(
                UnreadableEntry(toml_rel, line, "epic has no usable 'id' and 'slug'; not read")
            )
            continue
        assert isinstance(epic, dict)
        title = scalar_text(epic.get("title")) or ""
        name = epic_folder_name(slug)
        epic_rel = f"{rel}/{name}"
        epic_folder = folder / name
        if not epic_folder.is_dir() or epic_folder.is_symlink():
            tree.notes.append(f"{toml_rel} line {line}: epic {epic_id} has no folder {name}/ yet")
            continue
        epic_file = f"{epic_rel}/{name}.md"
        epic_file_or_none = epic_file if (root / epic_file).is_file() else None
        epic_parsed = _read_tickets(epic_folder, epic_rel, workspace, tree)
        if epic_parsed is None:
            continue
        tickets = _entries(
            epic_parsed[0],
            _table_lines(epic_parsed[1], "entry"),
            f"{epic_rel}/tickets.toml",
            epic_id,
            title.strip(),
            epic_file_or_none,
            tree.problems,
        )
        _join(tickets, _leaves(epic_folder, epic_rel, workspace, tree.problems), tree.problems)
        tree.tickets.extend(tickets)


def load_backlog(workspace: Workspace, tree: V7Tree) -> None:
    """The ``{output_folder}/backlog/`` tickets: each leaf (or plan) is one ticket by slug."""
    out = output_folder(workspace)
    rel = f"{out}/backlog" if out != "." else "backlog"
    folder = workspace.root / rel
    if not workspace.contains(folder) or not folder.is_dir():
        return
    by_slug: dict[tuple[str, str], V7Ticket] = {}
    for leaf in _leaves(folder, rel, workspace, tree.problems):
        ticket = by_slug.get((leaf.kind, leaf.slug))
        if ticket is None:
            ticket = V7Ticket("backlog", leaf.slug, leaf.kind, leaf.title or leaf.slug, leaf.path)
            by_slug[(leaf.kind, leaf.slug)] = ticket
            tree.tickets.append(ticket)
        if leaf.is_plan:
            ticket.plan = leaf
        else:
            ticket.leaf = leaf
            ticket.source = leaf.path
        if leaf.title and not leaf.is_plan:
            ticket.title = leaf.title


def load_tree(workspace: Workspace) -> V7Tree | None:
    """The v7 plan of the workspace, or None when it has no initiative tree."""
    tree = V7Tree()
    initiatives = active_initiatives(workspace, tree)
    if not initiatives and not tree.problems:
        return None
    for rel in initiatives:
        load_initiative(workspace, rel, tree)
    if not tree.initiatives:
        return tree if tree.problems else None
    load_backlog(workspace, tree)
    return tree


def ticket_story(ticket: V7Ticket) -> Story:
    """One ticket as a ``v7`` story: ``<epic id>-<entry id>`` (the entry id alone in an
    initiative with no epics, ``backlog:<slug>`` in the backlog)."""
    if ticket.epic_id == "backlog":
        story_id = f"backlog:{ticket.entry_id}"
    elif ticket.epic_id:
        story_id = f"{ticket.epic_id}-{ticket.entry_id}"
    else:
        story_id = ticket.entry_id
    plan, leaf = ticket.plan, ticket.leaf
    note = ""
    if plan is not None:
        status, known = plan_status(plan.raw_status)
        source = source_line(plan.path, plan.status_line)
        written = (plan.raw_status or "").strip()
        if known and written and written.lower() != status:
            # The board's word is the status; the plan's own word stays in sight, with where.
            note = f"plan status '{written}' ({source}) shown as {status}, as BMAD's board does"
    else:
        # Status never lives in tickets.toml: an entry with no plan is planned.
        status, known, source = "backlog", True, ticket.source
    drift: tuple[str, ...] = ()
    if leaf is not None and leaf.raw_status is not None:
        tracked, _ = plan_status(leaf.raw_status)
        if tracked != status:
            where = source_line(leaf.path, leaf.status_line)
            drift = (f"{where} says tracker_status '{leaf.raw_status}'",)
    files = tuple(f.path for f in (leaf, plan) if f is not None)
    path = leaf.path if leaf is not None else plan.path if plan is not None else None
    tasks = (leaf.tasks if leaf is not None and leaf.tasks else ()) or (
        plan.tasks if plan is not None else ()
    )
    return Story(
        id=story_id,
        key=normalize_key(story_id),
        title=ticket.title,
        status=status,
        source="bmad",
        group=ticket.epic_id or "initiative",
        group_title=ticket.epic_title,
        path=path,
        tasks=tasks,
        files=files,
        layout="v7",
        status_source=source,
        status_drift=drift,
        status_known=known,
        status_note=note,
        context_files=tuple(
            dict.fromkeys([*([ticket.epic_file] if ticket.epic_file else []), *_plan_context(plan)])
        ),
    )


def _plan_context(plan: LeafFile | None) -> list[str]:
    """The files a plan's ``context:`` list names, root-relative, in order (none without a
    plan). The injection reads each inside the project only."""
    return [entry.path for entry in plan.context] if plan is not None else []


def load_stories(workspace: Workspace) -> tuple[SourceResult, tuple[str, ...]] | None:
    """Every ticket of the active initiative and the backlog as ``v7`` stories, in build
    order, and the initiative folders read; None when the workspace has no initiative tree."""
    tree = load_tree(workspace)
    if tree is None:
        return None
    stories = tuple(ticket_story(ticket) for ticket in tree.tickets)
    result = SourceResult(
        stories=stories, warnings=tuple(tree.notes), unreadable=tuple(tree.problems)
    )
    return result, tuple(tree.initiatives)
