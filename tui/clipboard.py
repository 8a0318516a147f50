"""Copying to the clipboard honestly: the system clipboard when there is one (pyperclip finds
xclip, xsel, wl-copy, pbcopy or the Windows API), else OSC 52 through the terminal, which
arrives only where the terminal allows it. The message says which it was."""

from __future__ import annotations

from collections.abc import Callable

import pyperclip


def copy_text(text: str, osc52: Callable[[str], None], what: str) -> tuple[bool, str]:
    """Copy ``text``; returns (reached the system clipboard, one line saying what happened).

    Args:
        osc52: sends ``text`` to the terminal's clipboard (the app's ``copy_to_clipboard``).
        what: what was copied, for the message (``system prompt (12,345 bytes)``).
    """
    try:
        pyperclip.copy(text)
    except pyperclip.PyperclipException:
        osc52(text)
        return False, (
            f"{what} sent to the terminal clipboard (OSC 52): no system clipboard was found, "
            "and it arrives only if the terminal allows OSC 52"
        )
    return True, f"{what} copied to the system clipboard"
