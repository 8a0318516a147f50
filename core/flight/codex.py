"""Codex's turn list: its ``exec --json`` events, joined with its session rollout.

The stream's ``turn.completed`` usage is the sum of every model call of the turn
(``input_tokens`` with the cached part inside, ``cached_input_tokens``,
``cache_write_input_tokens`` where reported, ``output_tokens``); ``item.completed`` items are
the commands run (``command_execution``: ``command``, ``aggregated_output``), patches and tool
calls. From the stream alone a turn is one entry, and the list says so.

The rollout (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl``) has one
``event_msg``/``token_count`` per model call (``info.last_token_usage``), the tool calls
(``response_item`` ``function_call``, ``custom_tool_call``, ``local_shell_call``) and their
outputs, and its ``session_meta`` names the thread and the CLI's version. Codex 0.171 writes
a call and its output before the ``token_count`` of the answer that made the call. Joined
only when it is the thread's, read whole and its calls add up to the stream's turns.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .drafts import Draft, Threads, counts, freeze
from .lines import TRANSCRIPT_CAP, JsonLines, json_lines
from .model import Addition, TurnList

FIELDS = ("plain_input", "cached_input_tokens", "cache_write_input_tokens", "output_tokens")
_THREAD = re.compile(r"[A-Za-z0-9-]{1,100}")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _usage(draft: Draft, usage: object) -> None:
    found, notes = counts(usage, ("input_tokens", "cached_input_tokens", "output_tokens"))
    data = usage if isinstance(usage, dict) else {}
    written, write_notes = (
        counts(data, ("cache_write_input_tokens",))
        if "cache_write_input_tokens" in data
        else ({"cache_write_input_tokens": 0}, [])
    )
    total, cached, wrote = (
        found["input_tokens"],
        found["cached_input_tokens"],
        written["cache_write_input_tokens"],
    )
    plain = None
    if total is not None and cached is not None and wrote is not None:
        plain = total - cached - wrote if total >= cached + wrote else None
        if plain is None:
            notes.append("usage cached tokens exceed input_tokens: unknown")
    draft.usage = {
        "plain_input": plain,
        "cached_input_tokens": cached,
        "cache_write_input_tokens": wrote,
        "output_tokens": found["output_tokens"],
    }
    draft.notes.extend(notes + write_notes)


def read_stream(events: Iterable[Mapping[str, Any]]) -> tuple[Threads, dict[str, Any]]:
    """The drafts of a Codex stream (one per turn), and its thread id (``session``)."""
    threads = Threads()
    said: dict[str, Any] = {}
    turn = 0
    for line in events:
        kind = line.get("type")
        item = line.get("item")
        if kind == "thread.started":
            said["session"] = line.get("thread_id")
        elif kind == "item.completed" and isinstance(item, dict):
            _item(threads, item)
        elif kind == "turn.completed":
            turn += 1
            _usage(threads.open(None, f"turn-{turn}"), line.get("usage"))
    return threads, said


def _item(threads: Threads, item: Mapping[str, Any]) -> None:
    kind = item.get("type")
    call_id = str(item.get("id") or "")
    if kind == "command_execution":
        threads.call(None, call_id, "shell", {"command": item.get("command")})
        output = item.get("aggregated_output")
        threads.result(None, call_id, output if isinstance(output, str) else "", None)
    elif kind == "file_change":
        paths = [c.get("path") for c in item.get("changes") or () if isinstance(c, dict)]
        threads.call(None, call_id, "patch", {"path": ", ".join(str(p) for p in paths)})
    elif kind == "mcp_tool_call":
        threads.call(
            None, call_id, f"{item.get('server')}.{item.get('tool')}", item.get("arguments")
        )
    elif kind == "web_search":
        threads.call(None, call_id, "web_search", {"query": item.get("query")})


def rollout_path(codex_home: Path, thread: str) -> tuple[Path, Path | None]:
    """The sessions folder and the newest rollout of ``thread`` in it (None when none)."""
    folder = codex_home / "sessions"
    found = sorted(folder.glob(f"[0-9]*/[0-9]*/[0-9]*/rollout-*-{thread}.jsonl"))
    return folder, found[-1] if found else None


def _arguments(payload: Mapping[str, Any]) -> Any:
    raw = payload.get("arguments", payload.get("input", payload.get("action")))
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return {"command": raw}
    return raw


def read_rollout(path: Path, folder: Path, thread: str) -> tuple[Threads, str] | str:
    """The drafts of a rollout (one per model call) and the CLI's version, or why not."""
    seen = JsonLines()
    threads = Threads()
    version = ""
    last_total: object = None
    outputs: list[Addition] = []
    for line in json_lines(path, folder, seen, cap=TRANSCRIPT_CAP):
        payload = line.get("payload")
        if not isinstance(payload, dict):
            continue
        kind, inner = line.get("type"), payload.get("type")
        if kind == "session_meta":
            if payload.get("id") not in (None, thread):
                return "rollout is another session's"
            version = str(payload.get("cli_version") or "")
        elif kind == "response_item" and inner in _CALLS:
            threads.call(
                None,
                str(payload.get("call_id") or ""),
                str(payload.get("name") or inner),
                _arguments(payload),
            )
        elif kind == "response_item" and inner in _OUTPUTS:
            output = payload.get("output")
            text = output if isinstance(output, str) else json.dumps(output)
            outputs.append(threads.addition(str(payload.get("call_id") or ""), text, None))
        elif kind == "event_msg" and inner == "token_count":
            info = payload.get("info")
            if not isinstance(info, dict) or not isinstance(info.get("last_token_usage"), dict):
                continue
            if (
                info.get("total_token_usage") is not None
                and info.get("total_token_usage") == last_total
            ):
                continue  # repeated with a rate-limit update: not a new call
            last_total = info.get("total_token_usage")
            draft = threads.open(None, f"call-{len(threads.drafts.get(None, [])) + 1}")
            _usage(draft, info["last_token_usage"])
    if seen.problem is not None:
        return f"rollout {seen.problem}"
    if seen.cut or seen.malformed or seen.long_lines:
        return "rollout cut or malformed"
    drafts = threads.drafts.get(None)
    if not drafts:
        return "rollout holds no model call"
    # Codex records a call's output before the usage of the answer that made the call: the
    # output is what the request after that answer's added.
    maker = {call.id: index for index, draft in enumerate(drafts) for call in draft.calls}
    for output in outputs:
        index = maker.get(output.tool_use_id)
        if index is not None and index + 1 < len(drafts):
            drafts[index + 1].added.append(output)
    return threads, version


def _sums(threads: Threads) -> list[int | None]:
    sums: list[int | None] = []
    for name in FIELDS:
        values = [d.usage.get(name) for d in threads.drafts.get(None, [])]
        sums.append(
            None if any(v is None for v in values) else sum(v for v in values if v is not None)
        )
    return sums


def codex_turns(
    events: Iterable[Mapping[str, Any]],
    *,
    environ: Mapping[str, str] | None = None,
    stream_notes: Iterable[str] = (),
) -> TurnList:
    """Codex's turn list from its stream's events, with its rollout where one is."""
    threads, said = read_stream(events)
    notes = list(stream_notes)
    sources = ["stream"]
    version = ""
    thread = said.get("session")
    env = os.environ if environ is None else environ
    if not isinstance(thread, str) or not _THREAD.fullmatch(thread):
        notes.append("no thread id in the stream: turn list from the stream alone")
    else:
        home = Path(env.get("CODEX_HOME") or Path(env.get("HOME") or "~").expanduser() / ".codex")
        folder, path = rollout_path(home, thread)
        joined = read_rollout(path, folder, thread) if path is not None else "no rollout found"
        if isinstance(joined, str):
            notes.append(f"{joined}: turn list from the stream alone")
        elif _sums(joined[0]) != _sums(threads):
            notes.append(
                "rollout's calls do not add up to the stream's turns: "
                "turn list from the stream alone"
            )
        else:
            threads, version = joined
            sources.append("transcript")
    if sources == ["stream"] and threads.drafts.get(None):
        notes.append("Codex's stream sums each turn's model calls: one entry per turn")
    requests, orphan_notes = freeze(threads, FIELDS)
    reported = dict(
        zip(
            ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"),
            _sums(threads),
            strict=True,
        )
    )
    return TurnList(
        agent="codex",
        format="codex exec --json " + (version[:40] if version else "(version not stated)"),
        sources=tuple(sources),
        requests=requests,
        notes=tuple(notes + orphan_notes),
        reported=reported if threads.drafts.get(None) else {},
    )
