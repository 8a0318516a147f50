"""A captured request taken apart: whose text each stretch of it is, and which text arrives twice.

The request's texts are read in two streams, whatever the API: the **system** stream (the
Messages API's ``system`` blocks; the Responses API's ``instructions`` and ``developer`` /
``system`` messages) and the **turn** stream (every other message's text). In them, in this
order, the known texts are found and cut out:

1. promptdeck's system prompt in the system stream and its user turn in the turn stream, each
   split at compose's own segment boundaries (:class:`~..layers.delivery.Delivered`): the
   eight layers, the blank lines between them (``layer joiners``) and the task (``user
   turn``);
2. each rules file the client loads itself (:class:`RulesText`), found whole — or, when the
   client cut it, its longest start that was sent — in the turn stream, else in what is left
   of the system stream.

What is left of the system stream is the ``client system`` part, what is left of the turn
stream the ``client context``; the tool schemas are their compact JSON and the envelope is the
rest of the body, so the parts' bytes sum to the body's size exactly.

Text that arrives twice is found by paragraph (:func:`duplicated_text`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..layers.delivery import FILES_LABEL, Delivered
from ..layers.model import LAYER_TITLES
from ..lean_dataclass import dataclass
from ..tokens.counter import TokenCounter
from ..vocabulary import LAYER_IDS
from .loopback import CapturedRequest
from .model import DuplicateText, RequestPart, compact_json

MIN_RULES_PREFIX = 64
"""The shortest start of a rules file taken as that file, sent cut (shorter ones are common
words and headings)."""
MIN_PARAGRAPH = 40
"""Paragraphs shorter than this (after normalising) are not compared: headings, rules and
one-word lines repeat by chance."""
_SYSTEM_ROLES = ("system", "developer")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_TAG_LINE = re.compile(r"^[ \t]*</?[A-Za-z][\w:.-]*(?:\s[^<>\n]*)?>[ \t]*$", re.MULTILINE)
"""A line that is only an opening or closing tag: the wrapper a client or a layer puts around
a file's text, never part of the text itself."""


@dataclass(frozen=True)
class RulesText:
    """A rules file the client may have loaded: its path (in the project, ``../`` above it,
    ``~/.claude/`` in the user's home), its text and why the client loads it."""

    path: str
    text: str
    loaded_because: str = ""


def _content_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return texts


def request_streams(body: Any) -> tuple[str, str]:
    """The request's system stream and turn stream (see the module's description)."""
    if not isinstance(body, dict):
        return "", ""
    system: list[str] = []
    turn: list[str] = []
    top = body.get("system")
    system.extend(_content_texts(top))
    if isinstance(body.get("instructions"), str):
        system.append(body["instructions"])
    items = [*(body.get("messages") or []), *(body.get("input") or [])]
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            continue
        into = system if item.get("role") in _SYSTEM_ROLES else turn
        into.extend(_content_texts(item.get("content")))
    return "".join(system), "".join(turn)


def request_tools(body: dict[str, Any]) -> str:
    """The request's tool schemas as compact JSON: its ``tools`` and, in the Responses API,
    the ``tools`` of its ``additional_tools`` input items (where Codex declares them)."""
    found = [body["tools"]] if body.get("tools") else []
    items = body.get("input")
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("type") == "additional_tools" and item.get("tools"):
            found.append(item["tools"])
    return "".join(compact_json(tools) for tools in found)


class _Stream:
    """One stream of text, with the stretches already given to a part."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.taken: list[tuple[int, int, str]] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b, _ in self.taken)

    def find(self, needle: str) -> int:
        """Where ``needle`` first lies in untaken text, or -1."""
        if not needle:
            return -1
        at = self.text.find(needle)
        while at >= 0 and not self.free(at, at + len(needle)):
            at = self.text.find(needle, at + 1)
        return at

    def take(self, start: int, text: str, name: str) -> None:
        self.taken.append((start, start + len(text), name))

    def rest(self) -> str:
        pieces, at = [], 0
        for start, end, _ in sorted(self.taken):
            pieces.append(self.text[at:start])
            at = end
        pieces.append(self.text[at:])
        return "".join(pieces)


def _longest_sent_start(stream: _Stream, text: str) -> int:
    """The length of the longest start of ``text`` (at least :data:`MIN_RULES_PREFIX`
    characters) found in ``stream``'s untaken text; 0 when none. A start found implies every
    shorter one is, so the length is searched by halves."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if stream.find(text[:middle]) >= 0:
            low = middle
        else:
            high = middle - 1
    return low if low >= MIN_RULES_PREFIX else 0


def _layer_name(label: str) -> str:
    layer = label.split(":", 1)[0]
    title = LAYER_TITLES.get(layer)  # type: ignore[call-overload]
    return f"{layer} {title}" if title else layer


def _segment_name(label: str) -> tuple[str, str]:
    """The part a delivered segment belongs to, and its kind."""
    if label == "joiner":
        return "layer joiners", "promptdeck"
    if label == "task":
        return "user turn", "user"
    if label == FILES_LABEL or label in LAYER_IDS:
        return _layer_name(label), "promptdeck"
    return label, "promptdeck"


def _ours(
    stream: _Stream, whole: str, segments: Iterable[tuple[str, str]], found: dict[str, str]
) -> None:
    """Cut ``whole`` out of ``stream`` and add its segments' texts to ``found`` by part."""
    at = stream.find(whole)
    if at < 0:
        return
    stream.take(at, whole, "promptdeck")
    for label, text in segments:
        found[label] = found.get(label, "") + text


def split_request(
    request: CapturedRequest,
    delivered: Delivered,
    rules: Sequence[RulesText],
    counter: TokenCounter,
) -> tuple[RequestPart, ...]:
    """``request`` taken apart (see the module's description); the parts sum to its size.

    A request that is not JSON (or was cut at the memory bound) is one ``envelope`` part,
    said to be cut or not JSON.
    """
    body = request.json()
    if not isinstance(body, dict):
        why = "cut at the memory bound" if request.cut else "not a JSON object"
        return (
            RequestPart("envelope", "envelope", "", request.size, 0, f"{why}: not taken apart"),
        )
    system_text, turn_text = request_streams(body)
    system, turn = _Stream(system_text), _Stream(turn_text)
    ours: dict[str, str] = {}
    kinds: dict[str, str] = {}
    for stream, segments in ((system, delivered.system), (turn, delivered.user)):
        named = [(*_segment_name(segment.label), segment.text) for segment in segments]
        kinds.update({name: kind for name, kind, _ in named})
        _ours(stream, "".join(text for *_, text in named), [(n, t) for n, _, t in named], ours)
    found_rules: list[tuple[RulesText, str]] = []
    for rule in rules:
        for stream in (turn, system):
            at = stream.find(rule.text)
            sent = rule.text if at >= 0 else rule.text[: _longest_sent_start(stream, rule.text)]
            if sent:
                stream.take(stream.find(sent), sent, rule.path)
                found_rules.append((rule, sent))
                break
    named_texts: list[tuple[str, str, str, str, str]] = [
        ("client system", "client", system.rest(), "", ""),
        ("tools", "client", request_tools(body), "", ""),
        ("client context", "client", turn.rest(), "", ""),
    ]
    for rule, sent in found_rules:
        size, whole = len(sent.encode("utf-8")), len(rule.text.encode("utf-8"))
        note = "" if sent == rule.text else f"{size:,} of its {whole:,} bytes sent"
        named_texts.append((rule.path, "rules", sent, note, rule.loaded_because))
    order = [_layer_name(layer) for layer in LAYER_IDS]
    for name in sorted(ours, key=lambda n: (order.index(n) if n in order else len(order), n)):
        named_texts.append((name, kinds[name], ours[name], "", ""))
    parts = [
        RequestPart(name, kind, text, len(text.encode("utf-8")), counter.count(text), note, why)
        for name, kind, text, note, why in named_texts
    ]
    rest = request.size - sum(part.bytes for part in parts)
    parts.append(RequestPart("envelope", "envelope", "", rest, 0))
    return tuple(parts)


def _paragraphs(text: str) -> Iterable[tuple[str, int]]:
    """Each paragraph's normalised form and its size in bytes (tag-only lines left out, so a
    wrapper's tag does not hide the paragraph it touches)."""
    for paragraph in _PARAGRAPH_BREAK.split(_TAG_LINE.sub("", text)):
        normal = " ".join(paragraph.split())
        if len(normal) >= MIN_PARAGRAPH:
            yield normal, len(paragraph.strip().encode("utf-8"))


def duplicated_text(parts: Sequence[RequestPart]) -> tuple[DuplicateText, ...]:
    """The paragraphs that arrive in one part and again in a later one, per pair of parts.

    Paragraphs are compared by the SHA-256 of their text with whitespace collapsed; tools and
    the envelope are not compared (they hold JSON, not prose).
    """
    first_seen: dict[bytes, str] = {}
    pairs: dict[tuple[str, str], list[int]] = {}
    for part in parts:
        if part.name == "tools" or part.kind == "envelope":
            continue
        seen_here: set[bytes] = set()
        for normal, size in _paragraphs(part.text):
            digest = hashlib.sha256(normal.encode("utf-8")).digest()
            if digest in seen_here:
                continue
            seen_here.add(digest)
            first = first_seen.setdefault(digest, part.name)
            if first != part.name:
                tally = pairs.setdefault((first, part.name), [0, 0])
                tally[0] += 1
                tally[1] += size
    return tuple(
        DuplicateText(first, second, paragraphs, size)
        for (first, second), (paragraphs, size) in pairs.items()
    )
