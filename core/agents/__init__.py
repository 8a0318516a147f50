"""Agent backends behind one interface: claude, codex, command, replay.

:data:`REGISTRY` (in :mod:`.registry`) is the one place that maps a backend's name to its
class; the names themselves are :data:`promptdeck.core.agent_names.AGENT_NAMES`. ``replay`` is
an offline simulation for the demo and the tests, never a real agent.
"""

from __future__ import annotations

from .base import Usage, agent_label
from .registry import REGISTRY, found_default_agent, get_agent, resolve_agent_name

__all__ = [
    "REGISTRY",
    "Usage",
    "agent_label",
    "found_default_agent",
    "get_agent",
    "resolve_agent_name",
]
