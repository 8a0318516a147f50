"""BMAD's ``<frozen-after-approval …>`` … ``</frozen-after-approval>`` blocks: text in a story
file that no phase may change once the story is approved."""

from __future__ import annotations

import re

FROZEN_MARK = b"frozen-after-approval"
"""What BMAD's templates mark a block with that no one may change once approved."""
_OPEN = re.compile(rb"<frozen-after-approval(?:\s[^>]*)?>")
_CLOSE = re.compile(rb"</frozen-after-approval\s*>")


def frozen_spans(data: bytes) -> tuple[tuple[int, int], ...] | None:
    """Where the ``<frozen-after-approval …>`` … ``</frozen-after-approval>`` blocks of
    ``data`` are, markers included, as ``(start, end)`` in order; None when the markers are
    unbalanced (a closer before its opener, an opener inside a block, one never closed)."""
    spans: list[tuple[int, int]] = []
    position = 0
    while True:
        opener = _OPEN.search(data, position)
        closer = _CLOSE.search(data, position)
        if opener is None:
            return tuple(spans) if closer is None else None
        if closer is None or closer.start() < opener.start():
            return None
        nested = _OPEN.search(data, opener.end(), closer.start())
        if nested is not None:
            return None
        spans.append((opener.start(), closer.end()))
        position = closer.end()


def frozen_view(data: bytes) -> tuple[bytes, ...] | None:
    """The frozen blocks of ``data``, markers included, in order; None when the markers are
    unbalanced (:func:`frozen_spans`)."""
    spans = frozen_spans(data)
    return None if spans is None else tuple(data[start:end] for start, end in spans)


def put_back_blocks(before: bytes, now: bytes) -> bytes | None:
    """``now`` with each of its frozen blocks replaced by ``before``'s, in order: the agent's
    edits around the blocks are kept, the blocks are as approved. None when that cannot be
    told (the markers of either are unbalanced, or the blocks are not as many): then only the
    whole file as it was is right."""
    was, spans = frozen_view(before), frozen_spans(now)
    if was is None or spans is None or len(was) != len(spans):
        return None
    parts: list[bytes] = []
    position = 0
    for block, (start, end) in zip(was, spans, strict=True):
        parts += [now[position:start], block]
        position = end
    parts.append(now[position:])
    return b"".join(parts)


__all__ = ["FROZEN_MARK", "frozen_spans", "frozen_view", "put_back_blocks"]
