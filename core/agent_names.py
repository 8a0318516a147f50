"""The names of the agent backends, written once, how the screens name them, and the variables
that name the real agents' programs.

A leaf module on purpose: :mod:`promptdeck.core.project.config` validates ``agent.default`` against
these names (and :mod:`promptdeck.core.project.trust` knows the variables), and the backends
themselves import the configuration, so the names cannot live beside the backends without an
import cycle. The registry that maps each name to its backend
is :data:`promptdeck.core.agents.REGISTRY`.
"""

from __future__ import annotations

AGENT_NAMES = ("claude", "codex", "command", "replay")
"""Every backend a run can use, in the order the help texts list them."""

CLAUDE_BIN_ENV = "PROMPTDECK_CLAUDE_BIN"
"""Names the ``claude`` program to run, over the config's ``agent.claude_bin``."""
CODEX_BIN_ENV = "PROMPTDECK_CODEX_BIN"
"""Names the ``codex`` program to run, over the config's ``agent.codex_bin``."""

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
