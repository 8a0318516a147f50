"""What may reach the user's terminal: text with every control character made visible.

A story heading, a status, a file name or an agent's output line comes from a repository
cloned from anywhere. Written raw to a terminal, ``ESC ] 52 ; c ; … ESC \\`` sets the user's
clipboard, other sequences retitle the window, move the cursor or rewrite what is on screen.
:func:`printable` turns every C0 control (except newline and tab), DEL and every C1 control
into a visible stand-in — the Unicode "control picture" (``␛`` for ESC) or ``\\x9b`` for a C1
byte — so the text is still readable and nothing is interpreted. What promptdeck keeps on disk
(run records, story files) keeps the raw bytes; only what is shown passes through here.

:func:`printable_keep_style` is the CLI's last line of defence on stdout and stderr: it does
the same but lets promptdeck's own colour codes (complete SGR sequences, ``ESC [ … m``) pass.
"""

from __future__ import annotations

import re

_KEEP = {0x09, 0x0A}
_TABLE: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20) if code not in _KEEP}
_TABLE[0x7F] = "\u2421"  # ␡
_TABLE.update({code: f"\\x{code:02x}" for code in range(0x80, 0xA0)})

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SGR = re.compile(r"(\x1b\[[0-9;]*m)")


def has_controls(text: str) -> bool:
    """True when ``text`` holds a character :func:`printable` would replace."""
    return _CONTROLS.search(text) is not None


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab made visible.

    Returns ``text`` itself when it holds none (the common case costs one regex search).
    """
    if _CONTROLS.search(text) is None:
        return text
    return text.translate(_TABLE)


def printable_line(text: str) -> str:
    """One line for a table cell or a log: :func:`printable`, with newlines and tabs shown as
    spaces too, so a value can never break the layout into extra lines."""
    return printable(text).replace("\n", " ").replace("\t", " ")


def printable_keep_style(text: str) -> str:
    """:func:`printable`, except that complete SGR colour sequences (``ESC [ 1;31 m``) pass.

    For a stream that also carries promptdeck's own colours; text from the workspace or the
    agent is made :func:`printable` before it is styled, so only promptdeck's codes remain.
    """
    if _CONTROLS.search(text) is None:
        return text
    parts = _SGR.split(text)
    # split() with one group puts the separators at the odd indexes.
    return "".join(
        part if index % 2 else part.translate(_TABLE) for index, part in enumerate(parts)
    )
