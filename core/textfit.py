"""Fitting text into a column: one rule for every face, so a path reads the same in a CLI
table and in the app."""

from __future__ import annotations

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


def one_line_preview(text: str, limit: int) -> str:
    """``text`` on one line (every run of whitespace one space), cut to at most ``limit``
    characters with an ellipsis: how a tool call or its output shows in the run log."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + ELLIPSIS
