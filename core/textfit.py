"""Fitting text into a column: one rule for every face, so a path reads the same in a CLI
table and in the app."""

from __future__ import annotations

from collections.abc import Sequence

ELLIPSIS = "…"


def shorten_path(path: str, width: int) -> str:
    """``path`` in at most ``width`` cells, shortened from the middle and never at its file
    name's ends: ``docs/…/sprint-project-context.md``, else ``…/sprint-project-context.md``.

    A file name that is itself wider than ``width`` loses its middle, so both what starts it
    (a story key, ``1-3-…``) and its end (``….md``) stay readable: ``1-3-detect…actions.md``.
    """
    if len(path) <= width:
        return path
    if width <= 1:
        return path[:width]
    head, _, name = path.rpartition("/")
    if head:
        first = head.split("/", 1)[0]
        for candidate in (f"{first}/{ELLIPSIS}/{name}", f"{ELLIPSIS}/{name}"):
            if len(candidate) <= width:
                return candidate
    if len(name) <= width:
        return name
    keep = width - 1
    start = (keep + 1) // 2
    return name[:start] + ELLIPSIS + name[len(name) - (keep - start) :]


def shorten_paths(paths: Sequence[str], width: int) -> list[str]:
    """Each of ``paths`` in at most ``width`` cells, as :func:`shorten_path` shortens it, but
    kept apart: where two file names would come out the same (``1-2-pub…ages.md`` for both
    ``1-2-publish-pages.md`` and ``1-2-publish-images.md``), each keeps the part of its name
    where it differs from the others, with the start and the end of the name around it
    (``1-2…pag…s.md``, ``1-2…imag…s.md``). Paths that come out distinct are shortened as usual.
    """
    shown = [shorten_path(path, width) for path in paths]
    groups: dict[str, list[int]] = {}
    for index, text in enumerate(shown):
        groups.setdefault(text, []).append(index)
    for indexes in groups.values():
        names = sorted({paths[i].rpartition("/")[2] for i in indexes})
        if len(names) < 2:
            continue
        prefix = _shared_start(names)
        suffix = _shared_start([name[::-1] for name in names])
        for index in indexes:
            name = paths[index].rpartition("/")[2]
            shown[index] = _keep_difference(name, width, prefix, suffix)
    return shown


def _shared_start(texts: Sequence[str]) -> int:
    """How many characters every one of ``texts`` starts with alike."""
    shortest = min(texts, key=len)
    for index, char in enumerate(shortest):
        if any(text[index] != char for text in texts):
            return index
    return len(shortest)


def _keep_difference(name: str, width: int, prefix: int, suffix: int) -> str:
    """``name`` in ``width`` cells keeping what lies between its first ``prefix`` and last
    ``suffix`` characters (where it parts from the names it was confused with)."""
    if len(name) <= width:
        return name
    if width < 2 * len(ELLIPSIS) + 4:
        return shorten_path(name, width)
    middle = name[prefix : max(len(name) - suffix, prefix + 1)]
    room = width - 2 * len(ELLIPSIS)
    kept = middle[: max(min(len(middle), room - 4), 1)]
    # The key at the name's start says whose file it is; a few characters of it are enough.
    head = max(min(4, (room - len(kept)) // 2), 1)
    tail = max(room - len(kept) - head, 1)
    start = name[:prefix] + kept if prefix <= head else name[:head] + ELLIPSIS + kept
    return (start + ELLIPSIS + name[len(name) - tail :])[:width]


def one_line_preview(text: str, limit: int) -> str:
    """``text`` on one line (every run of whitespace one space), cut to at most ``limit``
    characters with an ellipsis: how a tool call or its output shows in the run log."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + ELLIPSIS
