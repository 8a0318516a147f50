"""Codex, driven headless with ``codex exec --json``.

**The system prompt travels as developer instructions**, byte for byte, ahead of the user
message, with Codex's own base prompt kept (as ``--append-system-prompt-file`` keeps Claude's).
Codex has no file flag for that, so the launch writes a *profile*: ``<run>/codex-profile.toml``
holds ``developer_instructions = "<system.md as a TOML string>"`` (a quoted string is kept exact;
an unquoted ``-c`` value would be whitespace-trimmed, and ``-c developer_instructions=…`` would
put the whole prompt into one argv string, which Linux caps at 131,072 bytes). ``codex -p NAME``
only reads ``$CODEX_HOME/NAME.config.toml``, so for the time the process runs a symlink with a
name of our own (``promptdeck-<pid>-<run>.config.toml``) points there; it is created exclusively
(a user's file is never replaced) and removed when the process ends, whatever the outcome. A
link left behind by a promptdeck that was killed outright is removed at the next launch (its
pid no longer runs). ``model_instructions_file`` is not used: it *replaces* Codex's base prompt,
the one that teaches it its tools.

The user message goes alone on stdin (``codex exec --json -``). A resumed chat turn
(``codex exec --json resume <thread> -``) sends only the turn's message: Codex stores the
first turn's developer instructions in the thread and replays them on every later request.

A trusted project's own ``.codex/config.toml`` that sets ``developer_instructions`` silently
wins over a profile, so the launch refuses (exit 2) when such a file would apply, and warns
when one exists in a project Codex does not trust yet.

The sandbox: ``-s workspace-write`` by default (``agent.codex_sandbox``), so a dev phase can edit
the workspace; Codex keeps ``.git`` read-only inside it.

The stream: ``thread.started`` (the thread id, our session id), ``item.completed`` items
(``agent_message`` text is the agent's own; ``command_execution``, ``file_change``,
``mcp_tool_call``, ``web_search`` are tool use and results; ``reasoning``, ``todo_list`` and any
other item are shown), ``turn.completed`` with the turn's summed usage, ``turn.failed`` and
top-level ``error`` (a transient "Reconnecting… n/5" is shown, not taken for a failure). Context
use comes from the last model call, which only the session's rollout file
(``$CODEX_HOME/sessions/…/rollout-…-<thread>.jsonl``, its last ``token_count``) records.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import UsageError
from ..processes import pid_alive
from ..textfit import one_line_preview
from .base import (
    INFO,
    RESULT,
    SESSION,
    TEXT,
    TOOL_RESULT,
    TOOL_USE,
    USAGE,
    AgentEvent,
    LaunchRequest,
    LaunchSpec,
    Usage,
    make_event,
)

BIN_ENV = "PROMPTDECK_CODEX_BIN"
PROFILE_FILE = "codex-profile.toml"
"""The profile promptdeck writes into the run folder."""
PROFILE_PREFIX = "promptdeck-"
PREVIEW_CHARS = 200
ROLLOUT_TAIL_BYTES = 1 << 20
"""How much of a rollout file's end is read for its last ``token_count``."""
_PROFILE_LINK = re.compile(r"^promptdeck-(\d+)-[A-Za-z0-9_-]+\.config\.toml$")
_RECONNECTING = re.compile(r"reconnecting", re.IGNORECASE)
_OVERRIDING_KEYS = ("developer_instructions", "instructions", "model_instructions_file")
"""Settings of a project's ``.codex/config.toml`` that change what the model is told."""
_SANDBOX_FLAGS = ("-s", "--sandbox", "--dangerously-bypass-approvals-and-sandbox")


def codex_binary(config: Config) -> str:
    """The binary to run: ``PROMPTDECK_CODEX_BIN``, else config ``agent.codex_bin``."""
    return os.environ.get(BIN_ENV) or config.agent_codex_bin


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


@dataclass(frozen=True)
class ProjectOverride:
    """A project ``.codex/config.toml`` that changes the instructions Codex sends.

    Attributes:
        path: the file.
        keys: the overriding settings it holds.
        trusted: Codex trusts the project, so the file is in force.
    """

    path: Path
    keys: tuple[str, ...]
    trusted: bool

    def message(self) -> str:
        """The refusal or the warning, in one line."""
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
    try:
        data = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
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
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        keys = tuple(key for key in _OVERRIDING_KEYS if key in data)
        if keys:
            is_trusted = any(folder == t or folder.is_relative_to(t) for t in trusted)
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


def _preview(text: str) -> str:
    return one_line_preview(text, PREVIEW_CHARS)


def _int(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def codex_usage(data: Any) -> Usage:
    """A :class:`Usage` from a Codex ``usage`` object.

    Codex counts cached (read and written) tokens inside ``input_tokens``; they are kept apart
    here as Anthropic reports them, so ``context_tokens`` is the same sum for both.
    """
    usage = data if isinstance(data, dict) else {}
    cached = _int(usage, "cached_input_tokens")
    written = _int(usage, "cache_write_input_tokens")
    return Usage(
        input_tokens=max(0, _int(usage, "input_tokens") - cached - written),
        output_tokens=_int(usage, "output_tokens"),
        cache_read_tokens=cached,
        cache_creation_tokens=written,
        reasoning_output_tokens=_int(usage, "reasoning_output_tokens"),
    )


def last_model_call(home: Path, thread: str) -> tuple[Usage, int | None] | None:
    """The last model call's usage and the model's window, from the thread's rollout file."""
    if not re.fullmatch(r"[A-Za-z0-9-]+", thread):
        return None
    candidates = sorted((home / "sessions").glob(f"*/*/*/rollout-*-{thread}.jsonl"))
    if not candidates:
        return None
    try:
        with candidates[-1].open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - ROLLOUT_TAIL_BYTES))
            tail = handle.read()
    except OSError:
        return None
    for raw in reversed(tail.splitlines()):
        if b'"token_count"' not in raw:
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        payload = entry.get("payload") if isinstance(entry, dict) else None
        info = payload.get("info") if isinstance(payload, dict) else None
        if isinstance(info, dict) and isinstance(info.get("last_token_usage"), dict):
            window = info.get("model_context_window")
            return codex_usage(info["last_token_usage"]), window if isinstance(
                window, int
            ) else None
    return None


class CodexJsonParser:
    """Parses ``codex exec --json`` lines.

    Args:
        context_window: the window when Codex does not name one.
        home: Codex's home, where the rollout file with the last call's usage is; None reads
            no rollout (context use then stays unknown rather than wrong).
    """

    def __init__(self, context_window: int = 272_000, home: Path | None = None) -> None:
        self.context_window = context_window
        self.home = home
        self.thread: str | None = None

    def parse(self, line: str) -> list[AgentEvent]:
        """Events for one line; a line that is not a JSON object is shown as it is."""
        stripped = line.strip()
        if not stripped:
            return []
        try:
            data = json.loads(stripped)
        except ValueError:
            return [make_event(kind=INFO, text=line)]
        if not isinstance(data, dict):
            return [make_event(kind=INFO, text=line)]
        kind = data.get("type")
        if kind == "thread.started":
            thread = data.get("thread_id")
            self.thread = thread if isinstance(thread, str) else None
            return [AgentEvent(SESSION, f"thread {thread}", session_id=self.thread)]
        if kind == "item.completed" and isinstance(data.get("item"), dict):
            return self._item(data["item"])
        if kind == "turn.completed":
            return self._turn_completed(data.get("usage"))
        if kind == "turn.failed":
            error = data.get("error")
            message = error.get("message", "") if isinstance(error, dict) else ""
            return [AgentEvent(RESULT, f"turn.failed: {message}", is_error=True)]
        if kind == "error":
            message = str(data.get("message", ""))
            if _RECONNECTING.search(message):
                # Codex retries on its own; a turn that does not recover ends in turn.failed.
                return [AgentEvent(INFO, f"error: {message}")]
            return [AgentEvent(RESULT, f"error: {message}", is_error=True)]
        return []

    def _turn_completed(self, raw: Any) -> list[AgentEvent]:
        totals = codex_usage(raw)
        events: list[AgentEvent] = []
        last = last_model_call(self.home, self.thread) if self.home and self.thread else None
        if last is not None:
            usage, window = last
            events.append(
                AgentEvent(
                    USAGE,
                    usage=usage,
                    context_tokens=usage.context_tokens,
                    context_window=window or self.context_window,
                )
            )
        else:
            # The turn's sum is not one call's context: report usage, leave context unknown.
            events.append(AgentEvent(USAGE, usage=totals))
        events.append(AgentEvent(RESULT, "turn completed", usage=totals))
        return events

    def _item(self, item: dict[str, Any]) -> list[AgentEvent]:
        kind = item.get("type")
        if kind == "agent_message":
            return [AgentEvent(TEXT, str(item.get("text", "")))]
        if kind == "reasoning":
            return [AgentEvent(INFO, _preview(str(item.get("text", ""))))]
        if kind == "command_execution":
            return [
                AgentEvent(TOOL_USE, f"shell: {_preview(str(item.get('command', '')))}"),
                AgentEvent(
                    TOOL_RESULT,
                    f"exit {item.get('exit_code')}: "
                    + _preview(str(item.get("aggregated_output", ""))),
                ),
            ]
        if kind == "file_change":
            changes = item.get("changes") or []
            paths = ", ".join(
                f"{c.get('kind')} {c.get('path')}" for c in changes if isinstance(c, dict)
            )
            return [AgentEvent(TOOL_USE, f"patch: {paths}")]
        if kind == "mcp_tool_call":
            return [AgentEvent(TOOL_USE, f"{item.get('server')}.{item.get('tool')}")]
        if kind == "web_search":
            return [AgentEvent(TOOL_USE, f"web search: {_preview(str(item.get('query', '')))}")]
        if kind == "todo_list":
            entries = [
                f"[{'x' if entry.get('completed') else ' '}] {entry.get('text', '')}"
                for entry in item.get("items") or []
                if isinstance(entry, dict)
            ]
            return [AgentEvent(INFO, _preview("todo: " + "; ".join(entries)))]
        if kind == "error":
            return [AgentEvent(INFO, f"error: {item.get('message', '')}")]
        rest = {k: v for k, v in item.items() if k not in ("id", "type")}
        return [AgentEvent(INFO, _preview(f"{kind}: {json.dumps(rest, ensure_ascii=False)}"))]


def _has_flag(args: tuple[str, ...], flags: tuple[str, ...]) -> bool:
    return any(arg in flags or arg.startswith(tuple(f"{f}=" for f in flags)) for arg in args)


def check_args(args: tuple[str, ...]) -> None:
    """Refuse ``agent.codex_args`` that would replace the system prompt's channel.

    Raises:
        UsageError: a ``-p``/``--profile`` or a ``-c`` that sets an instructions setting.
    """
    if _has_flag(args, ("-p", "--profile")):
        raise UsageError(
            "agent.codex_args: -p/--profile is promptdeck's channel for the system prompt; "
            "put those settings in -c options instead"
        )
    for index, arg in enumerate(args):
        value = arg.split("=", 1)[1] if arg.startswith("--config=") else None
        if arg in ("-c", "--config") and index + 1 < len(args):
            value = args[index + 1]
        if value is not None and value.split("=", 1)[0].strip() in _OVERRIDING_KEYS:
            raise UsageError(
                f"agent.codex_args: -c {value.split('=', 1)[0].strip()} would replace "
                "promptdeck's system prompt; edit the rules file or the templates instead"
            )


class CodexAgent:
    """The ``codex`` backend."""

    name = "codex"
    stream_format = "jsonl"

    def __init__(self, config: Config, environ: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.home = codex_home(environ)

    def launch(self, request: LaunchRequest) -> LaunchSpec:
        """``codex exec --json -s MODE [args] -p PROFILE -`` (or ``… resume THREAD -``).

        Raises:
            UsageError: a trusted project's ``.codex/config.toml`` or ``codex_args`` would
                replace the system prompt.
        """
        args = self.config.agent_codex_args
        check_args(args)
        argv = [codex_binary(self.config), "exec", "--json"]
        sandbox = self.config.agent_codex_sandbox
        if sandbox and not _has_flag(args, _SANDBOX_FLAGS):
            argv += ["-s", sandbox]
        argv += args
        argv += [f"--image={path}" for path in request.images]
        if request.resume_session:
            # The thread replays the first turn's developer instructions by itself.
            argv += ["resume", request.resume_session, "-"]
            return LaunchSpec(
                argv=tuple(argv),
                cwd=request.root,
                stdin=request.user_file.read_bytes(),
                system_channel="kept by the resumed Codex thread (not sent again)",
            )
        warnings: list[str] = []
        for override in project_overrides(request.root, self.home):
            if override.trusted:
                raise UsageError(override.message())
            warnings.append(override.message())
        profile = request.run_dir / PROFILE_FILE
        system = request.system_file.read_bytes().decode("utf-8")
        profile.write_text(profile_text(system), encoding="utf-8")
        name = profile_name(request.run_dir.name)
        argv += ["-p", name, "-"]
        home, target = self.home, profile.resolve()

        def scope() -> contextlib.AbstractContextManager[Path]:
            return linked_profile(home, name, target)

        return LaunchSpec(
            argv=tuple(argv),
            cwd=request.root,
            stdin=request.user_file.read_bytes(),
            scope=scope,
            system_channel=f"developer instructions via profile {name} ({PROFILE_FILE})",
            warnings=tuple(warnings),
        )

    def output_parser(self) -> CodexJsonParser:
        """A fresh JSONL parser that reads the last call's usage from Codex's rollout file."""
        return CodexJsonParser(self.config.agent_codex_context_window, self.home)
