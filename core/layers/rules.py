"""The workspace rules file (Layer-0B; seed 004, Req 2 and 4).

Read fresh at every compose. The configured ``paths.rules`` wins; when none is configured,
the project's own agent rules are found in a documented order (:data:`RULES_CANDIDATES`): a
promptdeck file first, then the files other agent tools read (``AGENTS.md``, ``CLAUDE.md``,
``.github/copilot-instructions.md``, ``.cursor/rules/``, ``.cursorrules``). Rules are not
required: when no file is found, or it is unreadable or not UTF-8 text, the prompt is still
composed, Layer-0B is marked missing, and the warning says why and what was looked for —
never silently.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from pathlib import Path

from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, read_file_bytes, read_json_object
from ..project.workspace import Workspace

RULES_STATUSES = ("ok", "missing", "unreadable", "not-utf8", "outside-project", "too-large")
LEFT_OUT = "left-out"
"""The status of rules the user left out of the prompt (``--exclude-layer 0B``, ``R``)."""

RULES_CANDIDATES: tuple[str, ...] = (
    ".promptdeck/rules.md",
    "AGENTS.md",
    "CLAUDE.md",
    ".github/copilot-instructions.md",
    ".cursor/rules/",
    ".cursorrules",
)
"""Where the rules are looked for when ``paths.rules`` is empty, in this order; the first that
exists is used. ``.cursor/rules/`` stands for its first ``.mdc`` or ``.md`` file by name."""


@dataclass(frozen=True)
class RulesFile:
    """The rules file as read for one compose.

    Attributes:
        path: the configured path (root-relative as configured, forward slashes).
        status: ``ok``, ``missing``, ``unreadable``, ``not-utf8``, ``outside-project``,
            ``too-large``, or ``left-out`` (the user left Layer-0B out).
        text: the file's text ("" unless ``ok``).
        sha256: hex sha256 of the file's bytes, or None when it could not be read.
        mtime: modification time, or None when the file does not exist.
    """

    path: str
    status: str
    text: str
    sha256: str | None
    mtime: float | None
    looked_for: tuple[str, ...] = ()
    """The candidates searched when none was configured (empty when configured)."""

    @property
    def present(self) -> bool:
        """True when the rules were read and fill Layer-0B."""
        return self.status == "ok"

    @property
    def left_out(self) -> bool:
        """True when the user left the rules out of the prompt."""
        return self.status == LEFT_OUT

    def leave_out(self) -> RulesFile:
        """These rules, left out of the prompt by the user (the file's hash is kept)."""
        return dataclasses.replace(self, status=LEFT_OUT, text="")

    @property
    def short_hash(self) -> str | None:
        """The first 8 hex digits of :attr:`sha256`, or None."""
        return self.sha256[:8] if self.sha256 else None

    @property
    def warning(self) -> str | None:
        """The visible warning when the rules are not in the prompt, else None."""
        if self.present:
            return None
        if self.left_out:
            return (
                f"Layer-0B (workspace rules, {self.path}) is left out by your choice "
                "(--include-layer 0B, or R in the app, puts it back)"
            )
        why = {
            "missing": "not found",
            "unreadable": "unreadable",
            "not-utf8": "not valid UTF-8 text",
            "outside-project": "outside the project root",
            "too-large": "over the read.max_bytes size limit",
        }[self.status]
        if self.status == "missing" and self.looked_for:
            return (
                "no workspace rules file (looked for " + ", ".join(self.looked_for) + "); set "
                "[paths] rules in .promptdeck/config.toml to name one; Layer-0B (workspace "
                "rules) is missing"
            )
        return f"workspace rules {self.path}: {why}; Layer-0B (workspace rules) is missing"


def _cursor_rule(folder: Path) -> str | None:
    """The first ``.mdc`` / ``.md`` file of a ``.cursor/rules`` folder, by name."""
    try:
        names = sorted(
            entry.name
            for entry in folder.iterdir()
            if entry.suffix in (".mdc", ".md") and entry.is_file()
        )
    except OSError:
        return None
    return names[0] if names else None


def find_rules_path(workspace: Workspace) -> tuple[str, tuple[str, ...]]:
    """The rules file to read, root-relative (or as configured), and what was looked for.

    Returns:
        ``(path, looked_for)``: the configured path and ``()`` when ``paths.rules`` is set;
        otherwise the first existing candidate of :data:`RULES_CANDIDATES` (the first one
        when none exists) and the candidates.
    """
    configured = workspace.config.paths_rules
    if configured:
        return Path(configured).as_posix(), ()
    for candidate in RULES_CANDIDATES:
        path = workspace.root / candidate
        if candidate.endswith("/"):
            first = _cursor_rule(path) if path.is_dir() else None
            if first is not None:
                return candidate + first, RULES_CANDIDATES
        elif path.is_file():
            return candidate, RULES_CANDIDATES
    return RULES_CANDIDATES[0], RULES_CANDIDATES


def read_rules(workspace: Workspace) -> RulesFile:
    """Read the workspace's rules file now (never cached, so an edit shows at once)."""
    shown, looked_for = find_rules_path(workspace)
    path = Path(shown)
    if not path.is_absolute():
        path = workspace.root / path
    result = _read(workspace, path, shown)
    return dataclasses.replace(result, looked_for=looked_for) if looked_for else result


def _read(workspace: Workspace, path: Path, shown: str) -> RulesFile:
    # Through the guarded reader: a FIFO, a device, a file outside the project or one over
    # read.max_bytes is never opened, and Layer-0B says why it is missing.
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


RULES_HEALTH_FILE = "rules-health.json"
"""Under ``.promptdeck/runs/``: how many injections in a row found the rules unreadable."""


@dataclass(frozen=True)
class RulesHealth:
    """The rules file's record across injections (seed 004, alerting).

    Attributes:
        path: the configured rules path.
        status: the last read's status.
        consecutive: injections in a row whose read of the rules failed (0 after a good one).
        alert_after: the configured threshold (``session.rules_alert_after``; 0 never alerts).
    """

    path: str
    status: str
    consecutive: int
    alert_after: int

    @property
    def alert(self) -> bool:
        """True once the failures in a row reach the threshold: an error, not a warning."""
        return 0 < self.alert_after <= self.consecutive

    def message(self) -> str | None:
        """The error line when :attr:`alert`, else None."""
        if not self.alert:
            return None
        return (
            f"workspace rules {self.path} could not be read {self.consecutive} times in a row "
            f"(last: {self.status}): check the workspace"
        )


_HEALTH_LIMIT = 64 * 1024
_MOST_FAILURES = 1_000_000


def _health_path(workspace: Workspace) -> Path:
    return workspace.root / ".promptdeck" / "runs" / RULES_HEALTH_FILE


def rules_health(workspace: Workspace) -> RulesHealth:
    """The recorded health (no failure recorded: 0 in a row)."""
    alert_after = workspace.config.session_rules_alert_after
    # Through the guarded reader: the record lies in the repository, which may have put a
    # FIFO or a link to /dev/zero in its place.
    data = read_json_object(_health_path(workspace), workspace.root.resolve(), limit=_HEALTH_LIMIT)
    try:
        if isinstance(data, TextProblem):
            raise ValueError(str(data))
        consecutive = min(int(data.get("consecutive", 0)), _MOST_FAILURES)
        status = str(data.get("status", "ok"))
    except (ValueError, TypeError, OverflowError):
        consecutive, status = 0, "ok"
    return RulesHealth(workspace.config.paths_rules, status, max(0, consecutive), alert_after)


def note_rules_read(workspace: Workspace, rules: RulesFile) -> RulesHealth:
    """Count one injection's read of the rules: a failure adds one, a good read resets.

    Any status but ``ok`` is a failure (a missing file too: the configured rules are not in
    the prompt). The count is kept in ``.promptdeck/runs/rules-health.json``; a record that
    cannot be written leaves the count where it was rather than failing the run.
    """

    before = rules_health(workspace)
    if rules.left_out:
        # Left out by choice: not a failed read, and no reason to reset the count either.
        return before
    consecutive = 0 if rules.present else before.consecutive + 1
    health = RulesHealth(rules.path, rules.status, consecutive, before.alert_after)
    path = _health_path(workspace)
    # A count that cannot be written (a read-only project) is left as it was: the alert is
    # advice, never a reason to fail the run.
    from ..errors import UsageError
    from ..project.rewrites import RewriteRefused, replace_record  # a run writes it, not a view
    from ..project.state_folder import state_dir

    with contextlib.suppress(OSError, RewriteRefused, UsageError):
        # `.promptdeck/runs` is a real folder, never a link to where a commit would take it.
        state_dir(workspace.root, path.parent)
        record = {"path": rules.path, "status": rules.status, "consecutive": consecutive}
        replace_record(path, workspace.root.resolve(), (json.dumps(record) + "\n").encode())
    return health
