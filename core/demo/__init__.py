"""The demo: the bundled demo workspace (``workspace/``, data) copied to a temporary folder and
git-initialised for ``promptdeck demo``.
"""

from __future__ import annotations

from .bundle import prepare_demo, temporary_demo

__all__ = [
    "prepare_demo",
    "temporary_demo",
]
