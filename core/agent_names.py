"""The names of the agent backends, written once.

A leaf module on purpose: :mod:`promptdeck.core.project.config` validates ``agent.default`` against
these names, and the backends themselves import the configuration, so the names cannot live
beside the backends without an import cycle. The registry that maps each name to its backend
is :data:`promptdeck.core.agents.REGISTRY`.
"""

from __future__ import annotations

AGENT_NAMES = ("claude", "codex", "command", "replay")
"""Every backend a run can use, in the order the help texts list them."""
