"""Copying to the clipboard honestly: the system clipboard when there is one (``pbcopy`` on
macOS, ``wl-copy`` under Wayland, ``xclip`` or ``xsel`` under X), else OSC 52 through the
terminal, which arrives only where the terminal allows it. The message says which it was.

The clipboard program is found as every program promptdeck starts is found
(:func:`~promptdeck.core.processes.resolve_program`): on absolute ``PATH`` entries outside the
project only — a clipboard library would run whatever ``xclip`` a relative entry (``./bin``)
finds in the repository. On Windows the system clipboard is reached through its API
(pyperclip), which starts no program.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from promptdeck.core.processes import resolve_program

CLIPBOARD_TIMEOUT = 5.0
"""Seconds a clipboard program may take to take the text."""


def clipboard_programs(environ: Mapping[str, str] | None = None) -> list[tuple[str, ...]]:
    """The clipboard programs to try, in order, each with its arguments: what this session's
    display can serve."""
    env = os.environ if environ is None else environ
    if sys.platform == "darwin":
        return [("pbcopy",)]
    programs: list[tuple[str, ...]] = []
    if env.get("WAYLAND_DISPLAY"):
        programs.append(("wl-copy",))
    if env.get("DISPLAY"):
        programs += [("xclip", "-selection", "clipboard"), ("xsel", "--clipboard", "--input")]
    return programs


def system_copy(text: str, root: Path | None = None) -> bool:
    """Copy through the first clipboard program found that takes the text; False when none
    did."""
    if sys.platform == "win32":
        import pyperclip

        try:
            pyperclip.copy(text)
        except pyperclip.PyperclipException:
            return False
        return True
    for name, *args in clipboard_programs():
        program = resolve_program(name, None if root is None else root.resolve())
        if program is None:
            continue
        try:
            done = subprocess.run(
                [program, *args],
                input=text.encode("utf-8"),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=CLIPBOARD_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return True
    return False


def copy_text(
    text: str, osc52: Callable[[str], None], what: str, *, root: Path | None = None
) -> tuple[bool, str]:
    """Copy ``text``; returns (reached the system clipboard, one line saying what happened).

    Args:
        osc52: sends ``text`` to the terminal's clipboard (the app's ``copy_to_clipboard``).
        what: what was copied, for the message (``system prompt (12,345 bytes)``).
        root: the project root: ``PATH`` entries inside it are passed over (relative entries
            always are).
    """
    if not system_copy(text, root):
        osc52(text)
        return False, (
            f"{what} sent to the terminal clipboard (OSC 52): no system clipboard was found, "
            "and it arrives only if the terminal allows OSC 52"
        )
    return True, f"{what} copied to the system clipboard"
