"""The offline ``replay`` agent: a scripted stand-in for a real coding agent.

It runs as a real subprocess (``python -m promptdeck.core.agents.replay_main``), so the runner
path is the one real agents take. For each phase it prints a realistic transcript in Claude
Code's stream-json format — reading the story, planning, tool calls and their results, test
output — with short pauses (``agent.replay_delay``), does the phase's work in the workspace
(dev appends a ``## Dev Agent Record`` to the story file and writes a small source file; review,
kickoff and failure analysis append their records; UAT and retro write new files under
``docs/``), and ends with the phase's success signal.

The script (config ``agent.replay_script`` or ``run --replay-script``) changes outcomes per
phase: ``dev=blocked,review=fail``. Outcomes: ``ok``, ``blocked`` / ``fail`` (the phase's
failure signal), ``nosignal`` (ends without a signal), ``quoted`` (mentions signals only inside
sentences and tool results), ``crash`` (exits 3 without a signal), ``hang`` (never ends; stops
on SIGINT) and ``hang-hard`` (ignores SIGINT and SIGTERM). ``dev=blocked:1`` applies to the
first attempt only; later attempts succeed.
"""

from __future__ import annotations

import sys

from ..errors import UsageError
from ..project.config import Config
from .base import LaunchRequest, LaunchSpec
from .claude import StreamJsonParser

OUTCOMES = ("ok", "blocked", "fail", "nosignal", "quoted", "crash", "hang", "hang-hard")
PHASES = ("kickoff", "dev", "review", "failure", "uat", "retro", "chat")
ENTRY_MODULE = "promptdeck.core.agents.replay_main"


def parse_script(script: str) -> dict[str, tuple[str, int | None]]:
    """``dev=blocked:1,review=fail`` → ``{"dev": ("blocked", 1), "review": ("fail", None)}``.

    Raises:
        UsageError: a malformed entry, an unknown phase or outcome.
    """
    entries: dict[str, tuple[str, int | None]] = {}
    for raw in script.split(","):
        item = raw.strip()
        if not item:
            continue
        phase, sep, rest = item.partition("=")
        outcome, _, count = rest.strip().partition(":")
        phase, outcome = phase.strip(), outcome.strip()
        if not sep or phase not in PHASES or outcome not in OUTCOMES:
            raise UsageError(
                f"replay script {item!r}: expected PHASE=OUTCOME[:N] with PHASE one of "
                f"{', '.join(PHASES)} and OUTCOME one of {', '.join(OUTCOMES)}"
            )
        if count and not count.strip().isdigit():
            raise UsageError(f"replay script {item!r}: N must be a whole number of attempts")
        entries[phase] = (outcome, int(count) if count else None)
    return entries


def outcome_for(script: str, phase: str, attempt: int) -> str:
    """The outcome the script gives ``phase`` at ``attempt`` (``ok`` when it says nothing)."""
    outcome, attempts = parse_script(script).get(phase, ("ok", None))
    if attempts is not None and attempt > attempts:
        return "ok"
    return outcome


class ReplayAgent:
    """The ``replay`` backend."""

    name = "replay"
    stream_format = "jsonl"

    def __init__(self, config: Config, *, script: str | None = None) -> None:
        self.config = config
        self.script = config.agent_replay_script if script is None else script
        parse_script(self.script)

    def launch(self, request: LaunchRequest) -> LaunchSpec:
        """``python -m promptdeck.core.agents.replay_main`` with the run's details on argv."""
        # A chat turn (turn 1 on) resumes to talk; turn 0 resumes an interrupted phase run.
        phase = "chat" if request.resume_session and request.turn else request.phase
        # -P: the project root (the process's cwd) is not put on the import path, so a
        # repository's own json.py or promptdeck/ package is never imported by the simulation.
        argv = [
            sys.executable,
            "-P",
            "-m",
            ENTRY_MODULE,
            "--phase",
            request.phase,
            "--story",
            request.story_id,
            "--story-file",
            request.story_path or "",
            "--epic",
            request.epic,
            "--root",
            str(request.root),
            "--user-file",
            str(request.user_file),
            "--system-file",
            str(request.system_file),
            "--outcome",
            outcome_for(self.script, phase, request.attempt),
            "--attempt",
            str(request.attempt),
            "--delay",
            str(self.config.agent_replay_delay),
        ]
        if request.resume_session:
            argv += ["--resume", request.resume_session, "--turn", str(request.turn)]
        return LaunchSpec(
            argv=tuple(argv),
            cwd=request.root,
            env={"PYTHONUNBUFFERED": "1"},
            stdin=None,
        )

    def output_parser(self) -> StreamJsonParser:
        """Replay prints Claude Code's stream-json, so it shares that parser and its window
        (``agent.claude_context_window``, whose default is Claude's in
        :data:`~promptdeck.core.client_loads.CLIENT_WINDOWS`)."""
        return StreamJsonParser(self.config.agent_claude_context_window)
