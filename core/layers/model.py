"""The layers of a system instruction: :class:`PromptLayer`, their fixed order and titles,
and how the system prompt is joined from them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..errors import ComposeError
from ..lean_dataclass import dataclass
from ..tokens.counter import TokenCounter
from ..vocabulary import LAYER_IDS as _LAYER_IDS
from ..vocabulary import LayerId

LAYER_IDS = _LAYER_IDS
"""The fixed layer order (seed 001, frozen decision 1)."""

LAYER_TITLES: Mapping[LayerId, str] = MappingProxyType(
    {
        "Layer-0A": "Instructions",
        "Layer-0B": "Workspace rules",
        "Layer-1": "Guardrails",
        "Layer-2": "Contract",
        "Layer-3": "Entry",
        "Layer-4": "Mode",
        "Layer-5": "Context",
        "Layer-6": "ApplyPolicy",
    }
)
OPTIONAL_LAYERS = frozenset({"Layer-0B"})
"""Layers that may be empty: only the workspace rules (seed 004 Req 4 over seed 001)."""

JOINER = "\n\n"
"""What separates two non-empty layers in the system prompt (its bytes are their own share)."""


@dataclass(frozen=True)
class PromptLayer:
    """One layer of the system instruction (seed 001's frozen shape, plus meters).

    Attributes:
        layer_id: ``Layer-0A`` … ``Layer-6``.
        title: e.g. ``Guardrails``.
        content: the exact text sent.
        required: a required layer is never empty.
        source: ``template:NAME``, ``asset:instructions.md``, a workspace path, or
            ``input:contextEnvelope``.
        bytes: UTF-8 bytes of :attr:`content`.
        tokens: tokens of :attr:`content`, or None when not counted.
        sha256: hex sha256 of :attr:`content`.
        missing: True when an optional layer's source was missing (Layer-0B without rules).
        left_out: True when the user left the optional layer out (it is empty and missing).
    """

    layer_id: LayerId
    title: str
    content: str
    required: bool
    source: str
    bytes: int
    tokens: int | None
    sha256: str
    missing: bool = False
    left_out: bool = False

    @property
    def absence(self) -> str:
        """``left out`` or ``missing`` for an empty optional layer, ``""`` otherwise."""
        return "left out" if self.left_out else "missing" if self.missing else ""

    @classmethod
    def build(
        cls,
        layer_id: LayerId,
        content: str,
        source: str,
        *,
        counter: TokenCounter | None = None,
        missing: bool = False,
        left_out: bool = False,
        pieces: Sequence[str] | None = None,
    ) -> PromptLayer:
        """Make a layer, measuring ``content``.

        ``pieces``, when given, concatenate to ``content``: their counts (the injection's,
        already made) are reused, so no byte is encoded twice.

        Raises:
            ComposeError: a required layer's content is empty.
        """
        required = layer_id not in OPTIONAL_LAYERS
        if required and not content.strip():
            raise ComposeError(
                f"{layer_id} ({LAYER_TITLES[layer_id]}) is required but empty (source: {source})"
            )
        data = content.encode("utf-8")
        return cls(
            layer_id=layer_id,
            title=LAYER_TITLES[layer_id],
            content=content,
            required=required,
            source=source,
            bytes=len(data),
            tokens=None
            if counter is None
            else counter.count_joined(pieces, content)
            if pieces is not None
            else counter.count(content),
            sha256=hashlib.sha256(data).hexdigest(),
            missing=missing or left_out,
            left_out=left_out,
        )

    def to_dict(self, *, content: bool = True) -> dict[str, Any]:
        """The camelCase shape (``content`` left out when ``content=False``)."""
        shape: dict[str, Any] = {
            "layerId": self.layer_id,
            "title": self.title,
            "required": self.required,
            "source": self.source,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "sha256": self.sha256,
            "missing": self.missing,
        }
        if self.left_out:
            shape["leftOut"] = True
        if content:
            shape["content"] = self.content
        return shape


def signature(layers: Iterable[PromptLayer]) -> str:
    """sha256 over the ordered layers: one ``<layerId>:<sha256>`` line per layer."""
    digest = hashlib.sha256()
    for layer in layers:
        digest.update(f"{layer.layer_id}:{layer.sha256}\n".encode())
    return digest.hexdigest()


def system_text(layers: Sequence[PromptLayer]) -> str:
    """The system prompt: the non-empty layers' contents joined by :data:`JOINER`."""
    return JOINER.join(layer.content for layer in layers if layer.content)


def system_pieces(layers: Sequence[PromptLayer]) -> list[str]:
    """:func:`system_text` as pieces (the layers and the joiners) that concatenate to it."""
    pieces: list[str] = []
    for layer in layers:
        if layer.content:
            if pieces:
                pieces.append(JOINER)
            pieces.append(layer.content)
    return pieces


def joiner_count(layers: Sequence[PromptLayer]) -> int:
    """How many joiners :func:`system_text` puts between the layers."""
    return max(0, sum(1 for layer in layers if layer.content) - 1)
