"""The demo: the bundled demo workspace (``workspace/``, data) copied to a temporary folder and
git-initialised for ``promptdeck demo``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .bundle import prepare_demo, temporary_demo

_HOMES = {
    "prepare_demo": ".bundle",
    "temporary_demo": ".bundle",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "prepare_demo",
    "temporary_demo",
]
