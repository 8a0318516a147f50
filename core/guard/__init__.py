"""The plan guard: what an agent's phase may write in the plan, and the check that holds it
to that.

promptdeck owns the plan's bookkeeping: it writes a story's status back after a phase
(:mod:`promptdeck.core.plans.writeback`). An agent that rewrites the plan itself — reverts a
status promptdeck wrote, rewrites a finished story, edits the epics — is stopped twice: where
the client enforces it, the client refuses the edit (the run's launch names
:attr:`WriteScope.protected`); and always, after the fact, :class:`ScopeGuard` puts back every
protected file that changed and the run ends ``scope-violated`` (exit 13).

:mod:`.scope` says what a phase may not change (:func:`write_scope`); :mod:`.check` records,
compares and restores (:class:`ScopeGuard`); :mod:`.frozen` reads BMAD's
``<frozen-after-approval>`` blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .check import VIOLATIONS_FILE, ScopeCheck, ScopeGuard, ScopeViolation
    from .frozen import frozen_view
    from .scope import WriteScope, write_scope

_HOMES = {
    "VIOLATIONS_FILE": ".check",
    "ScopeCheck": ".check",
    "ScopeGuard": ".check",
    "ScopeViolation": ".check",
    "frozen_view": ".frozen",
    "WriteScope": ".scope",
    "write_scope": ".scope",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "VIOLATIONS_FILE",
    "ScopeCheck",
    "ScopeGuard",
    "ScopeViolation",
    "WriteScope",
    "frozen_view",
    "write_scope",
]
