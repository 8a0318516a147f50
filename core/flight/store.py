"""A run's turn list, built from its record and kept in its folder as ``turns.json``.

:func:`build_turns` reads the run's ``stream.jsonl`` through the bounded line reader (and the
client's transcript, read only, inside the client's own folder under the home at call time);
:func:`write_turns` keeps the list atomically, through the state-folder rules (a symlinked run
folder or file is refused, as every writer under ``.promptdeck/`` refuses it);
:func:`turns_of` answers the kept list while it is newer than the stream, else builds and keeps
a fresh one.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..atomic import write_whole
from ..project.state_folder import check_state_path
from ..project.textfiles import TextProblem, read_json_object
from .claude import claude_turns
from .codex import codex_turns
from .lines import JsonLines, json_lines
from .model import TurnList

TURNS_FILE = "turns.json"
STREAM_FILE = "stream.jsonl"
TURNS_MAX_BYTES = 64 * 1024 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def build_turns(
    run_dir: Path,
    root: Path,
    agent: str,
    cwd: str | None,
    environ: Mapping[str, str] | None = None,
) -> TurnList:
    """The turn list of the run in ``run_dir`` (of the project ``root``) for ``agent``: Codex's
    events for ``codex``, Claude Code's for every other agent."""
    seen = JsonLines()
    events = json_lines(run_dir / STREAM_FILE, root, seen)
    if agent == "codex":
        turns = codex_turns(events, environ=environ)
    else:
        turns = claude_turns(events, cwd=cwd, environ=environ)
    notes = list(seen.notes)
    if seen.problem is not None:
        notes.insert(0, f"{STREAM_FILE}: {seen.problem}")
    elif seen.cut:
        notes.append(f"{STREAM_FILE}: its last line is cut")
    if not notes:
        return turns
    return TurnList(
        turns.agent,
        turns.format,
        turns.sources,
        turns.requests,
        (*notes, *turns.notes),
        turns.reported,
    )


def write_turns(run_dir: Path, root: Path, turns: TurnList) -> Path:
    """Keep ``turns`` as ``run_dir/turns.json``, atomically; its path.

    Raises:
        StateLinkRefused: the run folder, a folder above it or the file is a symlink (exit 2).
        OSError: it could not be written.
    """
    path = run_dir / TURNS_FILE
    check_state_path(root, path)
    write_whole(path, json.dumps(turns.to_dict(), indent=1, ensure_ascii=False) + "\n")
    return path


def read_turns(run_dir: Path, root: Path) -> TurnList | None:
    """The kept turn list, or None when there is none or it cannot be read."""
    data = read_json_object(run_dir / TURNS_FILE, root.resolve(), limit=TURNS_MAX_BYTES)
    return None if isinstance(data, TextProblem) else TurnList.from_dict(data)


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime
    except OSError:
        return None


def turns_of(
    run_dir: Path,
    root: Path,
    agent: str,
    cwd: str | None,
    *,
    keep: bool = True,
    environ: Mapping[str, str] | None = None,
) -> TurnList:
    """The run's turn list: the kept one while it is newer than the stream, else built (and
    kept when ``keep``; a write that fails leaves it unkept).

    Raises:
        StateLinkRefused: the run folder or ``turns.json`` is a symlink (exit 2).
    """
    kept_at, stream_at = _mtime(run_dir / TURNS_FILE), _mtime(run_dir / STREAM_FILE)
    if kept_at is not None and (stream_at is None or kept_at >= stream_at):
        kept = read_turns(run_dir, root)
        if kept is not None:
            return kept
    turns = build_turns(run_dir, root, agent, cwd, environ)
    if keep:
        with contextlib.suppress(OSError):
            write_turns(run_dir, root, turns)
    return turns
