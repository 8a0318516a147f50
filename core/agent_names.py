"""The names of the agent backends, written once, and how the screens name them.

A leaf module on purpose: :mod:`promptdeck.core.project.config` validates ``agent.default`` against
these names, and the backends themselves import the configuration, so the names cannot live
beside the backends without an import cycle. The registry that maps each name to its backend
is :data:`promptdeck.core.agents.REGISTRY`.
"""

from __future__ import annotations

AGENT_NAMES = ("claude", "codex", "command", "replay")
"""Every backend a run can use, in the order the help texts list them."""

SIMULATIONS = frozenset({"replay"})
"""Backends that only pretend: their work is invented, their cost is not money."""


def is_simulation(name: str) -> bool:
    """True for a backend whose runs are a simulation (``replay``)."""
    return name in SIMULATIONS


def agent_label(name: str) -> str:
    """How a backend is named on screen: ``replay (simulation)``; ``none`` when unset."""
    if not name:
        return "none"
    return f"{name} (simulation)" if is_simulation(name) else name
