"""The file injection (seed 000): which files of the project are injected for a story, in which
order, why each is there, and whether the whole fits.

:mod:`.gather` is the prompt's injection gatherer (a story's own injection, or every story
file of its epic for UAT and retro); :mod:`.builder` builds and size-checks, and never raises
for size (``Injection.level`` says so; the seed's string API raises ``InjectionTooLarge``);
:mod:`.model` is what it builds (the ``<file_injections>`` envelope); :mod:`.candidates` plans
the files from ``stat`` and reads them through the guarded reader; :mod:`.artifacts` matches
artifact files to story keys on key boundaries; :mod:`.choices` remembers the user's
per-file include/exclude per story. Every included file is scanned for secrets
(:mod:`promptdeck.core.secrets`); no file outside the project root is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .builder import build_injection, build_prompt_system_append, build_story_injection
    from .choices import (
        normal_path,
        remember_selection,
        toggle_layer_remembered,
        toggle_remembered,
        unknown_choices,
    )
    from .model import InjectedFile, Injection, Selection

_HOMES = {
    "build_injection": ".builder",
    "build_prompt_system_append": ".builder",
    "build_story_injection": ".builder",
    "normal_path": ".choices",
    "remember_selection": ".choices",
    "toggle_layer_remembered": ".choices",
    "toggle_remembered": ".choices",
    "unknown_choices": ".choices",
    "InjectedFile": ".model",
    "Injection": ".model",
    "Selection": ".model",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "InjectedFile",
    "Injection",
    "Selection",
    "build_injection",
    "build_prompt_system_append",
    "build_story_injection",
    "normal_path",
    "remember_selection",
    "toggle_layer_remembered",
    "toggle_remembered",
    "unknown_choices",
]
