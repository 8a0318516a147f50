"""Agent backends behind one interface: claude, codex, command, replay.

:data:`REGISTRY` (in :mod:`.registry`) is the one place that maps a backend's name to its
class; the names themselves are :data:`promptdeck.core.agent_names.AGENT_NAMES`. ``replay`` is
an offline simulation for the demo and the tests, never a real agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from ..agent_names import agent_label
    from .base import Usage
    from .programs import found_default_agent
    from .registry import REGISTRY, get_agent, resolve_agent_name

_HOMES = {
    "Usage": ".base",
    "agent_label": "..agent_names",
    "REGISTRY": ".registry",
    "found_default_agent": ".programs",
    "get_agent": ".registry",
    "resolve_agent_name": ".registry",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "REGISTRY",
    "Usage",
    "agent_label",
    "found_default_agent",
    "get_agent",
    "resolve_agent_name",
]
