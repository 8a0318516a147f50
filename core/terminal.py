"""What may reach the user's terminal: text with every control character made visible.

A story heading, a status, a file name or an agent's output line comes from a repository
cloned from anywhere. Written raw to a terminal, ``ESC ] 52 ; c ; … ESC \\`` sets the user's
clipboard, other sequences retitle the window, move the cursor or rewrite what is on screen.
:func:`printable` turns every C0 control (except newline and tab), DEL and every C1 control
into a visible stand-in — the Unicode "control picture" (``␛`` for ESC) or ``\\x9b`` for a C1
byte — and every format character (Unicode category Cf: the bidi overrides and isolates
U+202A–U+202E and U+2066–U+2069, zero-width characters) into ``\\u202e``, so the text is still
readable, nothing is interpreted and nothing is silently reordered. What promptdeck keeps on disk
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

# Unicode's format characters (category Cf, as of Unicode 14): invisible, yet the bidi
# controls among them (U+202A–U+202E, U+2066–U+2069) reorder what the terminal shows — a file
# name or an agent line can read as something it is not ("Trojan Source"). Shown as \\u202e.
_FORMAT_RANGES = (
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)
for _first, _last in _FORMAT_RANGES:
    _TABLE.update({code: f"\\u{code:04x}" for code in range(_first, _last + 1)})
_FORMAT_CLASS = "".join(
    f"{chr(first)}-{chr(last)}" if first != last else chr(first) for first, last in _FORMAT_RANGES
)

_CONTROLS = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_FORMAT_CLASS}]")
_SGR = re.compile(r"(\x1b\[[0-9;]*m)")


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
