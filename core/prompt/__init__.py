"""The prompt: what every face shows and every agent receives.

:func:`compose_prompt` (in :mod:`.compose`) gathers the story, its injection, the phase's
transfers and the layers; around it live the story prompt, the retro's context, party
variants, learnings, verification commands, export, prompt differences, budgets and the
prompt's composition (what to leave out so it fits is :mod:`promptdeck.core.fit`'s).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .budget import check_budget, enforce_budget, phase_budget
    from .compose import compose_prompt
    from .composition import FILLS, chart_lines, composition_of
    from .diff import compare, diff_text, last_run_of, side_of_prompt, side_of_run
    from .export import (
        EXPORT_NAMES,
        EXPORTS_RELPATH,
        default_export_dir,
        export_files,
        write_export,
    )
    from .party import PARTY_PHASES, default_variant
    from .request import ComposedPrompt, FailureInfo, PromptRequest

_HOMES = {
    "check_budget": ".budget",
    "enforce_budget": ".budget",
    "phase_budget": ".budget",
    "compose_prompt": ".compose",
    "FILLS": ".composition",
    "chart_lines": ".composition",
    "composition_of": ".composition",
    "compare": ".diff",
    "diff_text": ".diff",
    "last_run_of": ".diff",
    "side_of_prompt": ".diff",
    "side_of_run": ".diff",
    "EXPORT_NAMES": ".export",
    "EXPORTS_RELPATH": ".export",
    "default_export_dir": ".export",
    "export_files": ".export",
    "write_export": ".export",
    "PARTY_PHASES": ".party",
    "default_variant": ".party",
    "ComposedPrompt": ".request",
    "FailureInfo": ".request",
    "PromptRequest": ".request",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "EXPORTS_RELPATH",
    "EXPORT_NAMES",
    "FILLS",
    "PARTY_PHASES",
    "ComposedPrompt",
    "FailureInfo",
    "PromptRequest",
    "chart_lines",
    "check_budget",
    "compare",
    "compose_prompt",
    "composition_of",
    "default_export_dir",
    "default_variant",
    "diff_text",
    "enforce_budget",
    "export_files",
    "last_run_of",
    "phase_budget",
    "side_of_prompt",
    "side_of_run",
    "write_export",
]
