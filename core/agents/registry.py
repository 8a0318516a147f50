"""Agent backends behind one interface: claude, codex, command, replay.

:data:`REGISTRY` is the one place that maps a backend's name to its class; the names
themselves are :data:`promptdeck.core.agent_names.AGENT_NAMES`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..agent_names import AGENT_NAMES
from ..errors import NoAgentError, UsageError
from ..project.config import Config
from .base import Agent
from .claude import ClaudeAgent
from .codex import CodexAgent
from .command import CommandAgent
from .programs import claude_binary, found_default_agent
from .replay import ReplayAgent

AgentFactory = Callable[[Config, str | None], Agent]
"""Builds a backend from the settings and the replay script (only ``replay`` reads it)."""

REGISTRY: dict[str, AgentFactory] = {
    "claude": lambda config, _script: ClaudeAgent(config),
    "codex": lambda config, _script: CodexAgent(config),
    "command": lambda config, _script: CommandAgent(config),
    "replay": lambda config, script: ReplayAgent(config, script=script),
}
"""Every backend by name; its keys are exactly :data:`AGENT_NAMES`."""

# Why a check at import: a name added to AGENT_NAMES without a backend (or the reverse)
# would otherwise surface only when a user picks it.
if tuple(REGISTRY) != AGENT_NAMES:  # pragma: no cover - a programming error
    raise RuntimeError(f"agent registry {tuple(REGISTRY)} differs from {AGENT_NAMES}")


def resolve_agent_name(name: str | None, config: Config) -> str:
    """The backend a run uses: ``name``, else :func:`found_default_agent`.

    Raises:
        NoAgentError: none named and no real agent found (exit 2). A simulation is never
            picked on its own: ``replay`` runs only when named.
    """
    chosen = name or found_default_agent(config)
    if chosen:
        return chosen
    raise NoAgentError(
        f"no agent to run: Claude Code (`{claude_binary(config)}`) was not found; pick one "
        "with --agent claude|codex|command, [agent] default in .promptdeck/config.toml or "
        "PROMPTDECK_CLAUDE_BIN (--agent replay is an offline simulation)"
    )


def get_agent(name: str, config: Config, *, replay_script: str | None = None) -> Agent:
    """The backend called ``name`` (one of :data:`AGENT_NAMES`), set up from ``config``.

    Raises:
        UsageError: an unknown backend name.
    """
    factory = REGISTRY.get(name)
    if factory is None:
        choices = ", ".join(AGENT_NAMES[:-1]) + f" or {AGENT_NAMES[-1]}"
        raise UsageError(f"--agent {name}: unknown agent (choose {choices})")
    return factory(config, replay_script)
