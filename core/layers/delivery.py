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
prefix exactly where the injected files begin.

:func:`deliver` returns both texts as labelled segments, so a meter can say in which layer or
file two prompts part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ..errors import UsageError
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
    """

    delivery: Delivery
    system: tuple[Segment, ...]
    user: tuple[Segment, ...]

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
    if delivery == "layered":
        parts: list[Segment | tuple[Segment, ...]] = []
        for layer in layers:
            story = _context_without_files(compose_input) if layer.layer_id == "Layer-5" else ""
            if files.strip() and story and layer.content == story + JOINER + files:
                # Layer-5 as two segments, so a meter can tell the files from the story text.
                parts.append((Segment("Layer-5", story + JOINER), Segment(FILES_LABEL, files)))
            else:
                parts.append(Segment(layer.layer_id, layer.content))
        return Delivered(delivery, _joined(parts), (Segment("task", task),))
    system: list[Segment] = []
    user: list[Segment] = []
    for layer in layers:
        if layer.layer_id in SYSTEM_LAYERS:
            system.append(Segment(layer.layer_id, layer.content))
        elif layer.layer_id == "Layer-5":
            if files.strip():
                system.append(Segment(FILES_LABEL, files))
                user.append(Segment("Layer-5", _context_without_files(compose_input)))
            else:
                user.append(Segment("Layer-5", layer.content))
        else:
            user.append(Segment(layer.layer_id, layer.content))
    user.append(Segment("task", task))
    return Delivered(delivery, _joined(system), _joined(user))
