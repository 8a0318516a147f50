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
the workspace; Codex keeps ``.git`` read-only inside it. When the phase has files it may not
write (:attr:`LaunchRequest.protected_paths`), the profile instead selects a permission profile
that is the same workspace access with those files read-only (:func:`.codex_profile.guard_text`)
and no ``-s`` is passed (``--sandbox`` would override it); a resumed turn gets a profile holding
only that part. Where that cannot apply — a sandbox flag or setting in ``agent.codex_args``, a
sandbox other than ``workspace-write`` — one warning says Codex will not refuse those writes;
the run's check after the phase still puts them back.

The stream: ``thread.started`` (the thread id, our session id), ``item.completed`` items
(``agent_message`` text is the agent's own; ``command_execution``, ``file_change``,
``mcp_tool_call``, ``web_search`` are tool use and results; ``reasoning``, ``todo_list`` and any
other item are shown), ``turn.completed`` with the turn's summed usage, ``turn.failed`` and
top-level ``error`` (a transient "Reconnecting… n/5" is shown, not taken for a failure). Context
use comes from the last model call, which only the session's rollout file
(``$CODEX_HOME/sessions/…/rollout-…-<thread>.jsonl``, its last ``token_count``) records.

This module builds the launch; the profile and the project settings that could override it
are :mod:`.codex_profile`'s, the stream's parser is :mod:`.codex_stream`'s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path

from ..errors import UsageError
from ..project.config import Config
from .base import LaunchRequest, LaunchSpec, check_session_id
from .codex_profile import (
    MOST_GUARDED_PATHS,
    OVERRIDING_KEYS,
    PROFILE_FILE,
    codex_home,
    guard_text,
    linked_profile,
    profile_name,
    profile_text,
    project_overrides,
)
from .codex_stream import CodexJsonParser
from .programs import codex_binary

_SANDBOX_FLAGS = ("-s", "--sandbox", "--dangerously-bypass-approvals-and-sandbox")


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
        if value is not None and value.split("=", 1)[0].strip() in OVERRIDING_KEYS:
            raise UsageError(
                f"agent.codex_args: -c {value.split('=', 1)[0].strip()} would replace "
                "promptdeck's system prompt; edit the rules file or the templates instead"
            )


_SANDBOX_SETTINGS = ("sandbox", "default_permissions", "permissions", "permission_profile")
"""``-c`` settings of ``codex_args`` that choose the sandbox themselves."""


def _sets_sandbox(args: tuple[str, ...]) -> bool:
    """Whether ``codex_args`` choose the sandbox (a flag, or a ``-c`` setting of it)."""
    if _has_flag(args, _SANDBOX_FLAGS):
        return True
    for index, arg in enumerate(args):
        value = arg.split("=", 1)[1] if arg.startswith("--config=") else None
        if arg in ("-c", "--config") and index + 1 < len(args):
            value = args[index + 1]
        key = "" if value is None else value.split("=", 1)[0].strip()
        if key.startswith(_SANDBOX_SETTINGS):
            return True
    return False


def _unguarded_warning(count: int, why: str) -> str:
    return (
        f"codex: {count} protected file(s) stay writable for the agent ({why}); promptdeck "
        "still checks and restores them after the phase"
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
        warnings: list[str] = []
        guard = self._guard(request, args, warnings)
        if sandbox and not _has_flag(args, _SANDBOX_FLAGS) and not guard:
            argv += ["-s", sandbox]
        argv += args
        argv += [f"--image={path}" for path in request.images]
        if request.resume_session:
            thread = check_session_id(request.resume_session)
            # The thread replays the first turn's developer instructions by itself: a profile
            # carries only the guard, when there is one.
            if not guard:
                argv += ["resume", thread, "-"]
                return LaunchSpec(
                    argv=tuple(argv),
                    cwd=request.root,
                    stdin=request.user_file.read_bytes(),
                    system_channel="kept by the resumed Codex thread (not sent again)",
                    warnings=tuple(warnings),
                )
            name, scope = self._profile(request, guard)
            return LaunchSpec(
                argv=(*argv, "-p", name, "resume", thread, "-"),
                cwd=request.root,
                stdin=request.user_file.read_bytes(),
                scope=scope,
                system_channel="kept by the resumed Codex thread (not sent again)",
                warnings=tuple(warnings),
            )
        for override in project_overrides(request.root, self.home):
            if override.trusted:
                raise UsageError(override.message())
            warnings.append(override.message())
        system = request.system_file.read_bytes().decode("utf-8")
        name, scope = self._profile(request, profile_text(system) + guard)
        argv += ["-p", name, "-"]
        return LaunchSpec(
            argv=tuple(argv),
            cwd=request.root,
            stdin=request.user_file.read_bytes(),
            scope=scope,
            system_channel=f"developer instructions via profile {name} ({PROFILE_FILE})",
            warnings=tuple(warnings),
        )

    def _guard(self, request: LaunchRequest, args: tuple[str, ...], warnings: list[str]) -> str:
        """The profile's permission part for the protected files ("" for none), noting in
        ``warnings`` the files Codex will not refuse to write."""
        protected = request.protected_paths
        if not protected:
            return ""
        sandbox = self.config.agent_codex_sandbox
        if _sets_sandbox(args):
            warnings.append(_unguarded_warning(len(protected), "agent.codex_args set the sandbox"))
            return ""
        if sandbox != "workspace-write":
            if sandbox != "read-only":  # read-only: nothing is writable anyway
                shown = sandbox or "Codex's own default"
                warnings.append(_unguarded_warning(len(protected), f"sandbox {shown}"))
            return ""
        text, left_out = guard_text(request.root, protected)
        if left_out:
            shown = ", ".join(repr(path) for path in left_out[:3])
            more = ", …" if len(left_out) > 3 else ""
            why = (
                f"{shown}{more}: a glob character, a folder that does not exist yet, not a "
                f"root-relative path, or past the first {MOST_GUARDED_PATHS:,}"
            )
            warnings.append(_unguarded_warning(len(left_out), why))
        return text

    def _profile(
        self, request: LaunchRequest, text: str
    ) -> tuple[str, Callable[[], contextlib.AbstractContextManager[Path]]]:
        """Write ``text`` as the run's profile; its ``-p`` name and the scope that links it
        into ``CODEX_HOME`` while the process runs."""
        profile = request.run_dir / PROFILE_FILE
        profile.write_text(text, encoding="utf-8")
        name = profile_name(request.run_dir.name)
        home, target = self.home, profile.resolve()

        def scope() -> contextlib.AbstractContextManager[Path]:
            return linked_profile(home, name, target)

        return name, scope

    def output_parser(self) -> CodexJsonParser:
        """A fresh JSONL parser that reads the last call's usage from Codex's rollout file."""
        return CodexJsonParser(self.config.agent_codex_context_window, self.home)
