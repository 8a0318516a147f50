"""Which settings of a project's own config a run may act on without the user's word.

Reading a cloned repository executes nothing of it, but a run starts a program, and
``.promptdeck/config.toml`` — a file of the repository, written by whoever wrote the
repository — can name that program (``[agent] claude_bin``, ``codex_bin``, ``command_argv``)
or its arguments (``claude_args``, ``codex_args``, ``codex_sandbox``: the flags that set what
the agent may do without asking). A run whose agent would act on such a setting starts only
once the user has trusted that version of the file: ``promptdeck trust``, or the second Start
of the app's confirmation, records for the project a digest of the file's text and of every
project file its program settings name (a script in ``command_argv``, a ``claude_bin`` of
``tools/claude``) in ``$XDG_CONFIG_HOME/promptdeck/trusted.json`` — the user's own folder,
which no repository writes. A changed file, or a changed script, needs trusting again. What
is shown to be trusted is every program setting of the file, for every agent, in full.
Settings at their defaults, a binary named by the user's own environment variable and the
replay simulation need nothing.

A named script is trusted with what it could load from beside it (:func:`script_companions`):
a Python script with every module file under its folder (the folder Python puts first on
``sys.path``), any other script with the files of its own kind there. A pulled change to a
helper the script imports needs trusting again, like a change to the script. The digest also
covers the project's own client settings (:data:`CLIENT_SETTINGS_FILES`): capture starts the
real client with them only in a project the user trusted as it is now
(:func:`client_settings_trusted`).

The store is read, changed and written under an exclusive ``flock`` of a lock file beside it
and replaced whole (a temporary file renamed over it): ``promptdeck trust`` in several projects
at once keeps every entry.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..agent_names import CLAUDE_BIN_ENV, CODEX_BIN_ENV
from ..atomic import write_whole
from ..errors import UntrustedConfig, UsageError
from ..lean_dataclass import dataclass
from ..terminal import printable_line
from .config import CONFIG_RELPATH, Config
from .user_dirs import config_folder
from .workspace import Workspace

TRUST_FILENAME = "trusted.json"
_FORMAT = 1
CLIENT_SETTINGS_FILES = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".codex/config.toml",
    ".codex/hooks.json",
)
"""The project's own settings files of the clients capture starts: their hooks, helpers and
servers run programs, so capture switches them off unless the project is trusted."""
MOST_COMPANIONS = 2_000
"""The most files beside a named script its trust covers; beyond, trust is refused."""
MOST_COMPANION_BYTES = 64 * 1024 * 1024
"""The most bytes those files may hold together."""
_PYTHON_MODULES = (".py", ".pyw", ".pyc", ".pyd", ".so")
"""What Python imports from the script's folder: sources, compiled modules, extensions."""
_SCRIPT_SUFFIXES = frozenset(
    {".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".pm", ".lua", ".php"}
)
"""Scripts of other languages: their companions are the files of their own suffix."""
_NEVER_BESIDE = frozenset({".git", "node_modules", ".venv", "runs", "locks"})
"""Folders never taken for a script's companions: git's own, installed packages, and
promptdeck's run records and locks (rewritten by every run)."""

# For each agent, the settings that choose its program or its powers, and the environment
# variable (the user's own) that overrides the binary when set.
_PROGRAM_SETTINGS: dict[str, tuple[str, ...]] = {
    "claude": ("agent_claude_bin", "agent_claude_args", "agent_claude_model"),
    "codex": ("agent_codex_bin", "agent_codex_args", "agent_codex_sandbox"),
    "command": ("agent_command_argv",),
    "replay": (),
}
_SCOPE_SETTINGS = ("scope_allow",)
"""Settings that widen what any agent may write in the plan (``[scope] allow``): trusted like
a program setting, for every agent; they name globs, never a file that runs."""
_BIN_ENV = {"agent_claude_bin": CLAUDE_BIN_ENV, "agent_codex_bin": CODEX_BIN_ENV}
_DEFAULTS = Config()


def trust_store_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/promptdeck/trusted.json``, default ``~/.config/promptdeck/``."""
    return config_folder(environ) / TRUST_FILENAME


@dataclass(frozen=True)
class ConfigTrust:
    """What a project's config chooses for a run of one agent, and whether the user said yes.

    Attributes:
        settings: what trusting would cover, when a run needs it: ``key = value`` for every
            program setting the file sets away from its default (any agent's, in full, made
            printable), then the project files they name; empty when no trust is needed.
        trusted: the user has trusted this version of the file for this project.
        where: the config file, as shown in messages.
    """

    settings: tuple[str, ...]
    trusted: bool
    where: str = CONFIG_RELPATH

    @property
    def needed(self) -> bool:
        """True when a run must not start before the user trusts the file."""
        return bool(self.settings) and not self.trusted


def _set_away_from_default(
    config: Config, agent: str | None, *, effective: bool
) -> list[tuple[str, Any]]:
    """(field name, value) of the program settings ``config`` sets away from their defaults,
    for ``agent`` (every agent when None); ``effective`` leaves out a binary the user's own
    variable overrides now."""
    if config.source is None:
        return []
    names = (
        _PROGRAM_SETTINGS.get(agent, ())
        if agent is not None
        else tuple(name for names in _PROGRAM_SETTINGS.values() for name in names)
    ) + _SCOPE_SETTINGS
    found: list[tuple[str, Any]] = []
    for name in names:
        value = getattr(config, name)
        if value == getattr(_DEFAULTS, name):
            continue
        if effective and name in _BIN_ENV and os.environ.get(_BIN_ENV[name]):
            continue  # the user's own variable names the binary: the file's is not used now
        found.append((name, value))
    return found


def program_settings(
    config: Config, agent: str | None = None, *, effective: bool = False
) -> tuple[str, ...]:
    """The settings of ``config`` away from their defaults that choose what a run of
    ``agent`` starts (of any agent when None), as whole ``key = value`` lines made printable
    (never shortened: what is trusted is shown in full); none for a config that is not a file.

    ``effective``: only those a run would act on now (a binary named by the user's own
    ``PROMPTDECK_*_BIN`` is not); what is shown to be trusted is never ``effective``, so a
    later shell without the variable cannot use a binary the user was not shown.
    """
    shown: list[str] = []
    for name, value in _set_away_from_default(config, agent, effective=effective):
        text = json.dumps(list(value) if isinstance(value, tuple) else value, ensure_ascii=False)
        shown.append(f"{name.replace('_', '.', 1)} = {printable_line(text)}")
    return tuple(shown)


_MODULE_FLAG = re.compile(r"^-m(?P<module>[A-Za-z_][\w.]*)?$")
_MOST_TREE_FILES = 10_000
"""The most files of a named folder the digest reads; a larger tree is recorded as such."""


def _named_words(value: Any) -> list[str]:
    """The words of a setting that may name something that runs: each argument, and the
    top-level package of a ``-m pkg`` module (Python imports it from the folder it runs in,
    the project root)."""
    words = [w for w in (value if isinstance(value, tuple) else (value,)) if isinstance(w, str)]
    named: list[str] = []
    for index, word in enumerate(words):
        if not word or "\0" in word:
            continue
        match = _MODULE_FLAG.match(word)
        if match is not None:
            module = match.group("module") or (words[index + 1] if index + 1 < len(words) else "")
            top = module.split(".", 1)[0]
            if top.isidentifier():
                named += [top, f"{top}.py"]
            continue
        named.append(word)
    return named


def program_files(workspace: Workspace) -> tuple[str, ...]:
    """The files and folders of the project that the config's program settings name (a
    ``claude_bin`` of ``tools/claude``, a ``command_argv`` running ``.promptdeck/agent.py``, a
    folder ``tools/agent`` given to ``python3``, the package of ``python -m pkg``): their
    content is trusted along with the file, so a changed script — or any changed file of a
    named folder or package — needs trusting again. Project-relative paths, sorted; a folder
    ends with ``/``."""
    root = workspace.root.resolve()
    named: set[str] = set()
    for name, value in _set_away_from_default(workspace.config, None, effective=False):
        if name in _SCOPE_SETTINGS:
            continue
        for word in _named_words(value):
            path = Path(word)
            try:
                real = (path if path.is_absolute() else root / path).resolve()
                if not real.is_relative_to(root) or real == root:
                    continue
                mode = real.stat().st_mode
            except (OSError, ValueError, RuntimeError):
                continue
            rel = real.relative_to(root).as_posix()
            if stat.S_ISREG(mode):
                named.add(rel)
            elif stat.S_ISDIR(mode):
                named.add(rel + "/")
    return tuple(sorted(named))


def _file_sha256(path: Path) -> str:
    """The SHA-256 of a regular file, read in chunks (bounded memory whatever its size), never
    through a link and never blocking on a FIFO put in its place."""
    digest = hashlib.sha256()
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return "not-a-file"
        while chunk := os.read(descriptor, 1 << 20):
            digest.update(chunk)
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    finally:
        os.close(descriptor)
    return digest.hexdigest()


def _tree_sha256(folder: Path) -> str:
    """One digest over every file of ``folder`` (names and contents, links not followed)."""
    digest = hashlib.sha256()
    count = 0
    for current, folders, names in os.walk(folder):
        folders.sort()
        for name in sorted(names):
            count += 1
            if count > _MOST_TREE_FILES:
                return f"over-{_MOST_TREE_FILES}-files:{digest.hexdigest()}"
            path = Path(current) / name
            rel = path.relative_to(folder).as_posix()
            try:
                is_link = path.is_symlink()
            except OSError:
                is_link = False
            content = f"link:{os.readlink(path)}" if is_link else _file_sha256(path)
            digest.update(f"\0{rel}\0{content}".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


class TooManyCompanions(UsageError):
    """A named script has more files beside it than its trust can cover."""


def _is_python(path: Path, python: bool) -> bool:
    """A Python script: run by a named interpreter, named ``.py``, or a ``#!…python`` file."""
    if python or path.suffix in (".py", ".pyw"):
        return True
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return False
    try:
        first = os.read(descriptor, 128) if stat.S_ISREG(os.fstat(descriptor).st_mode) else b""
    except OSError:
        first = b""
    finally:
        os.close(descriptor)
    return first.startswith(b"#!") and b"python" in first.split(b"\n", 1)[0]


def _unchecked_pyc(path: Path) -> bool:
    """A ``__pycache__`` file Python would import without checking it against its source
    (an unchecked hash-based ``.pyc``: flags 0b01); Python itself never writes one."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(8)
    except OSError:
        return True  # unreadable: counted, so a change to it is seen
    return len(header) == 8 and int.from_bytes(header[4:8], "little") & 0b11 == 0b01


def script_companions(root: Path, rel: str, *, python: bool = False) -> tuple[str, ...]:
    """The project files a named script could load from beside it: for a Python script
    (``python`` when an interpreter named in the settings runs it) every module file under
    its folder (``.py``, ``.pyc``, ``.so`` …; in ``__pycache__`` only a ``.pyc`` Python would
    use unchecked), for a script of another language (:data:`_SCRIPT_SUFFIXES`) every file
    under its folder with its own suffix, for anything else (a binary) none. Project-relative,
    sorted, the script itself left out; linked folders are not entered.

    Scanning the imports (``ast``) would list fewer files but miss ``importlib``,
    ``__import__`` and ``sys.path`` changes; what can be imported from the folder is what the
    script could run, whatever it writes.

    Raises:
        TooManyCompanions: over :data:`MOST_COMPANIONS` files or :data:`MOST_COMPANION_BYTES`.
    """
    script = root / rel
    folder = script.parent
    kinds: tuple[str, ...]
    if _is_python(script, python):
        kinds = _PYTHON_MODULES
    elif script.suffix in _SCRIPT_SUFFIXES:
        kinds = (script.suffix,)
    else:
        return ()  # a binary, or a file that is not a program: nothing it loads by name
    found: list[str] = []
    total = 0
    for current, folders, names in os.walk(folder):
        folders[:] = sorted(
            name
            for name in folders
            if name not in _NEVER_BESIDE and not (Path(current) / name).is_symlink()
        )
        for name in sorted(names):
            path = Path(current) / name
            if path == script or not name.endswith(kinds):
                continue
            if Path(current).name == "__pycache__" and not _unchecked_pyc(path):
                continue  # checked against its source, which is covered
            try:
                info = path.lstat()
            except OSError:
                continue
            found.append(path.relative_to(root).as_posix())
            total += info.st_size if stat.S_ISREG(info.st_mode) else 0
            if len(found) > MOST_COMPANIONS or total > MOST_COMPANION_BYTES:
                raise TooManyCompanions(
                    f"{rel}: more than {MOST_COMPANIONS:,} files or "
                    f"{MOST_COMPANION_BYTES // (1024 * 1024)} MB beside it that it could load; "
                    "not trusted (keep the script in a folder of its own)"
                )
    return tuple(found)


def client_settings(workspace: Workspace) -> tuple[str, ...]:
    """The client settings files (:data:`CLIENT_SETTINGS_FILES`) the project holds."""
    root = workspace.root.resolve()
    return tuple(rel for rel in CLIENT_SETTINGS_FILES if os.path.lexists(root / rel))


def trust_digest(workspace: Workspace, files: tuple[str, ...] | None = None) -> str | None:
    """What trusting the project's config records: the SHA-256 of the file's text as read,
    with each project file its program settings name (path and content; ``files`` when the
    caller has already listed them), the files beside each named script it could load
    (:func:`script_companions`) and the project's client settings; None without a config
    file.

    Raises:
        TooManyCompanions: a named script has too many files beside it to cover.
    """
    text_digest = workspace.config.source_sha256
    if text_digest is None:
        return None
    digest = hashlib.sha256(text_digest.encode())
    root = workspace.root.resolve()
    python = None
    for rel in program_files(workspace) if files is None else files:
        if rel.endswith("/"):
            digest.update(f"\0{rel}\0{_tree_sha256(root / rel)}".encode())
            continue
        digest.update(f"\0{rel}\0{_file_sha256(root / rel)}".encode())
        if python is None:
            python = _python_named(workspace.config)
        for beside in script_companions(root, rel, python=python):
            path = root / beside
            content = f"link:{os.readlink(path)}" if path.is_symlink() else _file_sha256(path)
            digest.update(f"\0beside {rel}\0{beside}\0{content}".encode())
    for rel in client_settings(workspace):
        digest.update(f"\0client {rel}\0{_file_sha256(root / rel)}".encode())
    return digest.hexdigest()


def _python_named(config: Config) -> bool:
    """Whether a program setting names a Python interpreter (``python3``, ``/usr/bin/python``)."""
    for _name, value in _set_away_from_default(config, None, effective=False):
        for word in _named_words(value):
            if Path(word).name.startswith("python"):
                return True
    return False


@contextlib.contextmanager
def _store_locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` of ``trusted.json.lock`` beside the store: a read, change
    and write of the store by another ``promptdeck trust`` waits for this one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(
        path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
    )
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def _load_store(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read the trusted configs ({exc})") from None
    configs = data.get("configs") if isinstance(data, dict) else None
    if not isinstance(configs, dict):
        return {}
    return {str(k): str(v) for k, v in configs.items() if isinstance(v, str)}


def _key(workspace: Workspace) -> str:
    return str(workspace.root.resolve())


def config_trust(workspace: Workspace, agent: str) -> ConfigTrust:
    """Whether a run of ``agent`` in ``workspace`` may act on the project's config as it is.

    A run needs trust when the file sets a program setting ``agent`` acts on now; what is
    then shown, and trusted, is every program setting of the file (for any agent) and the
    project files they name, since the trust covers the whole file.
    """
    config = workspace.config
    where = config.source or CONFIG_RELPATH
    if not program_settings(config, agent, effective=True):
        return ConfigTrust((), True, where)
    files = program_files(workspace)
    try:
        digest = trust_digest(workspace, files)
    except TooManyCompanions as exc:
        return ConfigTrust((*program_settings(config), str(exc)), False, where)
    trusted = digest is not None and _load_store(trust_store_path()).get(_key(workspace)) == digest
    named = tuple(
        f"runs the project's {rel} as it is now"
        + ("" if rel.endswith("/") else ", with the files beside it it could load")
        for rel in files
    )
    shown = tuple(
        f"{rel}: the client's own settings, in force when capture starts it"
        for rel in client_settings(workspace)
    )
    return ConfigTrust(program_settings(config) + named + shown, trusted, where)


def client_settings_trusted(workspace: Workspace) -> bool:
    """Whether capture may start a client with the project's own client settings in force
    (:data:`CLIENT_SETTINGS_FILES`): the user trusted the project's config as it is now,
    those files included. A project without config has nothing trusted."""
    try:
        digest = trust_digest(workspace)
    except TooManyCompanions:
        return False
    return digest is not None and _load_store(trust_store_path()).get(_key(workspace)) == digest


def check_trusted(workspace: Workspace, agent: str) -> None:
    """Stop a run that would act on settings of an untrusted project config.

    Raises:
        UntrustedConfig: the file sets such settings and this version is not trusted (exit 10).
    """
    verdict = config_trust(workspace, agent)
    if verdict.needed:
        raise UntrustedConfig(verdict.where, list(verdict.settings))


def _write_store(path: Path, configs: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload: dict[str, Any] = {"format": _FORMAT, "configs": dict(sorted(configs.items()))}
    # Whole or not at all: a crash leaves the old file. Private, as the user's trust is.
    write_whole(path, json.dumps(payload, indent=2) + "\n", mode=0o600)


def trust_config(workspace: Workspace) -> str | None:
    """Record the user's trust in the project's config as it is now; its SHA-256, or None
    when the project has no config file (nothing to trust).

    Raises:
        UsageError: the user's trust file cannot be read or written.
    """
    digest = trust_digest(workspace)
    if digest is None:
        return None
    path = trust_store_path()
    try:
        with _store_locked(path):
            configs = _load_store(path)
            configs[_key(workspace)] = digest
            _write_store(path, configs)
    except OSError as exc:
        raise UsageError(f"{path}: cannot record the trust ({exc.strerror})") from None
    return digest


def forget_config(workspace: Workspace) -> bool:
    """Withdraw the trust in the project's config; True when there was one."""
    path = trust_store_path()
    if not path.exists():
        return False
    try:
        with _store_locked(path):
            configs = _load_store(path)
            if configs.pop(_key(workspace), None) is None:
                return False
            _write_store(path, configs)
    except OSError as exc:
        raise UsageError(f"{path}: cannot withdraw the trust ({exc.strerror})") from None
    return True


__all__ = [
    "CLIENT_SETTINGS_FILES",
    "TRUST_FILENAME",
    "ConfigTrust",
    "TooManyCompanions",
    "check_trusted",
    "client_settings",
    "client_settings_trusted",
    "config_trust",
    "forget_config",
    "program_files",
    "program_settings",
    "script_companions",
    "trust_config",
    "trust_digest",
    "trust_store_path",
]
