"""Claude Code, the real CLI, driven headless with ``--output-format stream-json``.

The launch: ``claude -p --output-format stream-json --verbose --append-system-prompt-file
<run>/system.md [--model M] [permission args] [--settings <run>/claude-settings.json]
[--resume SESSION]`` with the user message on stdin. The system prompt file is passed on every
call, resumed ones too: the CLI does not keep an appended system prompt across ``--resume``.

Files the phase may not write (:attr:`LaunchRequest.protected_paths`) become deny rules in a
settings file of the run's own, passed with ``--settings`` (also on every call: a resumed turn
starts a new process that reads its settings again). Measured with Claude Code 2.1.197:

- One ``Edit(//<absolute path>)`` rule refuses the ``Edit`` *and* the ``Write`` tool before
  they run (Claude Code documents ``Edit`` rules as covering all its file-editing tools, so
  ``NotebookEdit`` too), in every permission mode, ``bypassPermissions`` included; the model
  gets an error tool result ("File is in a directory that is denied by your permission
  settings"). A ``Write(…)`` rule alone does not stop the ``Write`` tool; it is written too,
  for clients that honour it. ``MultiEdit`` no longer exists in that version.
- ``/path`` would be relative to the *settings file's* folder (the run folder), not the project,
  and a bare ``path`` matches that name in every folder: so the rules name absolute paths
  (``//`` + the root, and the root with its links resolved when that differs).
- The path is a gitignore-style pattern inside a rule: ``\\``, ``*``, ``[``, ``]``, ``!``, ``#``
  and trailing spaces are escaped with a backslash for the pattern, then ``\\``, ``(`` and ``)``
  for the rule, as Claude Code escapes its own rules. ``?`` has no escape that matches it (``\\?``
  and ``[?]`` match nothing; a bare ``?`` matches any character), so a path holding ``?``, or a
  control character, is left out of the rules with one warning.

What the rules do not cover: ``Bash`` (``sed -i``, ``>``, ``git checkout``, a script the agent
writes and runs) writes wherever the process may, and MCP tools are not file tools. That is why
the run also compares every protected file byte for byte after the phase and restores it.

The stream: one JSON object a line — ``system``/``init`` (session id, model), ``assistant``
messages whose content blocks are ``text`` and ``tool_use``, ``user`` messages carrying
``tool_result`` blocks, and a final ``result`` (result text, ``total_cost_usd``, cumulative
``usage``). Context use is the latest assistant message's input + cache-read + cache-creation
tokens over the configured window; the ``result`` totals add up every call, so they are not.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

from ..client_loads import CLAUDE_STABLE_PREFIX_FLAG, CLAUDE_STABLE_PREFIX_SINCE, version_at_least
from ..processes import resolve_program
from ..project.config import Config
from ..project.images import sniff
from ..project.plan_location import SPRINT_STATUS_NAMES
from ..units import reported_cost
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
    check_session_id,
    fast_factory,
    make_event,
    tool_preview,
)
from .programs import claude_binary

_usage = fast_factory(Usage)
_decode = json.JSONDecoder().decode


def usage_from(data: Any) -> Usage | None:
    """A :class:`Usage` from an Anthropic ``usage`` object."""
    if not isinstance(data, dict):
        return None
    values = [
        data.get(key)
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    ]
    i, o, r, c = (v if isinstance(v, int) else 0 for v in values)
    return _usage(input_tokens=i, output_tokens=o, cache_read_tokens=r, cache_creation_tokens=c)


def _tool_result_text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


class StreamJsonParser:
    """Parses Claude Code's stream-json lines (also what the replay agent prints)."""

    def __init__(self, context_window: int) -> None:
        self.context_window = context_window
        self._last_message_text: str | None = None
        self._last_raw_usage: Any = None

    def parse(self, line: str) -> list[AgentEvent]:
        """Events for one line; a line that is not a JSON object is shown as it is."""
        stripped = line.strip()
        if not stripped:
            return []
        if stripped[0] != "{":
            return [make_event(kind=INFO, text=line)]
        try:
            data = _decode(stripped)
        except ValueError:
            return [make_event(kind=INFO, text=line)]
        if not isinstance(data, dict):
            return [make_event(kind=INFO, text=line)]
        kind = data.get("type")
        if kind == "assistant":
            return self._assistant(data)
        if kind == "user":
            return self._user(data)
        if kind == "result":
            return self._result(data)
        if kind == "system":
            if data.get("subtype") == "init":
                session = data.get("session_id")
                model = data.get("model")
                return [
                    AgentEvent(
                        SESSION,
                        f"session {session} · model {model}",
                        session_id=session if isinstance(session, str) else None,
                        model=model if isinstance(model, str) else None,
                    )
                ]
            return []
        return []

    def _assistant(self, data: dict[str, Any]) -> list[AgentEvent]:
        message = data.get("message")
        if not isinstance(message, dict):
            return []
        events: list[AgentEvent] = []
        texts: list[str] = []
        for block in message.get("content") or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                text = str(block.get("text", ""))
                texts.append(text)
                events.append(make_event(kind=TEXT, text=text))
            elif block.get("type") == "tool_use":
                name = block.get("name", "tool")
                events.append(
                    make_event(kind=TOOL_USE, text=f"{name}: {tool_preview(block.get('input'))}")
                )
        if texts:
            self._last_message_text = "\n".join(texts)
        raw_usage = message.get("usage")
        # Each content block of one message arrives as its own line with the same usage:
        # only a new usage is news.
        if raw_usage == self._last_raw_usage:
            return events
        self._last_raw_usage = raw_usage
        usage = usage_from(raw_usage)
        if usage is not None and usage.context_tokens:
            events.append(
                make_event(
                    kind=USAGE,
                    usage=usage,
                    context_tokens=usage.context_tokens,
                    context_window=self.context_window,
                )
            )
        return events

    def _user(self, data: dict[str, Any]) -> list[AgentEvent]:
        message = data.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            return []
        return [
            make_event(kind=TOOL_RESULT, text=tool_preview(_tool_result_text(block.get("content"))))
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]

    def _result(self, data: dict[str, Any]) -> list[AgentEvent]:
        events: list[AgentEvent] = []
        text = data.get("result")
        # The result text repeats the last assistant message: read it only when it is new,
        # so a signal is not recorded twice.
        if (
            isinstance(text, str)
            and text
            and text.strip() != (self._last_message_text or "").strip()
        ):
            events.append(AgentEvent(TEXT, text))
        cost = data.get("total_cost_usd")
        session = data.get("session_id")
        is_error = bool(data.get("is_error"))
        subtype = data.get("subtype")
        events.append(
            AgentEvent(
                RESULT,
                # The process's own verdict, not the phase's: the signal decides the phase.
                f"agent process ended: {subtype}" + (" (error)" if is_error else ""),
                session_id=session if isinstance(session, str) else None,
                usage=usage_from(data.get("usage")),
                # Kept as reported (an int too large for a float is infinite): every face
                # shows an implausible cost as invalid and no sum counts it.
                cost_usd=reported_cost(cost),
                is_error=is_error,
            )
        )
        return events


def stream_json_message(text: str, images: tuple[Path, ...]) -> bytes:
    """The user message as one ``--input-format stream-json`` line: the text first, then each
    image as a base64 ``image`` block."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for path in images:
        data = path.read_bytes()
        content.append(
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": sniff(data[:16]) or "application/octet-stream",
                    "data": base64.b64encode(data).decode("ascii"),
                },
            }
        )
    line = {"type": "user", "message": {"role": "user", "content": content}}
    return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")


SETTINGS_FILE = "claude-settings.json"
"""The run's own Claude Code settings (the deny rules of its protected files)."""

MOST_RULED_PATHS = 2_000
"""The most protected files named in one run's deny rules: Claude Code checks every rule on
every file tool call (measured with 2.1.197: 4,000 rules made a short run 1 s slower), and a
plan of thousands of stories would otherwise make a settings file of megabytes. The sprint
status comes first; the rest are left to the check after the phase, with one warning."""

_PATTERN_SPECIAL = frozenset("\\*[]!#")
"""Characters of Claude Code's gitignore-style path patterns that a backslash makes literal."""


def _rule_escape(content: str) -> str:
    """``content`` as the inside of ``Tool(…)``: Claude Code's own escape of its rules."""
    return content.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _literal_pattern(path: str) -> str | None:
    """``path`` as a path pattern matching exactly that file; None when no pattern can (a
    ``?`` or a control character)."""
    if "?" in path or any(ord(char) < 0x20 or ord(char) == 0x7F for char in path):
        return None
    escaped = "".join(f"\\{char}" if char in _PATTERN_SPECIAL else char for char in path)
    body = escaped.rstrip(" ")
    # A pattern's trailing spaces are dropped unless escaped.
    return body + "\\ " * (len(escaped) - len(body))


def _root_forms(root: Path) -> list[str]:
    """The root as Claude Code may see a file's path: as given and with its links resolved."""
    given = os.path.abspath(root)
    forms = [given]
    with contextlib.suppress(OSError, RuntimeError):
        resolved = str(Path(given).resolve())
        if resolved != given:
            forms.append(resolved)
    return forms


def _relative_path(path: str) -> str | None:
    """``path`` as a plain root-relative path, or None when it is not one."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or pure.parts in ((), (".",)):
        return None
    return pure.as_posix()


def deny_rules(root: Path, protected: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Claude Code's deny rules that refuse edits of ``protected`` (root-relative paths), and
    the paths no rule can name (left to the check after the phase).

    Each path gets an ``Edit(//<absolute>)`` and a ``Write(//<absolute>)`` rule for each form
    of the root (:func:`_root_forms`).
    """
    rules: list[str] = []
    left_out: list[str] = []
    forms = _root_forms(root)
    named = 0
    # The sprint status first: when the rules cannot name every file, they name that one.
    ordered = sorted(
        dict.fromkeys(protected),
        key=lambda path: PurePosixPath(path).name not in SPRINT_STATUS_NAMES,
    )
    for raw in ordered:
        relative = _relative_path(raw)
        patterns = (
            None
            if relative is None or named >= MOST_RULED_PATHS
            else [_literal_pattern(f"{form.rstrip('/')}/{relative}") for form in forms]
        )
        if patterns is None or None in patterns:
            left_out.append(raw)
            continue
        named += 1
        for pattern in dict.fromkeys(patterns):
            inside = _rule_escape(f"/{pattern}")
            rules += [f"Edit({inside})", f"Write({inside})"]
    return tuple(dict.fromkeys(rules)), tuple(left_out)


def settings_text(rules: tuple[str, ...]) -> str:
    """The settings file holding ``rules`` as deny rules."""
    return json.dumps({"permissions": {"deny": list(rules)}}, indent=2, ensure_ascii=False) + "\n"


def write_run_file(run_dir: Path, name: str, text: str) -> Path:
    """Write ``<run_dir>/<name>`` afresh, never through a symlink: a file left by an earlier
    dry run is removed first, and the new one is created exclusively (``O_EXCL``) without
    following links, so a link planted in its place fails rather than redirects the write."""
    path = run_dir / name
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o644), "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def left_out_warning(left_out: tuple[str, ...]) -> str:
    """The one line for protected paths no deny rule can name."""
    shown = ", ".join(repr(path) for path in left_out[:3]) + (", …" if len(left_out) > 3 else "")
    return (
        f"claude: {len(left_out)} protected file(s) cannot be named in a permission rule "
        f"({shown}: a '?', a control character, not a root-relative path, or past the first "
        f"{MOST_RULED_PATHS:,}); the client will not refuse edits to them, promptdeck still "
        "checks and restores them after the phase"
    )


_VERSIONS: dict[tuple[str, int], str | None] = {}
VERSION_TIMEOUT = 10.0
"""Seconds ``claude --version`` may take when a launch needs the version."""


def claude_version(program: str, root: Path | None) -> str | None:
    """``program --version``'s version number, asked once per program file (its path and
    modification time; found as a run finds it, ``root`` the project); None when it is
    missing, hangs or says none."""
    found = resolve_program(program, root)
    if found is None:
        return None
    try:
        key = (found, os.stat(found).st_mtime_ns)
    except OSError:
        return None
    if key not in _VERSIONS:
        try:
            done = subprocess.run(
                [found, "--version"],
                capture_output=True,
                timeout=VERSION_TIMEOUT,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            said = done.stdout[:4096].decode("utf-8", "replace").strip().split()
            _VERSIONS[key] = said[0] if said and said[0][:1].isdigit() else None
        except (OSError, subprocess.TimeoutExpired):
            _VERSIONS[key] = None
    return _VERSIONS[key]


def stable_prefix_switch(version: str | None) -> tuple[tuple[str, ...], str]:
    """The switch ``[agent] claude_stable_prefix`` adds for Claude Code ``version``, or the
    line saying why none is added (older than 2.1.98, or the version unknown)."""
    if version is not None and version_at_least(version, CLAUDE_STABLE_PREFIX_SINCE):
        return (CLAUDE_STABLE_PREFIX_FLAG,), ""
    since = ".".join(map(str, CLAUDE_STABLE_PREFIX_SINCE))
    return (), (
        f"claude: [agent] claude_stable_prefix needs Claude Code {since} or later "
        f"({'this is ' + version if version else 'its version is unknown'}): "
        f"{CLAUDE_STABLE_PREFIX_FLAG} not passed, its git status stays in the system prompt"
    )


class ClaudeAgent:
    """The ``claude`` backend.

    Args:
        config: the workspace's configuration.
        client_version: the Claude Code version, when the caller knows it (otherwise asked of
            the program when a setting depends on it).
    """

    name = "claude"
    stream_format = "jsonl"

    def __init__(self, config: Config, client_version: str | None = None) -> None:
        self.config = config
        self.client_version = client_version

    def launch(self, request: LaunchRequest) -> LaunchSpec:
        """``claude -p --output-format stream-json --verbose --append-system-prompt-file …``."""
        argv = [
            claude_binary(self.config),
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--append-system-prompt-file",
            str(request.system_file),
        ]
        if self.config.agent_claude_model:
            argv += ["--model", self.config.agent_claude_model]
        argv += list(self.config.agent_claude_args)
        warnings: list[str] = []
        if self.config.agent_claude_stable_prefix:
            version = self.client_version or claude_version(argv[0], request.root.resolve())
            switch, why = stable_prefix_switch(version)
            argv += switch
            if why:
                warnings.append(why)
        if request.protected_paths:
            rules, left_out = deny_rules(request.root, request.protected_paths)
            if left_out:
                warnings.append(left_out_warning(left_out))
            if rules:
                settings = write_run_file(request.run_dir, SETTINGS_FILE, settings_text(rules))
                argv += ["--settings", str(settings)]
        if request.resume_session:
            argv += ["--resume", check_session_id(request.resume_session)]
        stdin = request.user_file.read_bytes()
        if request.images:
            argv += ["--input-format", "stream-json"]
            stdin = stream_json_message(stdin.decode("utf-8"), request.images)
        return LaunchSpec(
            argv=tuple(argv),
            cwd=request.root,
            stdin=stdin,
            system_channel="--append-system-prompt-file (system.md)",
            warnings=tuple(warnings),
        )

    def output_parser(self) -> StreamJsonParser:
        """A stream-json parser using ``agent.claude_context_window``."""
        return StreamJsonParser(self.config.agent_claude_context_window)
