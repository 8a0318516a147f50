"""Requests drafted while a stream is read, then frozen into a :class:`~.model.TurnList`.

Both clients' readers feed the same drafts: a request opens a :class:`Draft` in its thread (the
top level, or the subagent a tool call started), tool results arriving before the next request
of that thread are what the next one added, and :func:`freeze` nests each subagent's thread
under the request whose call started it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import field
from typing import Any

from ..lean_dataclass import dataclass
from ..records.usage import token_count
from .model import Addition, Request, Subagent, ToolCall

_LINE_NUMBER = re.compile(r"^ *\d+(?:\t|→)", re.MULTILINE)
"""The line numbers a file-read result puts before each line (``     1\\t`` or ``1→``)."""
TARGET_KEYS = (
    "file_path",
    "path",
    "notebook_path",
    "command",
    "cmd",
    "pattern",
    "url",
    "query",
    "description",
)
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})


def text_of(content: object) -> str:
    """The text a tool result carried: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


def file_digest(text: str) -> str:
    """The sha256 of a file's text, from what a read returned (line numbers taken off)."""
    plain = _LINE_NUMBER.sub("", text) if _LINE_NUMBER.match(text) else text
    return hashlib.sha256(plain.encode("utf-8")).hexdigest()


def target_of(arguments: object) -> str:
    """The file, command or pattern a tool call names."""
    if not isinstance(arguments, dict):
        return ""
    for key in TARGET_KEYS:
        value = arguments.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = " ".join(value)  # an argv, as Codex's shell takes it
        if isinstance(value, str) and value:
            return value
    return ""


def counts(usage: object, names: tuple[str, ...]) -> tuple[dict[str, int | None], list[str]]:
    """Each named count of a usage object, None where missing or not a whole number, with a
    note for each such one."""
    found: dict[str, int | None] = {}
    notes: list[str] = []
    data = usage if isinstance(usage, dict) else {}
    for name in names:
        value = token_count(data.get(name))
        found[name] = value
        if value is None:
            state = "missing" if name not in data else f"not a count ({data.get(name)!r:.30})"
            notes.append(f"usage {name} {state}: unknown")
    return found, notes


@dataclass
class Draft:
    """A request being read."""

    id: str
    model: str = ""
    usage: dict[str, int | None] = field(default_factory=dict)
    at: float | None = None
    added: list[Addition] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Threads:
    """Every thread's drafts, the pending additions of each, and every tool call seen."""

    drafts: dict[str | None, list[Draft]] = field(default_factory=dict)
    pending: dict[str | None, list[Addition]] = field(default_factory=dict)
    calls: dict[str, ToolCall] = field(default_factory=dict)
    prompts: dict[str, tuple[int, str]] = field(default_factory=dict)
    order: list[str | None] = field(default_factory=list)
    loose: list[ToolCall] = field(default_factory=list)
    """Calls seen before the request they belong to is (Codex names a call before the usage
    of the answer that made it); the next request opened takes them."""

    def open(self, thread: str | None, request_id: str) -> Draft:
        """The draft for ``request_id`` in ``thread``: the last one when it is the same
        answer (a client writes one line per content block), else a new one that takes the
        thread's pending additions."""
        drafts = self.drafts.setdefault(thread, [])
        if thread not in self.order:
            self.order.append(thread)
        if drafts and request_id and drafts[-1].id == request_id:
            return drafts[-1]
        draft = Draft(request_id, added=self.pending.pop(thread, []), calls=self.loose)
        self.loose = []
        drafts.append(draft)
        return draft

    def call(self, draft: Draft | None, call_id: str, tool: str, arguments: Any) -> None:
        """Note a tool call ``draft``'s answer made (None: the next request's)."""
        calls = self.loose if draft is None else draft.calls
        if call_id and any(c.id == call_id for c in calls):
            return
        made = ToolCall(call_id, tool, target_of(arguments))
        calls.append(made)
        if call_id:
            self.calls[call_id] = made
        if tool in SUBAGENT_TOOLS and isinstance(arguments, dict):
            prompt = arguments.get("prompt")
            size = len(prompt.encode("utf-8")) if isinstance(prompt, str) else -1
            self.prompts[call_id] = (size, str(arguments.get("description", "")))

    def result(self, thread: str | None, call_id: str, text: str, file_text: str | None) -> None:
        """Note a tool result: the next request of ``thread`` carries it."""
        self.pending.setdefault(thread, []).append(self.addition(call_id, text, file_text))

    def addition(self, call_id: str, text: str, file_text: str | None) -> Addition:
        """A tool result as what a request added: its call's tool and target, its size."""
        found = self.calls.get(call_id)
        tool, source = (found.tool, found.target) if found else ("?", "")
        digest = ""
        if tool in ("Read", "read_file") or file_text is not None:
            digest = (
                hashlib.sha256(file_text.encode("utf-8")).hexdigest()
                if file_text is not None
                else file_digest(text)
            )
        size = len(text) if text.isascii() else len(text.encode("utf-8"))
        return Addition(tool, source, size, call_id, digest)


def _request(draft: Draft, index: int, threads: Threads, fields: tuple[str, ...]) -> Request:
    subagents = []
    for call in draft.calls:
        if call.id in threads.drafts and call.id is not None:
            size, description = threads.prompts.get(call.id, (-1, ""))
            subagents.append(
                Subagent(
                    call.id,
                    size if size >= 0 else None,
                    description,
                    _requests(threads.drafts[call.id], threads, fields),
                )
            )
    usage = dict(zip(fields, (draft.usage.get(name) for name in fields), strict=True))
    return Request(
        index=index,
        id=draft.id,
        model=draft.model,
        input_tokens=usage[fields[0]],
        cache_read_tokens=usage[fields[1]],
        cache_write_tokens=usage[fields[2]],
        output_tokens=usage[fields[3]],
        at=draft.at,
        added=tuple(draft.added),
        tool_calls=tuple(draft.calls),
        subagents=tuple(subagents),
        notes=tuple(dict.fromkeys(draft.notes)),
    )


def _requests(
    drafts: list[Draft], threads: Threads, fields: tuple[str, ...]
) -> tuple[Request, ...]:
    return tuple(_request(d, i, threads, fields) for i, d in enumerate(drafts, 1))


def freeze(threads: Threads, fields: tuple[str, ...]) -> tuple[tuple[Request, ...], list[str]]:
    """The top-level requests, each subagent's nested under the request that started it; a
    subagent thread whose call matches nothing is listed at the top level, with a note.

    ``fields`` names the draft's usage keys for input, cache read, cache write and output.
    """
    top = list(threads.drafts.get(None, []))
    notes: list[str] = []
    for thread in threads.order:
        if thread is None or thread in threads.calls:
            continue
        notes.append(
            f"subagent {thread}: its call matches nothing in the record; listed at the top"
        )
        for draft in threads.drafts[thread]:
            draft.notes.append(f"subagent {thread}, whose call matches nothing in the record")
            top.append(draft)
    return _requests(top, threads, fields), notes
