"""What an injection is: its vocabulary, its data model and its ``<file_injections>`` XML.

The statuses a candidate file ends in, the user's :class:`Selection`, each file's
:class:`InjectedFile` row and the built :class:`Injection`; and the envelope they are written
in (seed 000 AC5). Building one is :mod:`.builder`'s job; finding and reading the candidate
files is :mod:`.candidates`'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field
from typing import TYPE_CHECKING, Any, Final

from ..errors import InjectionTooLarge
from ..lean_dataclass import dataclass
from ..tokens.counter import Meter
from ..units import SENT_LABEL, UNREAD_LABEL
from ..vocabulary import COMPANION_KINDS, FileStatus, InjectionLevel

if TYPE_CHECKING:  # findings come made (unpickled, their module imported then): no scanner here
    from ..secrets.scan import SecretFinding

Emit = Callable[[str, dict[str, Any]], None]

RULE = "DO NOT read these files - content already provided"
OPEN_TAG = f'<file_injections rule="{RULE}">'
CLOSE_TAG = "</file_injections>"
ENVELOPE_BREAKERS = ("</file>", "</file_injections>")

LISTED_COMPANIONS = tuple(kind for kind in COMPANION_KINDS if kind != "context")
"""Companion kinds of a story file (a retrospective, a report, a validation, a review, a
change proposal) that are shown as rows of their own category but not sent unless the user
takes them in: they are about the story, not what the agent needs to build it."""

# AC9: the order of the groups in the injection. What every story of a project shares (the
# project context, a v4 project's always-load files) comes first, so the prompt's prefix stays
# the same from story to story; then the story, what it asks to load, and the rest.
CATEGORIES = (
    "project-context",
    "always-load",
    "story",
    "context",
    "discovery",
    "tech-spec",
    *LISTED_COMPANIONS,
    "additional",
)

INCLUDED: Final = "included"
DUPLICATE: Final = "duplicate"
EXCLUDED: Final = "excluded"
MISSING: Final = "missing"
UNREADABLE: Final = "unreadable"
NOT_UTF8: Final = "not-utf8"
OUTSIDE: Final = "outside-project"
TOO_LARGE: Final = "too-large"
SKIPPED_STATUSES: tuple[FileStatus, ...] = (MISSING, UNREADABLE, NOT_UTF8, OUTSIDE, TOO_LARGE)

WHY_OWN_KEY: Final = "own key"
WHY_HEADING: Final = "heading"
WHY_PATTERN: Final = "category pattern"
WHY_CONTEXT: Final = "project context"
WHY_CHANGE: Final = "change file"
WHY_ADDED: Final = "added by hand"
WHY_CONTEXT_LIST: Final = "context: list"
WHY_SPEC: Final = "spec"
WHY_EPIC_CONTEXT: Final = "epic context"
WHY_PLAN: Final = "plan entry"
WHY_DERIVED: Final = "config text"
WHY_SECOND_CLAIM: Final = "second claim"
WHY_ALWAYS_LOAD: Final = "always load"
WHY_COMPANION: Final = "companion"
WHY_EPIC_TECH_SPEC: Final = "epic tech spec"
WHY = (
    WHY_OWN_KEY,
    WHY_HEADING,
    WHY_PATTERN,
    WHY_CONTEXT,
    WHY_CHANGE,
    WHY_ADDED,
    WHY_CONTEXT_LIST,
    WHY_SPEC,
    WHY_EPIC_CONTEXT,
    WHY_PLAN,
    WHY_DERIVED,
    WHY_SECOND_CLAIM,
    WHY_ALWAYS_LOAD,
    WHY_COMPANION,
    WHY_EPIC_TECH_SPEC,
)
"""Why a file is a candidate of a story's injection: its name starts with the story's key
(``own key``); it is the story file its ``# Story`` heading names (``heading``); its name
holds the key in one of seed 000's patterns, or its words make it a discovery note or a
tech-spec (``category pattern``); the project context; a document of the OpenSpec change
(``change file``); the user added it; a spec's ``context:`` list asks for it; it claims the
story too but another file is the story's own (``second claim``: listed, left out); a v4
project's ``devLoadAlwaysFiles`` names it (``always load``); it is a companion of the story
file (``companion``: its context, retrospective, report, validation, review or proposal);
it is the tech spec of the story's epic (``epic tech spec``)."""

PLAN_CONTEXT_WHYS = (WHY_CONTEXT_LIST, WHY_EPIC_CONTEXT)
"""Rows of the ``story`` category that are not the story's own file but files its plan asks
the agent to load: each can be left out (``--leave-out``, ``--exclude``, the app's space), so
the fit may propose it."""


SECRET_LIKE_REASON: Final = "a dotfile / secrets file: never injected unless taken in by hand"
"""Why a file a plan names (a ``context:`` entry, an always-load file, a companion) is listed
but not sent (:func:`is_secret_like`)."""


def is_secret_like(path: str) -> bool:
    """Whether ``path`` is a dotfile, lies in a dot folder (``.git/config``, ``.ssh/…``) or is
    named like an environment file (``.env``, ``prod.env``).

    The key scan never takes such a name in (hidden names and non-document extensions are
    no candidates); a file a plan names by path follows the same rule: it is listed, out,
    until the user takes it in by hand.
    """
    parts = path.replace("\\", "/").split("/")
    name = parts[-1].lower()
    return name.endswith(".env") or any(
        part.startswith(".") and part not in (".", "..") for part in parts
    )


def is_own_story_file(category: str, why: str) -> bool:
    """Whether a row of ``category`` there for ``why`` is the story's own file, which stays in
    whatever the user leaves out: a ``story`` row its plan asks for (a ``context:`` file, the
    epic's context) is not."""
    return category == "story" and why not in PLAN_CONTEXT_WHYS


def largest_first(
    sized: Iterable[tuple[str, int]], count: int | None = None
) -> list[tuple[str, int]]:
    """``(path, bytes)`` pairs ranked largest first, ties by path; the first ``count`` (all
    when None). The one ranking of "the largest files" every size message shows."""
    return sorted(sized, key=lambda item: (-item[1], item[0]))[:count]


def too_large(
    size_bytes: int, error_bytes: int, command_name: str, sized: Iterable[tuple[str, int]]
) -> InjectionTooLarge:
    """The one refusal of an injection over its error line (exit 3): its size, the limit, the
    command it is for and its ``(path, bytes)`` files, largest first. The caller raises it."""
    return InjectionTooLarge(size_bytes, error_bytes, command_name, largest_first(sized))


@dataclass(frozen=True)
class Selection:
    """What the user includes beyond the story's own files: the app's toggles, the CLI's flags."""

    project_context: bool = True
    discovery: bool = False
    tech_spec: bool = False
    additional_files: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    """Root-relative paths of files the user left out of this prompt (a spec's ``context:``
    files, say): each stays listed, excluded, with its size."""
    excluded: tuple[str, ...] = ()
    """Root-relative files left out by hand (:mod:`.file_choice`); never the story's own."""
    included: tuple[str, ...] = ()
    """Root-relative files taken in by hand although no toggle includes them."""
    left_out_layers: tuple[str, ...] = ()
    """Optional layers the user left out (``Layer-0B``, the workspace rules; the other layers
    are required and never left out)."""
    put_back_layers: tuple[str, ...] = ()
    """Optional layers the user put back (undoes a remembered leave-out)."""


@dataclass(frozen=True)
class InjectedFile:
    """One candidate file and what became of it.

    Attributes:
        path: root-relative with forward slashes; as given when it lies outside the project.
        category: one of :data:`CATEGORIES`: ``always-load`` for a v4 project's
            ``devLoadAlwaysFiles``, ``context`` for a story's context companion, a companion
            kind (:data:`LISTED_COMPANIONS`) for the other companions.
        status: ``included``, ``duplicate``, ``excluded``, ``missing``, ``unreadable``,
            ``not-utf8``, ``outside-project`` or ``too-large``.
        bytes: size on disk (0 when missing or outside the project).
        tokens: tokens of the content alone; None when not read or not counted.
        reason: why it matched, or why it is not included.
        flags: ``breaks-envelope`` when the content holds a closing tag of the envelope;
            ``secrets`` when the secret scan found likely credentials.
        secrets: the likely credentials found in the content (file, line, kind).
        why: why the file is a candidate at all, one of :data:`WHY` (``own key``,
            ``heading``, ``category pattern``, ``project context``, ``change file``,
            ``added by hand``, ``context: list``, ``spec``, ``epic context``, ``plan entry``,
            ``config text``, ``second claim``, ``always load``, ``companion``,
            ``epic tech spec``).
    """

    path: str
    category: str
    status: FileStatus
    bytes: int
    tokens: int | None
    reason: str
    flags: tuple[str, ...] = ()
    secrets: tuple[SecretFinding, ...] = ()
    why: str = ""

    @property
    def own_story_file(self) -> bool:
        """Whether this row is the story's own file, which stays in
        (:func:`is_own_story_file`)."""
        return is_own_story_file(self.category, self.why)

    @property
    def included(self) -> bool:
        """True when the file's content is in the injection."""
        return self.status == INCLUDED

    @property
    def bytes_label(self) -> str | None:
        """What :attr:`bytes` counts: ``sent to the agent`` (its text is in the prompt), ``on
        disk, not read`` (a file measured but not sent), None when there is nothing."""
        if self.included:
            return SENT_LABEL
        return UNREAD_LABEL if self.bytes else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of one ``inspect --json`` file row."""
        return {
            "path": self.path,
            "category": self.category,
            "status": self.status,
            "bytes": self.bytes,
            "bytes_label": self.bytes_label,
            "tokens": self.tokens,
            "reason": self.reason,
            "why": self.why,
            "flags": list(self.flags),
            "secrets": [{"line": f.line, "kind": f.kind} for f in self.secrets],
        }


@dataclass(frozen=True)
class Injection:
    """The built injection: every candidate file, the exact XML, and its meters.

    ``total`` measures ``text``; ``envelope`` is the exact remainder once the included files'
    own rows are taken away (tags, paths, newlines), so the rows add up to the total in bytes
    and in tokens. ``size_bytes`` is what the thresholds compare: the text plus the on-disk
    size of any file too large to read.
    """

    command_name: str
    story_keys: tuple[str, ...]
    files: tuple[InjectedFile, ...]
    text: str
    total: Meter
    envelope: Meter
    level: InjectionLevel
    size_bytes: int
    warn_bytes: int
    error_bytes: int
    encoding: str
    warnings: tuple[str, ...] = field(default=())

    def toggle_note(self, category: str) -> str:
        """``no discovery files for this story`` when no candidate of ``category`` exists
        (its toggle then changes nothing), else ""."""
        if any(f.category == category for f in self.files):
            return ""
        return f"no {category} files for this story"

    def included(self) -> tuple[InjectedFile, ...]:
        """The files whose content is in the injection, in order."""
        return tuple(f for f in self.files if f.included)

    @property
    def secrets(self) -> tuple[SecretFinding, ...]:
        """Every likely credential in the included files, in file order."""
        return tuple(finding for f in self.files if f.included for finding in f.secrets)

    def largest(self, count: int | None = 3) -> list[tuple[str, int]]:
        """The ``count`` largest files that make up the size (all when None), largest first."""
        sized = [(f.path, f.bytes) for f in self.files if f.status in (INCLUDED, TOO_LARGE)]
        return largest_first(sized, count)

    @property
    def unread_bytes(self) -> int:
        """The size on disk of the files too large to read: in :attr:`size_bytes`, never sent."""
        return sum(f.bytes for f in self.files if f.status == TOO_LARGE)

    def too_large(self) -> InjectionTooLarge:
        """This injection's refusal over its error line (:func:`too_large`)."""
        sized = [(f.path, f.bytes) for f in self.files if f.status in (INCLUDED, TOO_LARGE)]
        return too_large(self.size_bytes, self.error_bytes, self.command_name, sized)

    def toggle_notes(self) -> dict[str, str]:
        """What the discovery and tech-spec toggles would change, by category: ``no
        discovery files for this story`` when it has no candidate of the kind, else ``""``."""
        present = {f.category for f in self.files}
        return {
            category: "" if category in present else f"no {category} files for this story"
            for category in ("discovery", "tech-spec")
        }

    def to_dict(self) -> dict[str, Any]:
        """The injection part of ``inspect --json``."""
        return {
            "files": [f.to_dict() for f in self.files],
            "toggles": self.toggle_notes(),
            "total": self.total.to_dict(),
            "envelope": self.envelope.to_dict(),
            "level": self.level,
            "size_bytes": self.size_bytes,
            "warn_bytes": self.warn_bytes,
            "error_bytes": self.error_bytes,
            "encoding": self.encoding,
            "warnings": list(self.warnings),
            "secrets": [f.to_dict() for f in self.secrets],
        }


def _escape_attr(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


def render_envelope(files: Iterable[tuple[str, str]]) -> str:
    """The exact ``<file_injections>`` XML for ``(path, content)`` pairs (seed 000 AC5).

    Content is not escaped (a documented decision of the seed); the path attribute is.
    """
    return "".join(envelope_pieces(files))


def envelope_pieces(files: Iterable[tuple[str, str]]) -> list[str]:
    """The envelope as pieces that concatenate to it: each file's content is a piece of its
    own, so its count is shared with the whole's (see ``TokenCounter.count_joined``)."""
    pieces: list[str] = []
    glue = OPEN_TAG
    for path, content in files:
        pieces.append(f'{glue}\n  <file path="{_escape_attr(path)}">\n')
        pieces.append(content)
        glue = "\n  </file>"
    pieces.append(f"{glue}\n{CLOSE_TAG}")
    return pieces
