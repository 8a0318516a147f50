"""Does it fit: the fewest files to leave out so a prompt fits a size, and the lines the
clients cut at.

:mod:`.target` parses a target (``120KiB``, ``30000t``, ``80%``); :mod:`.solver` finds the
minimal drop, checked by composing the prompt without it; :mod:`.advice` is that drop against the
injection's error line (the refusal's advice); :mod:`.cuts` lists where the clients
themselves cut or warn (Codex's AGENTS.md budget, Claude Code's large-CLAUDE.md warning, the
one-argument limit, BMAD's size targets).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .advice import SizeOption, size_options
    from .cuts import CutLine, cut_lines
    from .solver import FitAnswer, composed_measure, default_fit, minimal_drop, solve
    from .target import agent_window, parse_target

_HOMES = {
    "SizeOption": ".advice",
    "size_options": ".advice",
    "CutLine": ".cuts",
    "cut_lines": ".cuts",
    "FitAnswer": ".solver",
    "agent_window": ".target",
    "composed_measure": ".solver",
    "default_fit": ".solver",
    "minimal_drop": ".solver",
    "parse_target": ".target",
    "solve": ".solver",
}
"""Each public name and the module of this room that defines it (imported on first use: the
app's meters need the cut lines, not the solver)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "CutLine",
    "FitAnswer",
    "SizeOption",
    "agent_window",
    "composed_measure",
    "cut_lines",
    "default_fit",
    "minimal_drop",
    "parse_target",
    "size_options",
    "solve",
]
