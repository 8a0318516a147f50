"""The file injection (seed 000): which files of the project are injected for a story, in which
order, why each is there, and whether the whole fits.

:mod:`.gather` is the prompt's injection gatherer (a story's own injection, or every story
file of its epic for UAT and retro); :mod:`.builder` builds and size-checks, and never raises
for size (``Injection.level`` says so; the seed's string API raises ``InjectionTooLarge``);
:mod:`.model` is what it builds (the ``<file_injections>`` envelope); :mod:`.candidates` plans
the files from ``stat`` and reads them through the guarded reader; :mod:`.artifacts` matches
artifact files to story keys on key boundaries. Every included file is scanned for secrets
(:mod:`promptdeck.core.secrets`); no file outside the project root is read.
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
