"""The workspace rules file (Layer-0B; seed 004, Req 2 and 4).

Read fresh at every compose from ``config.paths_rules`` (default ``.promptdeck/rules.md``;
``.ads/rules.md`` or ``AGENTS.md`` work too). Rules are not required: when the file is missing,
unreadable or not UTF-8 text, the prompt is still composed, Layer-0B is marked missing, and the
warning says why — never silently.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .textfiles import TextProblem, read_file_bytes
from .workspace import Workspace

DEFAULT_LIMIT_NAME = "read.max_bytes"

RULES_STATUSES = ("ok", "missing", "unreadable", "not-utf8", "outside-project", "too-large")


@dataclass(frozen=True)
class RulesFile:
    """The rules file as read for one compose.

    Attributes:
        path: the configured path (root-relative as configured, forward slashes).
        status: ``ok``, ``missing``, ``unreadable``, ``not-utf8``, ``outside-project`` or
            ``too-large``.
        text: the file's text ("" unless ``ok``).
        sha256: hex sha256 of the file's bytes, or None when it could not be read.
        mtime: modification time, or None when the file does not exist.
    """

    path: str
    status: str
    text: str
    sha256: str | None
    mtime: float | None

    @property
    def present(self) -> bool:
        """True when the rules were read and fill Layer-0B."""
        return self.status == "ok"

    @property
    def short_hash(self) -> str | None:
        """The first 8 hex digits of :attr:`sha256`, or None."""
        return self.sha256[:8] if self.sha256 else None

    @property
    def warning(self) -> str | None:
        """The visible warning when the rules are not in the prompt, else None."""
        if self.present:
            return None
        why = {
            "missing": "not found",
            "unreadable": "unreadable",
            "not-utf8": "not valid UTF-8 text",
            "outside-project": "outside the project root",
            "too-large": f"over the {DEFAULT_LIMIT_NAME} size limit",
        }[self.status]
        return f"workspace rules {self.path}: {why}; Layer-0B (workspace rules) is missing"


def read_rules(workspace: Workspace) -> RulesFile:
    """Read the workspace's rules file now (never cached, so an edit shows at once).

    The file goes through the guarded reader: a FIFO, a device, a file outside the project or
    one over ``read.max_bytes`` is never opened, and Layer-0B says why it is missing.
    """
    configured = workspace.config.paths_rules
    path = Path(configured)
    if not path.is_absolute():
        path = workspace.root / path
    shown = Path(configured).as_posix()
    try:
        mtime: float | None = path.stat().st_mtime
    except FileNotFoundError:
        return RulesFile(shown, "missing", "", None, None)
    except (OSError, RuntimeError, ValueError):
        return RulesFile(shown, "unreadable", "", None, None)
    data = read_file_bytes(path, workspace.root, limit=workspace.config.read_max_bytes)
    if isinstance(data, TextProblem):
        status = data.reason if data.reason in RULES_STATUSES else "unreadable"
        if data.detail == "is a folder":
            status = "missing"
        return RulesFile(shown, status, "", None, mtime)
    digest = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return RulesFile(shown, "not-utf8", "", digest, mtime)
    if "\x00" in text:
        return RulesFile(shown, "not-utf8", "", digest, mtime)
    return RulesFile(shown, "ok", text, digest, mtime)
