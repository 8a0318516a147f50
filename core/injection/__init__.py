"""The file injection (seed 000): which files of the project are injected for a story, in which
order, why each is there, and whether the whole fits.

:mod:`.builder` builds and size-checks; :mod:`.model` is what it builds (the
``<file_injections>`` envelope); :mod:`.candidates` plans and reads the files;
:mod:`.artifacts` matches artifact files to story keys.
"""

from __future__ import annotations

from .builder import build_injection, build_story_injection
from .model import InjectedFile, Injection, Selection

__all__ = [
    "InjectedFile",
    "Injection",
    "Selection",
    "build_injection",
    "build_story_injection",
]
