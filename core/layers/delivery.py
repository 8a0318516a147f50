"""How the eight composed layers are delivered: which go in the system prompt, which in the
user turn.

Two deliveries, the same eight layers either way (the composer and its order are untouched):

- ``layered`` (the default, the seeds' order): all eight layers, joined, are the system
  prompt; the user turn is the phase's task.
- ``cache-aware`` (opt-in, ``delivery = "cache-aware"``): what every phase of a story shares
  goes in the system prompt — the phase-invariant layers (:data:`SYSTEM_LAYERS`) and the
  story's injected files (Layer-5's ``<file_injections>``) — and everything that differs by
  phase goes at the head of the user turn, in the layers' order: Contract, Entry, Mode, the
  rest of Context (the phase's story text and transfers) and ApplyPolicy, then the task.
  Providers cache exact prefixes, so consecutive phases then share the whole system block
  instead of diverging at Layer-2.

The story text of Layer-5 stays in the user turn because it is phase-specific (dev gets the
full story prompt, the other phases a brief): in the system prompt it would end the shared
prefix exactly where the injected files begin. So do the injected files the phases themselves
write (:func:`written_paths`: the story file, which gets the status write-back and the appended
records, and ``sprint-status.yaml``): in the shared block they would differ in the very next
phase. They go, as an envelope of their own (:data:`WRITTEN_LABEL`), after the story text in
the user turn, and :attr:`Delivered.moved` names them.

:func:`deliver` returns both texts as labelled segments, so a meter can say in which layer or
file two prompts part.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from ..errors import UsageError
from ..lean_dataclass import dataclass
from .input import ComposeInput
from .model import JOINER, PromptLayer
from .values import context_pieces

Delivery = Literal["layered", "cache-aware"]
DELIVERIES: tuple[Delivery, ...] = ("layered", "cache-aware")
"""The deliveries, the default first."""

SYSTEM_LAYERS = ("Layer-0A", "Layer-0B", "Layer-1")
"""The layers that read the same in every phase of a story: instructions, rules, guardrails."""

FILES_KEY = "fileInjections"
"""Layer-5's envelope key holding the ``<file_injections>`` XML."""

FILES_LABEL = "Layer-5:files"
"""The label of the segment holding the injected files."""

WRITTEN_LABEL = "Layer-5:written files"
"""The label of the segment holding the injected files the phases write (cache-aware)."""

STATUS_FILES = ("sprint-status.yaml", "sprint-status.yml")
"""Files the status write-back rewrites after a phase, wherever they are."""

_FILE_HEAD = re.compile(r'\n  <file path="([^"\n]*)">\n')
_FILE_END = "\n  </file>"
_ATTR = (("&quot;", '"'), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"))


@dataclass(frozen=True)
class Segment:
    """A labelled stretch of a delivered text.

    Attributes:
        label: the layer id it comes from (``Layer-3``), :data:`FILES_LABEL` for the injected
            files, ``joiner`` for the blank line between two parts, or ``task`` for the
            phase's task in the user turn.
        text: its exact text.
    """

    label: str
    text: str


@dataclass(frozen=True)
class Delivered:
    """The system prompt and the user turn as sent, each as its segments.

    Attributes:
        delivery: the delivery that placed them.
        system: the system prompt's segments; their texts concatenate to it.
        user: the user turn's segments; their texts concatenate to it.
        moved: the injected files kept out of the shared system prompt because a phase
            writes them (cache-aware), root-relative.
    """

    delivery: Delivery
    system: tuple[Segment, ...]
    user: tuple[Segment, ...]
    moved: tuple[str, ...] = ()

    @property
    def system_text(self) -> str:
        """The system prompt."""
        return "".join(segment.text for segment in self.system)

    @property
    def user_text(self) -> str:
        """The user turn."""
        return "".join(segment.text for segment in self.user)


def check_delivery(value: str) -> Delivery:
    """``value`` as a delivery.

    Raises:
        UsageError: not one of :data:`DELIVERIES`.
    """
    for delivery in DELIVERIES:
        if value == delivery:
            return delivery
    raise UsageError(f"unknown delivery '{value}' (one of: {', '.join(DELIVERIES)})")


def _joined(parts: Sequence[Segment | tuple[Segment, ...]]) -> tuple[Segment, ...]:
    """The parts with a joiner between two non-empty ones; a tuple is one part in pieces."""
    segments: list[Segment] = []
    for part in parts:
        pieces = part if isinstance(part, tuple) else (part,)
        if not any(piece.text for piece in pieces):
            continue
        if segments:
            segments.append(Segment("joiner", JOINER))
        segments.extend(pieces)
    return tuple(segments)


def _context_without_files(compose_input: ComposeInput) -> str:
    envelope = {k: v for k, v in compose_input.context_envelope.items() if k != FILES_KEY}
    return "".join(context_pieces(replace(compose_input, context_envelope=envelope)))


def deliver(
    layers: Sequence[PromptLayer],
    compose_input: ComposeInput,
    task: str,
    delivery: Delivery = "layered",
) -> Delivered:
    """Place ``layers`` and ``task`` in the system prompt and the user turn.

    Args:
        layers: the eight composed layers, in order.
        compose_input: what they were composed from (Layer-5's envelope is split by key).
        task: the phase's task (the user message of the layered delivery).
        delivery: ``layered`` or ``cache-aware``.
    """
    files = str(compose_input.context_envelope.get(FILES_KEY) or "")
    if delivery == "cache-aware":
        return _cache_aware(layers, compose_input, task, files)
    parts: list[Segment | tuple[Segment, ...]] = []
    for layer in layers:
        story = _context_without_files(compose_input) if layer.layer_id == "Layer-5" else ""
        if files.strip() and story and layer.content == story + JOINER + files:
            # Layer-5 as two segments, so a meter can tell the files from the story text.
            parts.append((Segment("Layer-5", story + JOINER), Segment(FILES_LABEL, files)))
        else:
            parts.append(Segment(layer.layer_id, layer.content))
    return Delivered(delivery, _joined(parts), (Segment("task", task),))


def written_paths(compose_input: ComposeInput) -> frozenset[str]:
    """The injected files a phase of this story writes, root-relative: its record file (the
    story file of BMAD: status line and appended records), ``sprint-status.yaml`` and, for
    OpenSpec, the change's ``tasks.md`` (its checkboxes)."""
    profile = compose_input.domain_profile
    record = str(profile.get("recordPath") or "")
    return frozenset({record} if record else set())


def _is_written(path: str, written: frozenset[str], source: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path in written or name in STATUS_FILES or (source == "openspec" and name == "tasks.md")


def split_envelope(files: str, written: frozenset[str], source: str = "") -> tuple[str, str]:
    """``files`` (a ``<file_injections>`` envelope) as two envelopes: the files no phase
    writes, and those it does (empty when none); ``(files, "")`` when the envelope does not
    read back exactly (a file's text holding the envelope's own tags)."""
    heads = list(_FILE_HEAD.finditer(files))
    close = "\n" + files.rsplit("\n", 1)[-1] if "\n" in files else ""
    if not heads or not close.startswith("\n</"):
        return files, ""
    opening = files[: heads[0].start()]
    entries: list[tuple[str, str]] = []
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(files) - len(close)
        raw = files[head.start() : end]
        if not raw.endswith(_FILE_END):
            return files, ""
        path = head.group(1)
        for escaped, plain in _ATTR:
            path = path.replace(escaped, plain)
        entries.append((path, raw))
    if opening + "".join(raw for _, raw in entries) + close != files:
        return files, ""
    kept = [raw for path, raw in entries if not _is_written(path, written, source)]
    moved = [raw for path, raw in entries if _is_written(path, written, source)]
    if not moved:
        return files, ""
    stable = opening + "".join(kept) + close if kept else ""
    return stable, opening + "".join(moved) + close


def _cache_aware(
    layers: Sequence[PromptLayer], compose_input: ComposeInput, task: str, files: str
) -> Delivered:
    written = written_paths(compose_input)
    source = str(compose_input.domain_profile.get("source") or "")
    stable, changing = split_envelope(files, written, source) if files.strip() else ("", "")
    moved = tuple(head.group(1) for head in _FILE_HEAD.finditer(changing))
    system: list[Segment | tuple[Segment, ...]] = []
    user: list[Segment | tuple[Segment, ...]] = []
    for layer in layers:
        if layer.layer_id in SYSTEM_LAYERS:
            system.append(Segment(layer.layer_id, layer.content))
        elif layer.layer_id == "Layer-5":
            if files.strip():
                if stable:
                    system.append(Segment(FILES_LABEL, stable))
                story = _context_without_files(compose_input)
                user.append(Segment("Layer-5", story))
                if changing:
                    user.append(Segment(WRITTEN_LABEL, changing))
            else:
                user.append(Segment("Layer-5", layer.content))
        else:
            user.append(Segment(layer.layer_id, layer.content))
    user.append(Segment("task", task))
    return Delivered("cache-aware", _joined(system), _joined(user), moved)
