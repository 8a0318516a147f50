"""The Codex profile that carries the system prompt, and what could silently override it.

The run's ``system.md`` goes into ``<run>/codex-profile.toml`` as ``developer_instructions``
(one exact TOML string); ``$CODEX_HOME/promptdeck-<pid>-<run>.config.toml`` links to it while
the process runs (:func:`linked_profile`), and links left by a promptdeck that no longer runs
are swept. A project's ``.codex/config.toml`` setting the instructions would win over the
profile: :func:`project_overrides` finds such files and whether Codex trusts them.

Files the phase may not write go into the same profile as a *permission profile*
(:func:`guard_text`): ``default_permissions = "promptdeck"``, extending Codex's ``:workspace``
(the workspace writable, ``.git`` read-only, as ``-s workspace-write``) with each protected file
``read`` under ``:project_roots``. Measured with codex-cli 0.171: its sandbox then mounts each
such file read-only for shell commands (``sed -i`` and ``>`` fail), and its ``apply_patch``
tool refuses to update or to create it ("patch rejected: writing outside of the project"); a
missing file cannot be created. Permission profiles give way to ``--sandbox``,
so a launch with the guard passes no ``-s``.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath

from ..lean_dataclass import dataclass
from ..processes import pid_alive
from ..project.plan_location import SPRINT_STATUS_NAMES
from ..project.textfiles import TextProblem, read_text
from ..terminal import printable_line

CODEX_CONFIG_LIMIT = 1024 * 1024
"""Largest Codex ``config.toml`` read (a real one is a few KiB)."""

PROFILE_FILE = "codex-profile.toml"
"""The profile promptdeck writes into the run folder."""
PROFILE_PREFIX = "promptdeck-"
_PROFILE_LINK = re.compile(r"^promptdeck-(\d+)-[A-Za-z0-9_-]+\.config\.toml$")
OVERRIDING_KEYS = ("developer_instructions", "instructions", "model_instructions_file")
"""Settings of a project's ``.codex/config.toml`` that change what the model is told."""


def codex_home(environ: Mapping[str, str] | None = None) -> Path:
    """Codex's home: ``CODEX_HOME``, else ``~/.codex``."""
    env = os.environ if environ is None else environ
    raw = env.get("CODEX_HOME")
    if raw:
        return Path(raw)
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".codex"


def toml_string(text: str) -> str:
    """``text`` as a one-line TOML basic string that parses back to exactly ``text``.

    Raises:
        ValueError: the text cannot round-trip (never expected; checked rather than assumed).
    """
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    out.append('"')
    quoted = "".join(out)
    if tomllib.loads(f"v = {quoted}")["v"] != text:
        raise ValueError("the system prompt does not round-trip through a TOML string")
    return quoted


def profile_text(system: str) -> str:
    """The profile file: a comment and ``developer_instructions`` holding ``system`` exactly."""
    return (
        "# Written by promptdeck for one run: the run's system.md as Codex developer "
        "instructions.\n"
        f"developer_instructions = {toml_string(system)}\n"
    )


PERMISSIONS_NAME = "promptdeck"
"""The permission profile the guard defines and selects."""
MOST_GUARDED_PATHS = 200
"""The most protected files one run's sandbox mounts read-only. Each is one more mount, and
one more argument, for every command Codex runs: measured with codex-cli 0.171 on Linux, 400
files made a run of two tool calls 4 s slower, and 2,000 overflowed the sandbox's argument list
so that no command could start at all. The sprint status comes first; the rest are left to the
check after the phase, with one warning."""
_GLOB = re.compile(r"[*?\[\]{}]")
"""Characters that make a permission entry a glob pattern rather than one path."""


def _guardable(root: Path, path: str) -> str | None:
    """``path`` as a ``:project_roots`` entry naming exactly that file, or None.

    None for what is not a plain root-relative path, for a name Codex would read as a glob,
    and for a file whose folder does not exist: the sandbox would mask the first missing folder
    of the path, so the agent could not create that folder at all.
    """
    pure = PurePosixPath(path)
    if (
        not path
        or pure.is_absolute()
        or ".." in pure.parts
        or pure.parts in ((), (".",))
        or _GLOB.search(path)
        or any(ord(char) < 0x20 or ord(char) == 0x7F for char in path)
    ):
        return None
    folder = root  # the workspace itself may be reached through a link; its folders not
    try:
        for part in pure.parent.parts:
            folder = folder / part
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
    except OSError:
        return None
    return pure.as_posix()


def guard_text(root: Path, protected: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The profile's permission part that makes ``protected`` (root-relative files) read-only
    for Codex, and the paths it cannot name (left to the check after the phase); empty text
    when it names none."""
    entries: list[str] = []
    left_out: list[str] = []
    # The sprint status first: when the guard cannot hold every file, it holds that one.
    ordered = sorted(
        dict.fromkeys(protected),
        key=lambda path: PurePosixPath(path).name not in SPRINT_STATUS_NAMES,
    )
    for raw in ordered:
        entry = None if len(entries) >= MOST_GUARDED_PATHS else _guardable(root, raw)
        if entry is None:
            left_out.append(raw)
        else:
            entries.append(entry)
    if not entries:
        return "", tuple(left_out)
    lines = [
        "# The files this phase may not write: read-only for Codex's sandbox and its patch tool.",
        f"default_permissions = {toml_string(PERMISSIONS_NAME)}",
        "",
        f"[permissions.{PERMISSIONS_NAME}]",
        'extends = ":workspace"',
        "",
        f'[permissions.{PERMISSIONS_NAME}.filesystem.":project_roots"]',
        *(f'{toml_string(entry)} = "read"' for entry in dict.fromkeys(entries)),
    ]
    return "\n".join(lines) + "\n", tuple(left_out)


@dataclass(frozen=True)
class ProjectOverride:
    """A project ``.codex/config.toml`` that changes the instructions Codex sends.

    Attributes:
        path: the file.
        keys: the overriding settings it holds.
        trusted: Codex trusts the project, so the file is in force.
        problem: why promptdeck could not read the file (a FIFO, a device, a link out of the
            project, too large), so what it sets is unknown; None when it was read.
    """

    path: Path
    keys: tuple[str, ...]
    trusted: bool
    problem: str | None = None

    def message(self) -> str:
        """The refusal or the warning, in one line."""
        if self.problem is not None:
            shown = printable_line(str(self.path))
            if self.trusted:
                return (
                    f"{shown}: {self.problem}; promptdeck cannot tell whether it replaces the "
                    "system prompt in a project Codex trusts; fix or remove it to run with "
                    "--agent codex"
                )
            return f"{shown}: {self.problem}; not read (Codex ignores it while untrusted)"
        keys = ", ".join(self.keys)
        if self.trusted:
            return (
                f"{self.path} sets {keys} in a project Codex trusts: it would silently replace "
                "promptdeck's system prompt; remove the setting (or the project's trust in "
                "$CODEX_HOME/config.toml) to run with --agent codex"
            )
        return (
            f"{self.path} sets {keys}; Codex ignores it while the project is not trusted, but "
            "trusting the project would silently replace promptdeck's system prompt"
        )


def _git_top(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _trusted_folders(home: Path) -> list[Path]:
    # The user's own file, but still read bounded: a link to a device must not hang a run.
    text = read_text(home / "config.toml", None, limit=CODEX_CONFIG_LIMIT)
    if isinstance(text, TextProblem):
        return []
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return []
    projects = data.get("projects")
    if not isinstance(projects, dict):
        return []
    return [
        Path(name)
        for name, entry in projects.items()
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted"
    ]


def project_overrides(root: Path, home: Path) -> list[ProjectOverride]:
    """Project ``.codex/config.toml`` files that would override the profile's instructions.

    Codex reads ``.codex/config.toml`` from the working folder up to the project's git root, and
    only in folders it trusts. This errs on the safe side: a file counts as trusted when its
    folder or any folder above it is trusted in ``$CODEX_HOME/config.toml``.
    """
    root = root.resolve()
    top = _git_top(root) or root
    folders = [root, *[p for p in root.parents if p.is_relative_to(top)]]
    trusted = [p.resolve() if p.exists() else p for p in _trusted_folders(home)]
    found: list[ProjectOverride] = []
    for folder in folders:
        path = folder / ".codex" / "config.toml"
        is_trusted = any(folder == t or folder.is_relative_to(t) for t in trusted)
        # A file of the repository: through the guarded reader, bounded, inside its folder.
        text = read_text(path, folder, limit=CODEX_CONFIG_LIMIT)
        if isinstance(text, TextProblem):
            if text.reason not in ("missing", "empty"):
                found.append(ProjectOverride(path, (), is_trusted, str(text)))
            continue
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError):
            continue
        keys = tuple(key for key in OVERRIDING_KEYS if key in data)
        if keys:
            found.append(ProjectOverride(path, keys, is_trusted))
    return found


def sweep_stale_profiles(home: Path) -> list[Path]:
    """Remove profile links left by a promptdeck that no longer runs; returns them.

    Only symlinks named like ours are touched, never a regular file.
    """
    removed: list[Path] = []
    try:
        entries = list(home.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _PROFILE_LINK.match(entry.name)
        if match is None or not entry.is_symlink():
            continue
        if pid_alive(int(match.group(1))) and entry.exists():
            continue
        with contextlib.suppress(FileNotFoundError):
            entry.unlink()
            removed.append(entry)
    return removed


def profile_name(run_id: str, pid: int | None = None) -> str:
    """The ``-p`` name of a run's profile: ``promptdeck-<pid>-<run id>``."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", run_id)  # -p takes a plain name: no dots
    return f"{PROFILE_PREFIX}{os.getpid() if pid is None else pid}-{safe}"


@contextlib.contextmanager
def linked_profile(home: Path, name: str, target: Path) -> Iterator[Path]:
    """``$CODEX_HOME/<name>.config.toml`` → ``target`` while the block runs, then removed.

    Raises:
        OSError: the link cannot be made (an existing file of that name is never replaced).
    """
    sweep_stale_profiles(home)
    home.mkdir(parents=True, exist_ok=True)
    link = home / f"{name}.config.toml"
    os.symlink(target, link)  # FileExistsError rather than replacing anything
    try:
        yield link
    finally:
        with contextlib.suppress(FileNotFoundError):
            if link.is_symlink():
                link.unlink()
