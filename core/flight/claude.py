"""Claude Code's turn list: its ``stream-json`` output, joined with its session transcript.

The stream (``--output-format stream-json --verbose``): an ``assistant`` line per content block
of an answer, each with the answer's ``message.id`` and ``message.usage``
(``input_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``,
``output_tokens``); a subagent's lines carry the ``parent_tool_use_id`` of the ``Task`` call
that started it; tool results come back as ``user`` lines of ``tool_result`` blocks (a file
read also as ``tool_use_result.file.content``); the ``system``/``init`` line names the session
and the client's version; the ``result`` line the whole run's usage.

The transcript (``~/.claude/projects/<cwd with every other character a dash>/<session>.jsonl``,
or under ``CLAUDE_CONFIG_DIR``) adds when each answer came (``timestamp``). It is joined only
when every line of it belongs to the session and it was read whole; otherwise the list is the
stream's alone, and says why. Each subagent keeps a transcript of its own
(``<session>/subagents/agent-<id>.jsonl``, its ``.meta.json`` naming the ``toolUseId`` of the
call that started it): the stream leaves out a subagent's last answer, so a whole one of the
session replaces the subagent's requests as the stream had them. The ``result`` line's usage
covers the main thread's requests only (measured with Claude Code 2.1.197).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ..project.textfiles import read_text
from .drafts import Threads, counts, freeze, text_of
from .lines import TRANSCRIPT_CAP, JsonLines, json_lines
from .model import TurnList

FIELDS = (
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
)
"""The usage keys, in the order of :data:`~.model.USAGE_FIELDS`."""
_SESSION = re.compile(r"[A-Za-z0-9-]{1,100}")


def _file_text(line: Mapping[str, Any]) -> str | None:
    result = line.get("tool_use_result")
    file = result.get("file") if isinstance(result, dict) else None
    content = file.get("content") if isinstance(file, dict) else None
    return content if isinstance(content, str) else None


def _assistant(threads: Threads, line: Mapping[str, Any]) -> None:
    message = line.get("message")
    if not isinstance(message, dict):
        return
    parent = line.get("parent_tool_use_id")
    thread = parent if isinstance(parent, str) and parent else None
    draft = threads.open(thread, str(message.get("id") or ""))
    draft.model = str(message.get("model") or draft.model)
    usage, notes = counts(message.get("usage"), FIELDS)
    # Every line of one answer repeats its usage; the last is the whole answer's.
    draft.usage, draft.notes = usage, [n for n in draft.notes if not n.startswith("usage ")] + notes
    for block in message.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "tool_use":
            threads.call(
                draft, str(block.get("id") or ""), str(block.get("name")), block.get("input")
            )


def _user(threads: Threads, line: Mapping[str, Any]) -> None:
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    parent = line.get("parent_tool_use_id")
    thread = parent if isinstance(parent, str) and parent else None
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    for block in results:
        file_text = _file_text(line) if len(results) == 1 else None
        text = text_of(block.get("content"))
        threads.result(thread, str(block.get("tool_use_id") or ""), text, file_text)


def read_stream(events: Iterable[Mapping[str, Any]]) -> tuple[Threads, dict[str, Any]]:
    """The drafts of a Claude Code stream, and what its ``init`` and ``result`` lines said
    (``session``, ``version``, ``reported``)."""
    threads = Threads()
    said: dict[str, Any] = {}
    for line in events:
        kind = line.get("type")
        if kind == "assistant":
            _assistant(threads, line)
        elif kind == "user":
            _user(threads, line)
        elif kind == "system" and line.get("subtype") == "init":
            said["session"] = line.get("session_id")
            said["version"] = line.get("claude_code_version")
        elif kind == "result":
            usage, _ = counts(line.get("usage"), FIELDS)
            said["reported"] = usage
            said.setdefault("session", line.get("session_id"))
    return threads, said


def transcript_path(cwd: str, session: str, environ: Mapping[str, str]) -> tuple[Path, Path]:
    """The client folder and the transcript of ``session`` run in ``cwd``."""
    base = environ.get("CLAUDE_CONFIG_DIR") or str(
        Path(environ.get("HOME") or "~").expanduser() / ".claude"
    )
    folder = Path(base) / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd)
    return folder, folder / f"{session}.jsonl"


def _epoch(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def join_transcript(threads: Threads, path: Path, folder: Path, session: str) -> str | None:
    """Add each answer's time from the transcript; None when joined, else why it was not."""
    seen = JsonLines()
    times: dict[str, float] = {}
    for line in json_lines(path, folder, seen, cap=TRANSCRIPT_CAP):
        owner = line.get("sessionId")
        if owner is not None and owner != session:
            return "transcript is another session's"
        message = line.get("message")
        at = _epoch(line.get("timestamp"))
        if line.get("type") == "assistant" and isinstance(message, dict) and at is not None:
            times.setdefault(str(message.get("id") or ""), at)
    if seen.problem is not None:
        return f"transcript {seen.problem.reason}" + (
            f" ({seen.problem.detail})" if seen.problem.detail else ""
        )
    if seen.cut or seen.malformed or seen.long_lines:
        return "transcript cut or malformed"
    if not times:
        return "transcript holds no answer of this session"
    for drafts in threads.drafts.values():
        for draft in drafts:
            draft.at = times.get(draft.id, draft.at)
    return None


SUBAGENTS_MAX = 500
"""The most subagent transcripts of one session read."""


def _subagent_transcripts(folder: Path, session: str) -> list[tuple[str, Path]]:
    """Each subagent transcript of ``session`` with the call that started it (its
    ``agent-<id>.meta.json`` names it as ``toolUseId``), in name order."""
    where = folder / session / "subagents"
    try:
        names = sorted(e.name for e in os.scandir(where) if e.name.endswith(".meta.json"))
    except OSError:
        return []
    found: list[tuple[str, Path]] = []
    for name in names[:SUBAGENTS_MAX]:
        text = read_text(where / name, folder.resolve(), limit=64 * 1024)
        try:
            meta = json.loads(text) if isinstance(text, str) else None
        except (ValueError, RecursionError):
            meta = None
        call = meta.get("toolUseId") if isinstance(meta, dict) else None
        if isinstance(call, str) and call:
            found.append((call, where / (name.removesuffix(".meta.json") + ".jsonl")))
    return found


def join_subagents(threads: Threads, folder: Path, session: str) -> list[str]:
    """Each subagent's requests from its own transcript, where it is whole and the session's
    (the stream leaves out a subagent's last answer); notes for those left as the stream had
    them."""
    notes: list[str] = []
    for call, path in _subagent_transcripts(folder, session):
        if call not in threads.calls:
            continue
        seen = JsonLines()
        own = Threads()
        foreign = False
        for line in json_lines(path, folder, seen, cap=TRANSCRIPT_CAP):
            if line.get("sessionId") not in (None, session):
                foreign = True
                break
            line = {**line, "parent_tool_use_id": call}
            if line.get("type") == "assistant":
                _assistant(own, line)
                at = _epoch(line.get("timestamp"))
                own.drafts[call][-1].at = at
            elif line.get("type") == "user":
                _user(own, line)
        if foreign or seen.problem or seen.cut or seen.malformed or not own.drafts.get(call):
            notes.append(
                f"subagent {call}: its transcript left out; its requests as the stream had them"
            )
            continue
        threads.drafts[call] = own.drafts[call]
        threads.calls.update(own.calls)
        threads.prompts.update(own.prompts)
        if call not in threads.order:
            threads.order.append(call)
    return notes


def claude_turns(
    events: Iterable[Mapping[str, Any]],
    *,
    cwd: str | None,
    environ: Mapping[str, str] | None = None,
    stream_notes: Iterable[str] = (),
) -> TurnList:
    """Claude Code's turn list from its stream's events, with its transcript where one is."""
    threads, said = read_stream(events)
    notes = list(stream_notes)
    sources = ["stream"]
    session = said.get("session")
    if not isinstance(session, str) or not _SESSION.fullmatch(session) or not cwd:
        notes.append(
            "no session id or working folder in the record: turn list from the stream alone"
        )
    else:
        env = os.environ if environ is None else environ
        folder, path = transcript_path(cwd, session, env)
        why = join_transcript(threads, path, folder, session)
        if why is None:
            sources.append("transcript")
            notes.extend(join_subagents(threads, folder, session))
        else:
            notes.append(f"{why}: turn list from the stream alone")
    requests, orphan_notes = freeze(threads, FIELDS)
    version = said.get("version")
    reported = said.get("reported") or {}
    return TurnList(
        agent="claude",
        format="claude-code stream-json "
        + (str(version)[:40] if isinstance(version, str) else "(version not stated)"),
        sources=tuple(sources),
        requests=requests,
        notes=tuple(notes + orphan_notes),
        reported={
            "input_tokens": reported.get(FIELDS[0]),
            "cache_read_tokens": reported.get(FIELDS[1]),
            "cache_write_tokens": reported.get(FIELDS[2]),
            "output_tokens": reported.get(FIELDS[3]),
        }
        if reported
        else {},
    )
