"""The user's editor, as ``$VISUAL`` or ``$EDITOR`` name it, and how to open one file in it.

``$VISUAL`` first, then ``$EDITOR`` (the order git and most tools use). The value is split the
way a shell splits words (``code --wait`` is two words), so an editor that needs a flag works;
nothing is run through a shell, so a value holding ``;`` or ``$(…)`` runs nothing else. The
program is found as every program promptdeck starts is found
(:func:`~promptdeck.core.processes.resolve_program`): on absolute ``PATH`` entries outside the
project only, so a repository's ``bin/vi`` on a relative entry (``./bin``) never opens.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from ..processes import resolve_program

EDITOR_VARIABLES = ("VISUAL", "EDITOR")
"""Where the editor is named, first match wins."""


def editor_argv(
    path: Path, environ: Mapping[str, str] | None = None, *, root: Path | None = None
) -> list[str] | str:
    """The argv that opens ``path`` in the user's editor, or one line saying why there is none.

    Args:
        path: the file to open (passed as one argument, after every word of the variable).
        environ: the environment (default: this process's).
        root: the project root: ``PATH`` entries inside it are passed over (relative entries
            always are).
    """
    env = os.environ if environ is None else environ
    for variable in EDITOR_VARIABLES:
        value = env.get(variable, "").strip()
        if not value:
            continue
        try:
            words = shlex.split(value)
        except ValueError as exc:
            return f"${variable} ({value!r}) cannot be read as a command: {exc}"
        if not words:
            continue
        program = resolve_program(words[0], None if root is None else root.resolve(), env)
        if program is None:
            return (
                f"${variable} names {words[0]!r}, which is not an executable on an absolute "
                "PATH entry outside the project"
            )
        return [program, *words[1:], str(path)]
    return "no editor: set $EDITOR (or $VISUAL) to open files from promptdeck"
