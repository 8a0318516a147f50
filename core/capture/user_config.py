"""The user's own client configuration, as a run of the client sees it, for a capture.

A capture runs the client with a temporary home, so by itself it would miss what the user's
real home adds to every run: Claude Code's ``~/.claude/CLAUDE.md``, ``~/.claude/rules/**``, the
``model`` of its settings and its MCP servers; Codex's ``AGENTS.md`` in its home and the
``model`` of its ``config.toml``. :func:`read_user_config` reads them READ ONLY through the
guarded reader (bounded by the real home: a link out of it, a FIFO, a huge or malformed file
is one note and the capture goes on without it) and :func:`place_user_config` puts copies of
the texts, and only the settings that shape the request, in the capture's temporary home.
Nothing is ever written to the real home; no credentials file (``.credentials.json``,
``auth.json``) is read; the dummy API key stays.

MCP servers are programs: unless the capture is asked to start them (``--with-mcp``), each
configured server is listed as not started, its tools not measured.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from ..client_loads import (
    CLAUDE_LARGE_MEMORY_CHARS,
    CLAUDE_MEMORY_NAMES,
    CLAUDE_USER_MCP,
    CLAUDE_USER_SETTINGS,
    CODEX_DOC_NAMES,
    CODEX_USER_CONFIG,
    claude_folders_up,
    codex_chain_paths,
    codex_kept,
    rule_applies,
    rule_paths,
    user_folder,
)
from ..lean_dataclass import dataclass
from ..project.textfiles import (
    StructuredProblem,
    TextProblem,
    parse_toml,
    printable_name,
    read_text_file,
)
from ..terminal import printable_line
from .parts import RulesText

SETTINGS_LIMIT = 1024 * 1024
"""The largest client settings file read (a larger one is a note, not read)."""
STATE_LIMIT = 32 * 1024 * 1024
"""The largest ``~/.claude.json`` read for its MCP servers (it also keeps the user's history)."""
MEMORY_LIMIT = 4 * 1024 * 1024
"""The largest rules file read."""
RULES_FILES_LIMIT = 200
RULES_FOLDERS_LIMIT = 500
"""The most files of a rules folder read, and folders of it walked (the rest is a note)."""
KEPT_SETTINGS = ("model", "outputStyle", "includeCoAuthoredBy", "permissions", "language")
"""The user's Claude Code settings a capture keeps: those that shape the request and start
no program (hooks, ``apiKeyHelper``, ``env``, ``statusLine`` and the like are left out)."""


@dataclass(frozen=True)
class UserConfig:
    """What the user's real client configuration adds to a run.

    Attributes:
        copies: ``(path in the temporary home, text)`` to place there.
        rules: each rules file the client will load, with why.
        mcp_servers: the configured MCP servers' names.
        mcp_config: the servers' definitions (for ``--with-mcp``; empty otherwise).
        notes: one line per thing left out (a malformed settings file, a server not started).
    """

    copies: tuple[tuple[str, str], ...] = ()
    rules: tuple[RulesText, ...] = ()
    mcp_servers: tuple[str, ...] = ()
    mcp_config: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _read(path: Path, bound: Path, limit: int, notes: list[str]) -> str | None:
    """``path``'s text read through the guarded reader inside ``bound``; a missing file is
    None, any other problem one note."""
    if not os.path.lexists(path):
        return None
    text = read_text_file(path, root=bound, limit=limit)
    if isinstance(text, TextProblem):
        why = "a link out of its folder" if text.reason == "outside-project" else str(text)
        notes.append(f"{printable_line(str(path))}: {printable_line(why)}, left out of the capture")
        return None
    return text


def _json(path: Path, bound: Path, notes: list[str], limit: int = SETTINGS_LIMIT) -> dict[str, Any]:
    text = _read(path, bound, limit, notes)
    if text is None:
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        notes.append(f"{printable_line(str(path))}: not a JSON object, left out of the capture")
        return {}
    return data


def _shown(text: str) -> str:
    """A file name or a value of a file as one printable line: a rules file's name and its
    ``paths:`` are shown in the capture's parts and notes, and may hold escapes or bytes that
    are not UTF-8."""
    return printable_line(printable_name(text))


def _rules_folder(
    folder: Path, bound: Path, label: str, why: str, notes: list[str]
) -> list[tuple[str, RulesText]]:
    """The ``*.md`` files under ``folder`` (links not followed), each with why it loads, or
    why it waits (a rule scoped to ``paths:`` loads only when a matching file is touched); each
    with its real path under ``folder``, its shown name printable."""
    found: list[tuple[str, RulesText]] = []
    if not folder.is_dir() or folder.is_symlink():
        return found
    names: list[Path] = []
    for visited, (top, dirs, files) in enumerate(os.walk(folder, followlinks=False)):
        dirs.sort()
        names.extend(Path(top) / name for name in sorted(files) if name.endswith(".md"))
        if len(names) > RULES_FILES_LIMIT or visited >= RULES_FOLDERS_LIMIT:
            notes.append(f"{label}: too many files or folders, the rest not read")
            break
    for path in names[:RULES_FILES_LIMIT]:
        text = _read(path, bound, MEMORY_LIMIT, notes)
        if text is None or not text.strip():
            continue
        relative = path.relative_to(folder).as_posix()
        name = f"{label}/{_shown(relative)}"
        globs = rule_paths(text)
        if rule_applies(globs, "."):
            found.append((relative, RulesText(name, text, why)))
        else:
            applies = _shown(", ".join(globs))
            notes.append(f"{name}: not loaded at the start (it applies to {applies})")
    return found


def _servers(data: dict[str, Any], key: str) -> dict[str, Any]:
    servers = data.get(key)
    return {str(k): v for k, v in servers.items()} if isinstance(servers, dict) else {}


def _claude(home: Path | None, root: Path, own_settings: bool, notes: list[str]) -> UserConfig:
    copies: list[tuple[str, str]] = []
    rules: list[RulesText] = []
    servers: dict[str, Any] = {}
    if home is not None:
        servers = _claude_user(home, copies, rules, notes)
    if own_settings:
        servers.update(_servers(_json(root / ".mcp.json", root, notes), "mcpServers"))
    rules.extend(_claude_project_rules(root, notes))
    return UserConfig(tuple(copies), tuple(rules), tuple(servers), {"mcpServers": servers})


def _claude_user(
    home: Path, copies: list[tuple[str, str]], rules: list[RulesText], notes: list[str]
) -> dict[str, Any]:
    """The user's Claude Code memory, rules and settings added to ``copies`` and ``rules``;
    the user's MCP servers returned."""
    folder = home / ".claude"
    memory = _read(folder / "CLAUDE.md", home, MEMORY_LIMIT, notes)
    if memory is not None and memory.strip():
        copies.append((".claude/CLAUDE.md", memory))
        rules.append(RulesText("~/.claude/CLAUDE.md", memory, "the user's memory"))
    for relative, rule in _rules_folder(
        folder / "rules", home, "~/.claude/rules", "a user rule", notes
    ):
        copies.append((".claude/rules/" + relative, rule.text))
        rules.append(rule)
    for name in CLAUDE_USER_SETTINGS:
        settings = _json(folder / name, home, notes)
        kept = {key: settings[key] for key in KEPT_SETTINGS if key in settings}
        if kept:
            copies.append((f".claude/{name}", json.dumps(kept)))
    state = _json(home / CLAUDE_USER_MCP.removeprefix("~/"), home, notes, STATE_LIMIT)
    return _servers(state, "mcpServers")


def _claude_project_rules(root: Path, notes: list[str]) -> list[RulesText]:
    """The memory files Claude Code reads in the project and the folders above it."""
    rules: list[RulesText] = []
    for folder in claude_folders_up(root):
        above = folder != root.resolve()
        for name in CLAUDE_MEMORY_NAMES:
            if name == "CLAUDE.local.md":
                continue
            text = _read(folder / name, folder, MEMORY_LIMIT, notes)
            if text is not None and text.strip():
                label = _shown(os.path.relpath(folder / name, root).replace(os.sep, "/"))
                why = "memory of a folder above the project" if above else "project memory"
                rules.append(RulesText(label, text, why))
    rules.extend(
        rule
        for _, rule in _rules_folder(
            root / ".claude/rules", root, ".claude/rules", "a project rule", notes
        )
    )
    local = _read(root / "CLAUDE.local.md", root, MEMORY_LIMIT, notes)
    if local is not None and local.strip():
        rules.append(RulesText("CLAUDE.local.md", local, "the user's local project memory"))
    return rules


def _codex(folder: Path | None, root: Path, notes: list[str]) -> UserConfig:
    copies: list[tuple[str, str]] = []
    rules: list[RulesText] = []
    servers: dict[str, Any] = {}
    if folder is not None:
        servers = _codex_user(folder, copies, rules, notes)
    top, paths = codex_chain_paths(root)
    texts = [(path, _read(path, top, MEMORY_LIMIT, notes)) for path in paths]
    chain = [(path, text) for path, text in texts if text is not None and text.strip()]
    kept = codex_kept([len(text.encode("utf-8")) for _, text in chain])
    for (path, text), keep in zip(chain, kept, strict=True):
        label = _shown(os.path.relpath(path, root).replace(os.sep, "/"))
        if keep == 0:
            notes.append(f"{label}: not sent, Codex's 32 KiB AGENTS.md budget ran out before it")
            continue
        rules.append(RulesText(label, text, "a folder from the git root down to Codex's"))
    return UserConfig(tuple(copies), tuple(rules), tuple(servers), {})


def _codex_user(
    folder: Path, copies: list[tuple[str, str]], rules: list[RulesText], notes: list[str]
) -> dict[str, Any]:
    """The user's Codex instructions and model added to ``copies`` and ``rules``; its MCP
    servers returned."""
    for name in CODEX_DOC_NAMES:
        text = _read(folder / name, folder, MEMORY_LIMIT, notes)
        if text is not None and text.strip():
            copies.append((name, text))
            rules.append(RulesText(f"$CODEX_HOME/{name}", text, "the user's instructions"))
            break
    servers: dict[str, Any] = {}
    config = _read(folder / CODEX_USER_CONFIG, folder, SETTINGS_LIMIT, notes)
    if config is not None:
        try:
            table = parse_toml(config)
        except StructuredProblem as problem:
            notes.append(f"{CODEX_USER_CONFIG}: {problem}, left out of the capture")
            table = {}
        servers = _servers(table, "mcp_servers")
        if isinstance(table.get("model"), str):
            copies.append((CODEX_USER_CONFIG, f"model = {json.dumps(table['model'])}\n"))
    return servers


def read_user_config(
    client: str,
    root: Path,
    environ: Mapping[str, str],
    *,
    own_settings: bool,
    with_mcp: bool,
) -> UserConfig:
    """The user's real configuration of ``client`` (its home from ``environ``: ``HOME``, and
    Codex's ``CODEX_HOME``; none set reads only the project's files) and the rules files the
    client loads from the project; see the module's description."""
    notes: list[str] = []
    home = Path(environ["HOME"]) if environ.get("HOME") else None
    if client == "codex":
        folder = user_folder("codex", dict(environ))
        found = _codex(folder, root, notes)
    else:
        found = _claude(home, root, own_settings, notes)
    if client == "claude":
        notes.extend(
            f"{rule.path}: {len(rule.text):,} characters, over Claude Code's large-file warning "
            f"(about {CLAUDE_LARGE_MEMORY_CHARS:,})"
            for rule in found.rules
            if len(rule.text) > CLAUDE_LARGE_MEMORY_CHARS
        )
    for name in found.mcp_servers:
        if not with_mcp:
            notes.append(f"MCP server {printable_line(name)} not started: its tools not measured")
        elif client == "codex":
            notes.append(
                f"MCP server {printable_line(name)} not started: capture starts Claude Code's "
                "servers only"
            )
    return UserConfig(
        found.copies,
        found.rules,
        found.mcp_servers,
        found.mcp_config if with_mcp and found.mcp_servers else {},
        tuple(_shown(note) for note in notes),
    )


def place_user_config(config: UserConfig, home: Path) -> None:
    """Write ``config``'s copies into the capture's temporary ``home`` (never the real one)."""
    for relative, text in config.copies:
        target = home / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
