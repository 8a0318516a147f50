"""Status written back after a phase's success (seed 002: status updates between phases).

BMAD's own workflows move a story through ``sprint-status.yaml`` and the story file's
``Status:`` line (dev-story sets ``review`` when it finishes, code-review sets ``done``).
promptdeck does the same after a phase succeeds, so ``stories`` and the app agree with the run
records:

* dev starts → ``in-progress`` (:func:`write_start`); dev succeeded → ``review``; review
  passed → ``done`` — in the story's ``development_status`` line of ``sprint-status.yaml`` and
  in the story file's ``Status:`` line (a BMAD v4 story's ``## Status`` section, in v4's own
  words: ``InProgress``, ``Review``, ``Done``);
* an OpenSpec story whose dev phase succeeded gets the still-open checkboxes of its group in
  ``tasks.md`` ticked (the agent is told to tick them; the ones it left are named).

Every edit changes one value on one line and keeps every other byte of the file — comments,
order, quoting, line endings. The runner calls :func:`write_back` before it stages or commits,
so the edits travel with the phase's work; the result is recorded in the run folder
(``status.json``). ``[status] write_back = false`` switches it off.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ..lean_dataclass import dataclass
from ..project.rewrites import ReadForRewrite, RewriteRefused, read_for_rewrite, rewrite_file
from ..project.textfiles import TextProblem
from ..project.workspace import Workspace
from ..stories.keys import story_entry_keys
from ..stories.model import STATUS_LINE_MAX, Story, read_status
from .markdown import iter_headings, section_lines
from .sprint_status import (
    SPRINT_STATUS_NAME,
    SprintStatusError,
    parse_sprint_status,
)

STATUS_AFTER = {"dev": "review", "review": "done"}
"""The BMAD status a story takes after each phase's success."""
STATUS_AT_START = {"dev": "in-progress"}
"""The BMAD status a story takes when a phase starts (BMAD's dev-story does the same)."""

RECORD_NAME = "status.json"

# `  1-2-login: ready-for-dev  # note` → head, value, tail (the tail keeps the comment).
_YAML_VALUE = re.compile(
    r"^(?P<head>[ ]*(?:'(?:[^']|'')*'|\"(?:[^\"\\]|\\.)*\"|[^:#'\"][^:#]*?)[ ]*:[ ]+)"
    r"(?P<value>'(?:[^']|'')*'|\"(?:[^\"\\]|\\.)*\"|[^\s#]+)(?P<tail>.*)$"
)
_STATUS_VALUE = re.compile(
    r"^(?P<head>\s*(?:[-*]\s+)?\**Status\**\s*:\s*\**\s*)(?P<value>[^*\s][^*]*?)(?P<tail>\s*\**\s*)$",
    re.IGNORECASE,
)
_BARE_VALUE = re.compile(r"^(?P<head>\s*\**)(?P<value>[^*\s][^*]*?)(?P<tail>\**\s*)$")
# A v4 `## Status` value as real files decorate it: `**✅ COMPLETE** (2026-01-16)`.
_SECTION_VALUE = re.compile(
    r"^(?P<head>\s*[*_`]*)(?P<value>[^*_`\s](?:[^*_`]*[^*_`\s])?)(?P<tail>[*_`]*)"
    r"(?P<remark>\s*\(.*\))?\s*$"
)
_STATUS_SECTION = re.compile(r"^Status\s*$", re.IGNORECASE)
_GROUP_HEADING = re.compile(
    r"^(?:(?:Phase|Group|Stage|Part|Step)\s+)?(?P<number>\d+)[.):]?\s+", re.IGNORECASE
)
_OPEN_BOX = re.compile(r"^(?P<head>[ \t]*(?:[-*+]|\d+[.)])[ \t]+\[) (?P<tail>\][ \t]+\S.*)$")


@dataclass(frozen=True)
class LineEdit:
    """One value changed on one line of one file.

    Attributes:
        path: the file, root-relative.
        line: 1-based line number.
        before: the line as it was (without its line ending).
        after: the line as written.
    """

    path: str
    line: int
    before: str
    after: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape kept in the run folder."""
        return {"path": self.path, "line": self.line, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class StatusUpdate:
    """What :func:`write_back` did for one successful phase.

    Attributes:
        story: the story id.
        phase: the phase that succeeded.
        status: the status written (BMAD), or None (OpenSpec ticks, or nothing to do).
        edits: every line changed, in order.
        notes: what was left as it was, and why (no entry, no ``Status:`` line …).
        failures: each file that should have been written and was not, with the reason (a
            symlink in its place, a folder leading out, a file changed since it was read, a
            full disk): a write-back with a failure is not a success.
    """

    story: str
    phase: str
    status: str | None
    edits: tuple[LineEdit, ...] = ()
    notes: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``status.json``."""
        return {
            "story": self.story,
            "phase": self.phase,
            "status": self.status,
            "edits": [edit.to_dict() for edit in self.edits],
            "notes": list(self.notes),
            "failures": list(self.failures),
        }

    def summary(self) -> str:
        """One line per edit and note, for the run's notices."""
        lines = [f"{e.path}:{e.line}: {e.before.strip()} → {e.after.strip()}" for e in self.edits]
        failed = [f"failed: {failure}" for failure in self.failures]
        return "\n".join([*lines, *self.notes, *failed]) or "nothing to write"


def _split(text: str) -> list[tuple[str, str]]:
    """``(body, line ending)`` of every line; joined back they are ``text`` exactly."""
    out: list[tuple[str, str]] = []
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        out.append((body, raw[len(body) :]))
    return out


def _yaml_scalar(old: str, new: str) -> str:
    """``new`` written in the quoting style of ``old``."""
    if old.startswith("'"):
        return "'" + new.replace("'", "''") + "'"
    if old.startswith('"'):
        return '"' + new.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return new


def set_sprint_status(text: str, key: str, status: str) -> tuple[str, int, str, str] | None:
    """``text`` with story ``key``'s ``development_status`` value set to ``status``.

    Only the value of that one line changes: its key, quoting style, spacing, trailing
    comment and line ending are kept, as is every other byte of the file.

    Args:
        text: the ``sprint-status.yaml`` text.
        key: the story's normalized key (``1-2``); matched against each entry's id.
        status: the value to write.

    Returns:
        ``(new text, line number, old line, new line)``; None when the file has no entry for
        the story or already holds ``status``.

    Raises:
        SprintStatusError: the file does not have the shape ``sprint-status.yaml`` has.
    """
    wanted = None
    entries = parse_sprint_status(text)
    # Each entry read as the BMAD source reads it, so a three-level key (`10-1-1`) or a
    # prefixed track's (`petition-2a-1`) finds its own line, never its parent's.
    for entry, read in zip(entries, story_entry_keys([e.name for e in entries]), strict=True):
        if read is not None and read.key == key:
            wanted = entry
            break
    if wanted is None or wanted.value == status:
        return None
    lines = _split(text)
    body, ending = lines[wanted.line - 1]
    match = _YAML_VALUE.match(body)
    if match is None:
        return None
    new_body = (
        match.group("head") + _yaml_scalar(match.group("value"), status) + match.group("tail")
    )
    lines[wanted.line - 1] = (new_body, ending)
    return "".join(b + e for b, e in lines), wanted.line, body, new_body


V4_WORDS = {
    "backlog": "Draft",
    "ready-for-dev": "Approved",
    "in-progress": "InProgress",
    "review": "Review",
    "done": "Done",
}
"""A story status in BMAD v4's words, as its story template writes them in ``## Status``."""


def set_story_file_status(text: str, status: str) -> tuple[str, int, str, str] | None:
    """``text`` with the story file's ``Status:`` value set to ``status``.

    The line BMAD's template writes (``Status: ready-for-dev`` before the first section, also
    ``**Status:** …`` or ``- Status: …``), or the first line of a ``## Status`` section. Only
    the value changes. A ``## Status`` value written in BMAD v4's capitalised words
    (``Approved``, ``InProgress``, ``**✅ COMPLETE** (2026-01-16)``) gets v4's word for the
    new status (:data:`V4_WORDS`), its emphasis kept and its remark (a date of the old
    status) dropped; a value already meaning ``status`` is left as it is.

    Returns:
        ``(new text, line number, old line, new line)``; None when the file has no status
        line or already says ``status``.
    """
    lines = _split(text)
    bodies = [body for body, _ in lines]
    headings = list(iter_headings(bodies))
    first_section = next((h.line for h in headings if h.level >= 2), len(bodies))
    # From the story's heading on, as the reader looks: a front matter `status:` above it
    # is not the story's.
    start = next((h.line for h in headings if h.level == 1), 0)
    candidates = list(range(start, first_section))
    section_line: int | None = None
    for heading in headings:
        if heading.level >= 2 and _STATUS_SECTION.match(heading.text):
            section = section_lines(bodies, heading, headings)
            offset = next((i for i, line in enumerate(section) if line.strip()), None)
            if offset is not None:
                section_line = heading.line + 1 + offset
                candidates.append(section_line)
            break
    for index in candidates:
        body, ending = lines[index]
        # The reader looks at a line's first STATUS_LINE_MAX characters only; a longer
        # status line is read cut, and never rewritten.
        match = _STATUS_VALUE.match(body[:STATUS_LINE_MAX])
        if match is None and index == section_line:
            if len(body) > STATUS_LINE_MAX:
                return None
            v4 = _SECTION_VALUE.match(body)
            # v4's template capitalises its words (`Approved`, `InProgress`); a section
            # value in the story statuses' own lower-case words keeps those words.
            if v4 is not None and v4.group("value") != v4.group("value").lower():
                if read_status(body).status == status:
                    return None
                new_body = v4.group("head") + V4_WORDS.get(status, status) + v4.group("tail")
                lines[index] = (new_body, ending)
                return "".join(b + e for b, e in lines), index + 1, body, new_body
            match = _BARE_VALUE.match(body)
        if match is None:
            continue
        if len(body) > STATUS_LINE_MAX or read_status(match.group("value")).status == status:
            return None
        new_body = match.group("head") + status + match.group("tail")
        lines[index] = (new_body, ending)
        return "".join(b + e for b, e in lines), index + 1, body, new_body
    return None


def tick_group_tasks(text: str, number: str) -> tuple[str, list[tuple[int, str, str]]]:
    """``text`` with every open checkbox of group ``number`` of a ``tasks.md`` ticked.

    Returns:
        The new text and ``(line number, old line, new line)`` of each ticked box.
    """
    lines = _split(text)
    bodies = [body for body, _ in lines]
    headings = list(iter_headings(bodies))
    group = next(
        (
            h
            for h in headings
            if h.level == 2
            and (m := _GROUP_HEADING.match(h.text)) is not None
            and str(int(m.group("number"))) == number
        ),
        None,
    )
    if group is None:
        return text, []
    end = next((h.line for h in headings if h.line > group.line and h.level <= 2), len(lines))
    ticked: list[tuple[int, str, str]] = []
    for index in range(group.line + 1, end):
        body, ending = lines[index]
        match = _OPEN_BOX.match(body)
        if match is None:
            continue
        new_body = match.group("head") + "x" + match.group("tail")
        lines[index] = (new_body, ending)
        ticked.append((index + 1, body, new_body))
    return "".join(b + e for b, e in lines), ticked


class _Files:
    """The files one write-back reads and rewrites, through the guarded read and rewrite
    (:mod:`promptdeck.core.project.rewrites`), with what could not be done."""

    def __init__(self, workspace: Workspace) -> None:
        self.root = workspace.root.resolve()
        self.limit = workspace.config.read_max_bytes
        self.read: dict[str, ReadForRewrite] = {}
        self.notes: list[str] = []
        self.failures: list[str] = []

    def text(self, rel: str) -> str | None:
        """The file's text, or None (a note when it is missing, a failure otherwise)."""
        got = read_for_rewrite(self.root / rel, self.root, limit=self.limit)
        if isinstance(got, TextProblem):
            if got.reason == "missing":
                self.notes.append(f"{rel}: missing; not updated")
            else:
                self.failures.append(f"{rel}: {got}; not updated")
            return None
        try:
            text = got.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.failures.append(f"{rel}: not UTF-8 (offset {exc.start}); not updated")
            return None
        self.read[rel] = got
        return text

    def write(self, rel: str, text: str) -> bool:
        """Replace the file read as ``rel``; False (and a failure) when it cannot be."""
        try:
            # Bytes, not text mode: no newline translation, so untouched lines stay identical.
            rewrite_file(
                self.root / rel, self.root, text.encode("utf-8"), self.read[rel].identity, shown=rel
            )
        except RewriteRefused as exc:
            self.failures.append(str(exc))
            return False
        return True

    def update(
        self, story: Story, phase: str, status: str | None, edits: list[LineEdit]
    ) -> StatusUpdate:
        return StatusUpdate(
            story.id, phase, status, tuple(edits), tuple(self.notes), tuple(self.failures)
        )


FRONT_MATTER_WORDS = {"review": "in-review"}
"""Where a build spec's or a v7 plan's own word differs from the story status (BMAD's spec
and plan enums say ``in-review``); every other status is written as it is."""


def set_front_matter_status(text: str, status: str) -> tuple[str, int, str, str] | None:
    """``text`` with its front matter's top-level ``status:`` value set to ``status``, in the
    old value's quoting.

    Returns:
        ``(new text, line number, old line, new line)``; None when the file has no front
        matter ``status:`` or already says ``status``.
    """
    lines = _split(text)
    if not lines or lines[0][0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        body, ending = lines[index]
        if body.strip() in ("---", "..."):
            return None
        match = _YAML_VALUE.match(body)
        if match is None or body.startswith((" ", "\t")):
            continue
        if match.group("head").split(":", 1)[0].strip().strip("'\"") != "status":
            continue
        old = match.group("value")
        if old.strip("'\"").lower() == status:
            return None
        new_body = match.group("head") + _yaml_scalar(old, status) + match.group("tail")
        lines[index] = (new_body, ending)
        return "".join(b + e for b, e in lines), index + 1, body, new_body
    return None


def status_owner(story: Story) -> str | None:
    """The file whose front matter owns a story's status: a build spec (``spec``,
    ``bmad-spec``) or a v7 plan; None for a classic story or when there is none yet."""
    if story.layout == "v7":
        return next((f for f in story.files if f.endswith("-plan.md")), None)
    if story.layout in ("spec", "bmad-spec"):
        return story.path
    return None


def _front_matter(files: _Files, story: Story, status: str) -> list[LineEdit]:
    """Set the status in the front matter of the file that owns it (a build spec or a v7
    plan), through the same guarded rewrite as every other write-back."""
    owner = status_owner(story)
    if owner is None:
        what = "plan" if story.layout == "v7" else "spec file"
        files.notes.append(f"story {story.id} has no {what} yet; its status is not written")
        return []
    text = files.text(owner)
    word = FRONT_MATTER_WORDS.get(status, status)
    changed = set_front_matter_status(text, word) if text is not None else None
    if changed is None:
        if text is not None:
            files.notes.append(f"{owner}: no front matter status to change, or already {word}")
        return []
    if not files.write(owner, changed[0]):
        return []
    return [LineEdit(owner, *changed[1:])]


def _bmad(workspace: Workspace, story: Story, phase: str, status: str) -> StatusUpdate:
    files = _Files(workspace)
    if story.layout in ("v7", "bmad-spec"):
        # Their status lives in the plan or the story spec alone: no sprint-status.yaml.
        return files.update(story, phase, status, _front_matter(files, story, status))
    edits: list[LineEdit] = []
    rel = f"{workspace.config.paths_artifacts.rstrip('/')}/{SPRINT_STATUS_NAME}"
    # A plan with no sprint-status.yaml at all (BMAD v4: the story files are the plan) has
    # nothing there to update, and nothing to say about it.
    planless = not os.path.lexists(files.root / rel) and story.status_source.startswith(
        f"{story.path}:"
    )
    text = None if planless else files.text(rel)
    if text is not None:
        try:
            changed = set_sprint_status(text, story.key, status)
        except SprintStatusError as exc:
            changed = None
            files.notes.append(f"{rel}: {exc}; not updated")
        if changed is not None:
            if files.write(rel, changed[0]):
                edits.append(LineEdit(rel, *changed[1:]))
        elif not files.notes:
            files.notes.append(
                f"{rel}: no entry for story {story.id} to change, or already {status}"
            )
    if story.layout == "spec":
        edits.extend(_front_matter(files, story, status))
    elif story.path is None:
        files.notes.append(f"story {story.id} has no story file; no Status: line updated")
    else:
        text = files.text(story.path)
        changed = set_story_file_status(text, status) if text is not None else None
        if changed is not None:
            if files.write(story.path, changed[0]):
                edits.append(LineEdit(story.path, *changed[1:]))
        elif text is not None:
            files.notes.append(f"{story.path}: no Status: line to change, or already {status}")
    return files.update(story, phase, status, edits)


def _openspec(workspace: Workspace, story: Story, phase: str) -> StatusUpdate | None:
    if phase != "dev" or story.path is None:
        return None
    number = story.id.rsplit(":", 1)[-1]
    files = _Files(workspace)
    text = files.text(story.path)
    if text is None:
        return files.update(story, phase, None, [])
    new_text, ticked = tick_group_tasks(text, number)
    if not ticked:
        files.notes.append(f"{story.path}: the agent ticked every task of group {number} itself")
        return files.update(story, phase, None, [])
    if not files.write(story.path, new_text):
        return files.update(story, phase, None, [])
    edits = [LineEdit(story.path, line, before, after) for line, before, after in ticked]
    files.notes.append(
        f"{story.path}: ticked {len(ticked)} task(s) of group {number} the agent left open"
    )
    return files.update(story, phase, None, edits)


def write_back(
    workspace: Workspace,
    story: Story,
    phase: str,
    succeeded: bool,
    run_dir: Path | None = None,
) -> StatusUpdate | None:
    """Write the story's new status after ``phase`` succeeded, and record it in ``run_dir``.

    Args:
        workspace: the workspace (``[status] write_back`` switches this off).
        story: the story the phase worked on.
        phase: the phase that ended.
        succeeded: the phase's outcome was a success signal; nothing is written otherwise.
        run_dir: the run folder; ``status.json`` is written there when something was done.

    Returns:
        What was written and what was left, or None when nothing applies (switched off, a
        failure, a phase that changes no status).
    """
    if not succeeded or not workspace.config.status_write_back:
        return None
    if story.source == "openspec":
        update = _openspec(workspace, story, phase)
    else:
        status = STATUS_AFTER.get(phase)
        update = None if status is None else _bmad(workspace, story, phase, status)
    if update is not None and run_dir is not None:
        (run_dir / RECORD_NAME).write_text(
            json.dumps(update.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return update


def write_start(workspace: Workspace, story: Story, phase: str) -> StatusUpdate | None:
    """Mark a BMAD story ``in-progress`` as its dev phase starts (seed 002, BMAD's dev-story).

    The same minimal one-line edits as :func:`write_back`; the runner calls it after it has
    fingerprinted the tree, so the edit is the phase's own work and is staged with it. A
    story already ``done`` is left as it is (a dev run of it is warned about, not recorded as
    a step back).

    Returns:
        What was written, or None when nothing applies (switched off, OpenSpec, another
        phase, a done story).
    """
    status = STATUS_AT_START.get(phase)
    if (
        status is None
        or not workspace.config.status_write_back
        or story.source != "bmad"
        or story.status == "done"
    ):
        return None
    return _bmad(workspace, story, phase, status)
