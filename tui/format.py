"""How sizes, deltas and shares read on screen. Display only: every figure comes from core."""

from __future__ import annotations

from promptdeck.core.terminal import printable, printable_line
from promptdeck.core.units import cost_label, human_bytes, human_tokens

# Re-exported: the screens and widgets take every display helper from here.
__all__ = ["human_bytes", "human_tokens", "printable", "printable_line"]

BAR_CELLS = "▏▎▍▌▋▊▉█"


def signed(text: str, value: float) -> str:
    """Prefix ``text`` with ``+`` for a positive value (negatives carry their own ``-``)."""
    return f"+{text}" if value > 0 else text


def delta_text(byte_delta: int, token_delta: int | None) -> str:
    """The change a toggle caused, e.g. ``+38.2 KiB  +9.6k tok``; empty when nothing moved."""
    if byte_delta == 0 and not token_delta:
        return ""
    parts = [signed(human_bytes(byte_delta), byte_delta)]
    if token_delta is not None:
        parts.append(signed(human_tokens(token_delta), token_delta) + " tok")
    return "  ".join(parts)


def share_bar(part: int, whole: int, width: int = 10) -> str:
    """A bar of ``width`` cells filled in proportion to ``part / whole`` (eighths of a cell)."""
    if whole <= 0 or part <= 0 or width <= 0:
        return " " * max(width, 0)
    eighths = round(min(part / whole, 1.0) * width * 8)
    eighths = max(eighths, 1)
    full, rest = divmod(eighths, 8)
    bar = "█" * full + (BAR_CELLS[rest - 1] if rest else "")
    return bar.ljust(width)


def duration_text(seconds: float | None) -> str:
    """``0.8 s``, ``12 s``, ``3 m 05 s``; ``—`` when unknown."""
    if seconds is None:
        return "—"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} m {rest:02d} s"


def cost_text(cost: float | None) -> str:
    """``$0.0123``; ``—`` when the agent reports no cost; ``invalid (value)`` for a cost that
    is not a plausible one (:func:`promptdeck.core.units.cost_label`)."""
    return cost_label(cost)


def short_hash(digest: str | None, length: int = 8) -> str:
    """The first ``length`` characters of a hex digest, or ``missing``."""
    return digest[:length] if digest else "missing"


def _break_long(word: str, width: int) -> list[str]:
    # A word longer than the line breaks after a path separator where it can, so a path reads
    # as folders rather than cut mid-name; only a run without separators is cut by width.
    pieces: list[str] = []
    while len(word) > width:
        cut = word.rfind("/", 0, width)
        cut = cut + 1 if cut > 0 else width
        pieces.append(word[:cut])
        word = word[cut:]
    pieces.append(word)
    return pieces


def wrap_argv(argv: list[str] | tuple[str, ...], width: int, indent: int = 4) -> list[str]:
    """An argv as lines of at most ``width`` cells, shell-quoted, never split inside a word
    except a word longer than a whole line (broken after ``/``).

    The program starts the first line; each option starts a line of its own with its value
    beside it when both fit; continuation lines are indented by ``indent``.
    """
    import shlex

    width = max(width, indent + 8)
    words = [shlex.quote(word) for word in argv]
    lines: list[str] = []
    current = ""
    for index, word in enumerate(words):
        is_option = word.startswith("-")
        prefix = "" if not lines and not current else " " * indent
        if current and not is_option and len(current) + 1 + len(word) <= width:
            current += " " + word
            continue
        if current:
            lines.append(current)
        if index == 0:
            prefix = ""
        pieces = _break_long(word, width - len(prefix))
        lines.extend(prefix + piece for piece in pieces[:-1])
        current = prefix + pieces[-1]
        if index > 0 and not is_option:
            # A lone value stays on its own line: the next word starts a new one.
            lines.append(current)
            current = ""
    if current:
        lines.append(current)
    return lines


SENT = "sent"
"""The word after a prompt's size wherever the app shows it: the composed bytes the agent
receives (the meter, the copy menu, the toasts), never a file's size on disk."""


def sent_size(size: int) -> str:
    """A composed part's size as every surface of the app shows it: ``38.2 KiB sent``."""
    return f"{human_bytes(size)} {SENT}"
