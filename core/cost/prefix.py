"""The cacheable-prefix meter: how much of each phase's system prompt the one before it shares.

Providers cache exact prompt prefixes (Anthropic up to a breakpoint, OpenAI automatically), so
what a phase re-pays is what follows the point where its system prompt parts from the previous
phase's. For one story and its phase sequence (kickoff → dev → review → UAT by default) the
meter composes every phase exactly as it would be sent and reports:

- each of the eight layers as stable (the same bytes in every phase) or volatile;
- per consecutive pair, the shared prefix in bytes (the byte length of the common prefix of
  the two system prompts, nothing rounded) and in tokens, and the layer or file where the two
  part;
- flags: volatile bytes placed before bytes every phase shares (the shared bulk is then
  written to the cache again in every phase) — only when those shared bytes reach
  :data:`VOLATILE_FLAG_MIN_BYTES`, below which re-writing them costs next to nothing — and a
  shared prefix below the model's minimum cacheable length (nothing is cached, silently).

Token counts are the configured tiktoken encoding's, labelled as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from ..injection.model import Selection
from ..layers.delivery import FILES_LABEL
from ..layers.model import LAYER_TITLES
from ..lean_dataclass import dataclass
from ..plans.catalog import load_catalog
from ..project.workspace import Workspace
from ..prompt.compose import compose_prompt
from ..prompt.request import ComposedPrompt, PromptRequest
from ..stories.model import StoryCatalog
from ..tokens.counter import TokenCounter, get_counter

DEFAULT_SEQUENCE = ("kickoff", "dev", "review", "uat")
"""The phases one story is stepped through, in order."""

_CHUNK = 4096
_TITLES: dict[str, str] = {str(key): title for key, title in LAYER_TITLES.items()}
_FILE_OPEN = '<file path="'


def common_prefix_bytes(first: bytes, second: bytes) -> int:
    """The length of the longest common prefix of two byte strings."""
    limit = min(len(first), len(second))
    start = 0
    # Whole chunks first: comparing slices runs in C, byte by byte only inside the last one.
    while (
        start + _CHUNK <= limit and first[start : start + _CHUNK] == second[start : start + _CHUNK]
    ):
        start += _CHUNK
    while start < limit and first[start] == second[start]:
        start += 1
    return start


def _prefix_text(data: bytes, length: int) -> str:
    """The text of ``data[:length]``; a character cut in half at the end is left out."""
    return data[:length].decode("utf-8", errors="ignore")


def part_at(prompt: ComposedPrompt, offset: int) -> str:
    """The layer id, or ``file <path>``, holding byte ``offset`` of ``prompt``'s system prompt.

    A joiner counts as the part that follows it; past the end is ``end``.
    """
    delivered = prompt.delivered
    if delivered is None:
        return "end"
    position = 0
    segments = delivered.system
    for index, segment in enumerate(segments):
        size = len(segment.text.encode("utf-8"))
        if offset < position + size:
            if segment.label == "joiner" and index + 1 < len(segments):
                segment = segments[index + 1]
                return segment.label if segment.label != FILES_LABEL else "Layer-5"
            if segment.label == FILES_LABEL:
                inside = segment.text.encode("utf-8")[: offset - position].decode(
                    "utf-8", errors="ignore"
                )
                start = inside.rfind(_FILE_OPEN)
                if start >= 0:
                    end = inside.find('">', start)
                    if end > start:
                        return "file " + inside[start + len(_FILE_OPEN) : end]
                return "Layer-5"
            return segment.label
        position += size
    return "end"


@dataclass(frozen=True)
class LayerStability:
    """One layer across the phase sequence.

    Attributes:
        layer_id: ``Layer-0A`` … ``Layer-6``.
        title: e.g. ``Context``.
        stable: the same bytes in every phase.
        bytes: its bytes in each phase, in sequence order.
    """

    layer_id: str
    title: str
    stable: bool
    bytes: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "layer": self.layer_id,
            "title": self.title,
            "stable": self.stable,
            "bytes": list(self.bytes),
        }


@dataclass(frozen=True)
class PrefixShare:
    """What one phase's system prompt shares with the previous phase's.

    Attributes:
        before: the previous phase.
        after: this phase.
        shared_prefix_bytes: the byte length of the two system prompts' common prefix.
        shared_prefix_tokens: that prefix in tokens, None when not counted.
        system_bytes: this phase's system prompt, bytes.
        system_tokens: and tokens, None when not counted.
        parts_at: the layer or file of this phase where the two part (``end`` when this
            phase's system prompt is all shared).
    """

    before: str
    after: str
    shared_prefix_bytes: int
    shared_prefix_tokens: int | None
    system_bytes: int
    system_tokens: int | None
    parts_at: str

    @property
    def whole(self) -> bool:
        """True when this phase's whole system prompt is the shared prefix."""
        return self.shared_prefix_bytes == self.system_bytes

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``inspect --cache --json``)."""
        return {
            "before": self.before,
            "after": self.after,
            "shared_prefix_bytes": self.shared_prefix_bytes,
            "shared_prefix_tokens": self.shared_prefix_tokens,
            "system_bytes": self.system_bytes,
            "system_tokens": self.system_tokens,
            "parts_at": self.parts_at,
            "whole": self.whole,
        }


@dataclass(frozen=True)
class CacheMeter:
    """The cacheable-prefix meter of one story's phase sequence.

    Attributes:
        story_id: the story.
        delivery: ``layered`` or ``cache-aware``.
        phases: the sequence measured.
        encoding: the tiktoken encoding of the token counts.
        minimum_tokens: the model's minimum cacheable prefix, None when unknown.
        layers: each layer, stable or volatile.
        pairs: per consecutive pair, the shared prefix.
        flags: what defeats the cache, one line each.
    """

    story_id: str
    delivery: str
    phases: tuple[str, ...]
    encoding: str
    minimum_tokens: int | None
    layers: tuple[LayerStability, ...]
    pairs: tuple[PrefixShare, ...]
    flags: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``inspect --cache --json``)."""
        return {
            "story": self.story_id,
            "delivery": self.delivery,
            "phases": list(self.phases),
            "encoding": self.encoding,
            "minimum_tokens": self.minimum_tokens,
            "layers": [layer.to_dict() for layer in self.layers],
            "pairs": [pair.to_dict() for pair in self.pairs],
            "flags": list(self.flags),
        }

    def summary(self) -> str:
        """One line: each pair's shared prefix against its system prompt."""
        if not self.pairs:
            return "one phase: nothing to share"
        return " · ".join(
            f"{pair.before}→{pair.after} {pair.shared_prefix_bytes:,}/{pair.system_bytes:,} B"
            + ("" if pair.whole else f" (parts at {pair.parts_at})")
            for pair in self.pairs
        )


def _segments(prompt: ComposedPrompt) -> list[tuple[str, str]]:
    delivered = prompt.delivered
    if delivered is None:
        return []
    return [(s.label, s.text) for s in delivered.system if s.label != "joiner"]


VOLATILE_FLAG_MIN_BYTES = 2048
"""The shared bytes a volatile part must come before to be flagged: about 512 tokens, the
smallest prefix any model of the price table caches. Fewer shared bytes behind it (115, say)
are not worth moving."""


def _volatile_first_flag(before: ComposedPrompt, after: ComposedPrompt) -> str | None:
    """A flag when the first part in which two phases differ comes before parts they share
    (at least :data:`VOLATILE_FLAG_MIN_BYTES` of them)."""
    first = _segments(after)
    other = dict(_segments(before))
    same = [other.get(label) == text for label, text in first]
    if False not in same:
        return None
    parts_at = same.index(False)
    later = [
        (label, len(text.encode("utf-8")))
        for (label, text), shared in zip(first[parts_at:], same[parts_at:], strict=True)
        if shared
    ]
    shared_bytes = sum(size for _, size in later)
    if shared_bytes < VOLATILE_FLAG_MIN_BYTES:
        return None
    label = first[parts_at][0]
    names = ", ".join("the injected files" if name == FILES_LABEL else name for name, _ in later)
    return (
        f"{before.request.phase}→{after.request.phase}: volatile {label} "
        f"({_TITLES.get(label, label)}) comes before {shared_bytes:,} bytes both phases "
        f"share ({names}): they are written to the cache again "
        '(delivery = "cache-aware" puts them first)'
    )


def measure_prompts(
    prompts: Sequence[ComposedPrompt],
    counter: TokenCounter | None,
    minimum_tokens: int | None = None,
    model: str = "",
) -> CacheMeter:
    """The meter of already-composed ``prompts``, one per phase, in sequence order."""
    if not prompts:
        raise ValueError("measure_prompts needs at least one prompt")
    layers = tuple(
        LayerStability(
            layer.layer_id,
            layer.title,
            all(p.layers[index].sha256 == layer.sha256 for p in prompts),
            tuple(p.layers[index].bytes for p in prompts),
        )
        for index, layer in enumerate(prompts[0].layers)
    )
    pairs: list[PrefixShare] = []
    flags: list[str] = []
    for before, after in pairwise(prompts):
        data = after.system.encode("utf-8")
        shared = common_prefix_bytes(before.system.encode("utf-8"), data)
        tokens = None if counter is None else counter.count(_prefix_text(data, shared))
        pairs.append(
            PrefixShare(
                before.request.phase,
                after.request.phase,
                shared,
                tokens,
                len(data),
                after.system_meter.tokens,
                part_at(after, shared),
            )
        )
        volatile = _volatile_first_flag(before, after)
        if volatile is not None:
            flags.append(volatile)
        if minimum_tokens is not None and tokens is not None and tokens < minimum_tokens:
            flags.append(
                f"{before.request.phase}→{after.request.phase}: the shared prefix is "
                f"{tokens:,} tokens, below the {minimum_tokens:,}-token minimum cacheable "
                f"prefix{f' of {model}' if model else ''}: none of it is cached"
            )
    first = prompts[0]
    return CacheMeter(
        story_id=first.story.id,
        delivery=first.delivered.delivery if first.delivered is not None else "layered",
        phases=tuple(p.request.phase for p in prompts),
        encoding=counter.encoding if counter is not None else "",
        minimum_tokens=minimum_tokens,
        layers=layers,
        pairs=tuple(pairs),
        flags=tuple(flags),
    )


def compose_sequence(
    workspace: Workspace,
    story_id: str,
    *,
    phases: Sequence[str] = DEFAULT_SEQUENCE,
    selection: Selection | None = None,
    delivery: str | None = None,
    counter: TokenCounter | None = None,
    catalog: StoryCatalog | None = None,
) -> list[ComposedPrompt]:
    """Every phase of ``phases`` for ``story_id``, composed as it would be sent; from
    ``catalog`` when given (an epic's stories share one reading of the plan).

    Raises:
        StoryNotFound, UsageError, ComposeError: as
        :func:`~promptdeck.core.prompt.compose.compose_prompt`.
    """
    catalog = catalog or load_catalog(workspace)
    counter = counter or get_counter(workspace.config.tokens_encoding)
    return [
        compose_prompt(
            workspace,
            catalog,
            PromptRequest(
                story_id,
                phase,
                selection=selection or Selection(),
                delivery=delivery,
            ),
            counter=counter,
        )
        for phase in phases
    ]


def measure_cache(
    workspace: Workspace,
    story_id: str,
    *,
    phases: Sequence[str] = DEFAULT_SEQUENCE,
    selection: Selection | None = None,
    delivery: str | None = None,
    counter: TokenCounter | None = None,
    minimum_tokens: int | None = None,
    model: str = "",
) -> CacheMeter:
    """Compose ``phases`` of ``story_id`` and measure what consecutive phases share."""
    counter = counter or get_counter(workspace.config.tokens_encoding)
    prompts = compose_sequence(
        workspace,
        story_id,
        phases=phases,
        selection=selection,
        delivery=delivery,
        counter=counter,
    )
    return measure_prompts(prompts, counter, minimum_tokens, model)
