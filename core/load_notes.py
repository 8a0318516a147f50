"""Loading notes, grouped: one line per kind with a count, the details on request.

Reading a real plan leaves many notes — keys past BMAD's grammar, statuses that drift
between a story file and ``sprint-status.yaml``, entries that could not be read, files
passed over. Printed one per line they bury what a command says; :func:`group_notes` sorts
them by kind (run warnings first), :func:`summary_lines` gives one line per kind, and the
details are ``promptdeck doctor``'s (the CLI) and the notes view's (``w`` in the app).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .stories import StoryCatalog

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
    found[UNATTACHED].extend(
        f"{path}: no story key; attach it in .promptdeck/config.toml" for path in catalog.unattached
    )
    found[OTHER].extend(catalog.warnings)
    return [NoteGroup(kind, tuple(lines)) for kind, lines in found.items() if lines]


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
