"""What each client loads by itself, and the window it loads it into: one home for every fact.

Capture, ``inspect``'s cut lines, the app's cut-line gauges and its context-window view all read
these figures; each is dated and sourced, per client version where it changed.

**Claude Code** (measured with 2.1.197 against a loopback server) loads its memory files by
itself, in this order: the user's ``~/.claude/CLAUDE.md``, the user's rules
``~/.claude/rules/**/*.md``, then for each folder from the filesystem root down to its working
folder ``CLAUDE.md`` and ``.claude/CLAUDE.md``, the project's rules ``.claude/rules/**/*.md``,
and last ``CLAUDE.local.md`` (:data:`CLAUDE_SOURCES`). A rules file whose front matter names
``paths:`` is loaded only when the agent touches a matching file, not at the start. It warns
when one memory file passes about 40,000 characters (:data:`CLAUDE_LARGE_MEMORY_CHARS`).

**Codex** (measured with 0.171) reads ``AGENTS.override.md`` else ``AGENTS.md`` in each folder
from the project root — the nearest folder up holding ``.git`` — down to its working folder,
under ONE budget of ``project_doc_max_bytes`` (32 KiB) for the whole chain: a file past the
budget is cut where it runs out and the files after it are not sent (:func:`codex_kept`). Its
own home's ``AGENTS.md`` comes before the chain, outside that budget.

**Windows** (:func:`model_window`): the window a capture of the client reported wins; else the
model table (:data:`MODEL_WINDOWS`); else the client's default. :func:`window_budget` adds what
the client keeps back of it (its output reserve and auto-compact buffer), as its ``/context``
shows them.

No file is read here: the callers walk the folders these functions name through the guarded
reader.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from .lean_dataclass import dataclass

CHECKED = "2026-11-28"
"""When the figures below were last checked against the clients named with them."""

# --- rules files ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RulesSource:
    """One kind of file a client loads by itself.

    Attributes:
        client: ``claude`` or ``codex``.
        scope: ``user`` (the user's home), ``project`` (a folder from the project root down to
            the working folder) or ``local`` (the working folder only, not committed).
        pattern: the path, relative to the user's client folder (``user``) or to each folder.
        loaded_because: why the client sends it, for a person.
    """

    client: str
    scope: str
    pattern: str
    loaded_because: str


CLAUDE_SOURCES: tuple[RulesSource, ...] = (
    RulesSource("claude", "user", "CLAUDE.md", "the user's memory (~/.claude/CLAUDE.md)"),
    RulesSource("claude", "user", "rules/**/*.md", "a user rule (~/.claude/rules)"),
    RulesSource("claude", "project", "CLAUDE.md", "project memory of a folder it works in"),
    RulesSource("claude", "project", ".claude/CLAUDE.md", "project memory of a folder it works in"),
    RulesSource("claude", "project", ".claude/rules/**/*.md", "a project rule (.claude/rules)"),
    RulesSource("claude", "local", "CLAUDE.local.md", "the user's local project memory"),
)
"""Claude Code's memory files in the order it sends them (2.1.197)."""
CODEX_DOC_NAMES = ("AGENTS.override.md", "AGENTS.md")
"""What Codex looks for in each folder of its chain, the first found wins (0.171)."""
CODEX_SOURCES: tuple[RulesSource, ...] = (
    RulesSource("codex", "user", "AGENTS.override.md", "the user's instructions (CODEX_HOME)"),
    RulesSource("codex", "user", "AGENTS.md", "the user's instructions (CODEX_HOME)"),
    RulesSource("codex", "project", "AGENTS.override.md", "a folder from the git root down"),
    RulesSource("codex", "project", "AGENTS.md", "a folder from the git root down"),
)
CODEX_ROOT_MARKERS = (".git",)
"""What makes a folder Codex's project root (``project_root_markers``' default, 0.171)."""
CODEX_PROJECT_DOC_MAX_BYTES = 32 * 1024
"""Codex's default ``project_doc_max_bytes``: one budget for the whole chain."""
CLAUDE_LARGE_MEMORY_CHARS = 40_000
"""Claude Code's warning line for one large memory file."""
CLAUDE_MEMORY_NAMES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
"""Claude Code's memory files of one folder (its rules folder aside)."""
RULES_FILES = {"claude": CLAUDE_MEMORY_NAMES, "codex": CODEX_DOC_NAMES}
"""The rules files each client loads by itself from its working folder, in its order."""
OWN_RULES_FILE = {"claude": "CLAUDE.md", "codex": "AGENTS.md"}
"""The one rules file a person thinks of for each client."""
USER_FOLDERS = {"claude": ".claude", "codex": ".codex"}
"""Each client's folder in the user's home (Codex: ``CODEX_HOME`` when set)."""
CLAUDE_USER_SETTINGS = ("settings.json",)
"""The user's Claude Code settings files, in its folder (``model``, ``env``, ``hooks`` …)."""
CLAUDE_USER_MCP = "~/.claude.json"
"""Where Claude Code keeps the user's MCP servers (``mcpServers``, top level and per project)."""
CODEX_USER_CONFIG = "config.toml"
"""Codex's settings file in its home (``model``, ``mcp_servers`` …)."""


def user_folder(client: str, environ: dict[str, str] | None = None) -> Path | None:
    """The client's folder in the user's real home (``~/.claude``; Codex's ``CODEX_HOME``
    when set); None when no home is known."""
    env = os.environ if environ is None else environ
    if client == "codex" and env.get("CODEX_HOME"):
        return Path(env["CODEX_HOME"])
    home = env.get("HOME")
    return Path(home) / USER_FOLDERS[client] if home else None


def project_root(
    cwd: Path, fallback: Path | None = None, markers: Sequence[str] = CODEX_ROOT_MARKERS
) -> Path:
    """Codex's project root for ``cwd``: the nearest folder up holding a marker; else
    ``fallback`` (Codex itself then reads ``cwd`` alone; promptdeck starts it at the
    project's root, so the two agree), else ``cwd``."""
    here = cwd.resolve()
    for folder in (here, *here.parents):
        if any(os.path.lexists(folder / marker) for marker in markers):
            return folder
    return fallback.resolve() if fallback is not None else here


def folders_down(top: Path, cwd: Path) -> list[Path]:
    """The folders from ``top`` down to ``cwd`` (``[top]`` when ``cwd`` is not under it)."""
    top, here = top.resolve(), cwd.resolve()
    if not here.is_relative_to(top):
        return [top]
    folders = [top]
    for part in here.relative_to(top).parts:
        folders.append(folders[-1] / part)
    return folders


def codex_chain_paths(root: Path, cwd: Path | None = None) -> tuple[Path, list[Path]]:
    """Codex's project root for ``cwd`` (default ``root``) and the file it would read in
    each folder from there down (``AGENTS.override.md`` else ``AGENTS.md``); the caller reads
    them through the guarded reader, with the returned root as the bound."""
    here = (cwd or root).resolve()
    top = project_root(here, root)
    found = []
    for folder in folders_down(top, here):
        path = next((folder / n for n in CODEX_DOC_NAMES if (folder / n).is_file()), None)
        if path is not None:
            found.append(path)
    return top, found


def claude_folders_up(cwd: Path) -> list[Path]:
    """The folders whose ``CLAUDE.md`` Claude Code reads, from the top down to ``cwd`` (it
    walks up from its working folder to the filesystem's root, the root itself left out)."""
    here = cwd.resolve()
    return [folder for folder in reversed((here, *here.parents)) if folder.parent != folder]


def codex_kept(sizes: Sequence[int], max_bytes: int = CODEX_PROJECT_DOC_MAX_BYTES) -> list[int]:
    """The bytes Codex keeps of each file of its chain (``sizes``, root first) under its one
    budget: whole files while they fit, the first that does not is cut, the rest get 0."""
    remaining = max_bytes
    kept = []
    for size in sizes:
        take = min(size, remaining)
        kept.append(take)
        remaining -= take
    return kept


def rule_paths(text: str) -> tuple[str, ...]:
    """The ``paths:`` globs of a rules file's front matter (empty: it always applies)."""
    if not text.startswith("---"):
        return ()
    end = text.find("\n---", 3)
    if end < 0:
        return ()
    globs: list[str] = []
    listing = False
    for line in text[3:end].splitlines():
        stripped = line.strip()
        if stripped.startswith("paths:"):
            value = stripped[len("paths:") :].strip()
            listing = not value
            if value:
                globs.extend(g.strip(" '\"") for g in value.strip("[]").split(",") if g.strip())
        elif listing and stripped.startswith("- "):
            globs.append(stripped[2:].strip(" '\""))
        elif stripped and not line.startswith((" ", "\t")):
            listing = False
    return tuple(g for g in globs if g)


def rule_applies(globs: Sequence[str], folder: str) -> bool:
    """Whether a rule scoped to ``globs`` applies at the start in ``folder`` (root-relative,
    ``.`` for the root): only a glob that matches the folder itself or everything does."""
    if not globs:
        return True
    target = PurePosixPath(folder).as_posix()
    return any(
        glob in ("**", "**/*", "*") or fnmatch.fnmatch(target, glob.rstrip("/")) for glob in globs
    )


CLAUDE_STABLE_PREFIX_FLAG = "--exclude-dynamic-system-prompt-sections"
CLAUDE_STABLE_PREFIX_SINCE = (2, 1, 98)
"""Claude Code's switch that moves its per-run sections (``gitStatus`` …) out of the system
prompt, and the first version that has it."""


def version_at_least(version: str, since: tuple[int, ...]) -> bool:
    """Whether the dotted ``version`` (``2.1.197``; a suffix after the numbers ignored) is
    ``since`` or later; False when it says no number."""
    numbers = []
    for part in version.strip().split("."):
        digits = "".join(ch for ch in part if ch.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        numbers.append(int(digits))
    return bool(numbers) and tuple(numbers) >= since


# --- context windows --------------------------------------------------------------------------

MODEL_WINDOWS: tuple[tuple[str, int, str], ...] = (
    # Anthropic, "Models overview": every Claude 3.x/4.x model has a 200K-token window.
    ("claude-", 200_000, "Anthropic models overview, 2026-11"),
    # Claude Code 2.1.197 sends the 1M-context beta header for claude-opus-4-8 and reports
    # contextWindow 1000000 (measured against a loopback server).
    ("claude-opus-4-8", 1_000_000, "Claude Code 2.1.197, measured"),
    # Codex's bundled catalogue (`codex debug models`, field "context_window").
    ("gpt-5", 272_000, "codex-cli 0.169 catalogue"),
    ("gpt-6", 272_000, "codex-cli 0.169 catalogue"),
    ("gpt-6.1-terra", 500_000, "codex-cli 0.169 catalogue"),
    ("gpt-6.2-sol", 500_000, "codex-cli 0.171 catalogue"),
    ("gpt-daybreak-red", 372_000, "codex-cli 0.169 catalogue"),
    ("codex-", 272_000, "codex-cli 0.169 catalogue"),
)
"""``(model name prefix, window in tokens, source)``; the longest matching prefix wins."""
LONG_CONTEXT_SUFFIX = "[1m]"
LONG_CONTEXT_WINDOW = 1_000_000
"""Claude's 1M-token window, named by :data:`LONG_CONTEXT_SUFFIX` on the model."""
CLIENT_WINDOWS = {"claude": 200_000, "codex": 272_000}
"""The window of a model the table does not know, per client (also the configuration's
defaults, ``agent.claude_context_window`` and ``agent.codex_context_window``)."""


@dataclass(frozen=True)
class WindowFigures:
    """A model's window and what the client keeps back of it.

    Attributes:
        window: the model's context window in tokens.
        source: where ``window`` comes from (``capture``, the table's source, ``default``).
        output_reserve: tokens the client keeps for the model's answer.
        autocompact_buffer: tokens past which the client compacts the conversation.
        reserve_source: where the two figures come from; they are the client's, not measured.
    """

    window: int
    source: str
    output_reserve: int
    autocompact_buffer: int
    reserve_source: str

    @property
    def usable(self) -> int:
        """Tokens the conversation may fill before the client compacts it."""
        return max(self.window - self.output_reserve - self.autocompact_buffer, 0)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "window": self.window,
            "source": self.source,
            "output_reserve": self.output_reserve,
            "autocompact_buffer": self.autocompact_buffer,
            "usable": self.usable,
            "reserve_source": self.reserve_source,
        }


CLAUDE_OUTPUT_RESERVE = 20_000
CLAUDE_AUTOCOMPACT_BUFFER = 13_000
"""Claude Code keeps ``min(max output, 20,000)`` tokens for the answer and compacts 13,000
tokens before what is left; ``/context`` shows the two together as its "Autocompact buffer"
(33k on a 200k window, Claude Code 2.1.x)."""
CODEX_EFFECTIVE_SHARE = 0.95
CODEX_AUTOCOMPACT_SHARE = 0.90
"""Codex fills 95 % of the window (``effective_context_window_percent``) and compacts at 90 %
(its model family's ``auto_compact_token_limit``), codex-cli 0.171."""


def model_window(client: str, model: str, captured: int | None = None) -> int:
    """The context window, in tokens, of ``model`` as ``client`` names it (``captured``: the
    window a capture of the client reported, which wins)."""
    return window_of(client, model, captured)[0]


def window_of(client: str, model: str, captured: int | None = None) -> tuple[int, str]:
    """:func:`model_window` and where it comes from."""
    if captured:
        return captured, "capture"
    name = model.strip().lower()
    if name.endswith(LONG_CONTEXT_SUFFIX):
        return LONG_CONTEXT_WINDOW, "the model's [1m] suffix"
    found = [(len(p), size, why) for p, size, why in MODEL_WINDOWS if name.startswith(p)]
    if found:
        _, size, why = max(found)
        return size, why
    return CLIENT_WINDOWS.get(client, CLIENT_WINDOWS["claude"]), "the client's default"


def window_budget(
    client: str, model: str = "", captured: int | None = None, window: int | None = None
) -> WindowFigures:
    """The window of ``model`` (``window`` when the caller already knows it) with the
    client's output reserve and auto-compact buffer."""
    size, source = (window, "configured") if window else window_of(client, model, captured)
    if client == "codex":
        reserve = size - int(size * CODEX_EFFECTIVE_SHARE)
        buffer = int(size * CODEX_EFFECTIVE_SHARE) - int(size * CODEX_AUTOCOMPACT_SHARE)
        return WindowFigures(size, source, reserve, buffer, "codex-cli 0.171 defaults")
    return WindowFigures(
        size,
        source,
        CLAUDE_OUTPUT_RESERVE,
        CLAUDE_AUTOCOMPACT_BUFFER,
        "Claude Code 2.1.x /context (output reserve + auto-compact buffer)",
    )
