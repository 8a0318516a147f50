"""The file injection (seed 000): which files of the project are injected for a story, in which
order, why each is there, and whether the whole fits.

:mod:`.builder` builds and size-checks; :mod:`.model` is what it builds (the
``<file_injections>`` envelope); :mod:`.candidates` plans and reads the files;
:mod:`.artifacts` matches artifact files to story keys; :mod:`.choices` remembers the user's
per-file include/exclude per story.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .builder import build_injection, build_story_injection
    from .choices import normal_path, remember_selection, toggle_remembered
    from .model import InjectedFile, Injection, Selection

_HOMES = {
    "build_injection": ".builder",
    "build_story_injection": ".builder",
    "normal_path": ".choices",
    "remember_selection": ".choices",
    "toggle_remembered": ".choices",
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
    "build_story_injection",
    "normal_path",
    "remember_selection",
    "toggle_remembered",
]
