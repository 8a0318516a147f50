"""How much of the model's context window a prompt takes before the run, like Claude Code's
``/context``: the composed prompt (system and user message), the client's own overhead (its
built-in system prompt and tool definitions, which promptdeck does not send but the model
reads), and what is left.

The overhead is a parameter: a measured figure when one is known (a captured run of the real
client), else :data:`ESTIMATED_CLIENT_OVERHEAD`, always said to be an estimate. The counts
are the composer's (``o200k_base`` by default), not the provider's tokenizer: a share, not a
bill.

The client also loads its own rules file (Claude Code reads ``CLAUDE.md``, Codex reads
``AGENTS.md``): when that same file is the workspace rules of Layer-0B, the model reads it
twice, and :func:`rules_read_twice` says so.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from ..client_loads import OWN_RULES_FILE, WindowFigures, window_budget
from ..lean_dataclass import dataclass
from ..project.config import Config

ESTIMATED_CLIENT_OVERHEAD = {"claude": 15_000, "codex": 10_000}
"""Tokens a client adds of its own, estimated (Claude Code: its system prompt and tool
definitions, which ``/context`` shows at about 15k; Codex: its instructions and tools). Other
agents (the replay simulation, a plain command) add none."""


@dataclass(frozen=True)
class ContextUse:
    """A prompt's place in a context window.

    Attributes:
        window: the model's context window, in tokens.
        prompt_tokens: the composed system prompt and user message.
        overhead: the client's own tokens (measured or estimated).
        overhead_measured: True when ``overhead`` was measured, not estimated.
        kept_back: the client's output reserve and auto-compact buffer in this window (None
            for an agent that keeps none back).
    """

    window: int
    prompt_tokens: int
    overhead: int
    overhead_measured: bool
    kept_back: WindowFigures | None = None

    @property
    def before_compaction(self) -> int:
        """Tokens left for the agent's work before the client compacts the conversation."""
        held = self.kept_back
        reserved = held.output_reserve + held.autocompact_buffer if held else 0
        return max(self.window - self.used - reserved, 0)

    @property
    def used(self) -> int:
        """Tokens taken before the agent has read or written anything."""
        return self.prompt_tokens + self.overhead

    @property
    def share(self) -> float:
        """``used`` as a share of the window (may pass 1.0)."""
        return self.used / self.window

    @property
    def free(self) -> int:
        """Tokens left for the agent's work (0 when the window is already full)."""
        return max(self.window - self.used, 0)


def context_window_of(config: Config, agent: str) -> int:
    """The context window of ``agent``'s model, as the workspace configures it (Codex has its
    own setting; every other agent takes Claude's)."""
    if agent == "codex":
        return config.agent_codex_context_window
    return config.agent_claude_context_window


def context_use(
    prompt_tokens: int,
    config: Config,
    agent: str,
    client_overhead: int | None = None,
    captured_window: int | None = None,
) -> ContextUse:
    """Where a prompt of ``prompt_tokens`` stands in ``agent``'s window.

    Args:
        prompt_tokens: the composed system prompt and user message, counted.
        config: the workspace's config (the context windows).
        agent: the agent that will run (``claude``, ``codex``, ``replay`` …).
        client_overhead: the client's own tokens when measured; None takes the estimate.
        captured_window: the window a capture of the client reported (it wins over the
            configured one).
    """
    measured = client_overhead is not None
    overhead = client_overhead if client_overhead is not None else 0
    if not measured:
        overhead = ESTIMATED_CLIENT_OVERHEAD.get(agent, 0)
    window = captured_window or context_window_of(config, agent)
    kept = window_budget(agent, window=window) if agent in ("claude", "codex") else None
    return ContextUse(window, prompt_tokens, overhead, measured, kept)


def rules_read_twice(rules_path: str, agent: str) -> str | None:
    """One line when the workspace rules file is also the file ``agent`` loads by itself
    (``CLAUDE.md`` for Claude Code, ``AGENTS.md`` for Codex), else None."""
    own = OWN_RULES_FILE.get(agent)
    path = PurePosixPath(rules_path)
    # The clients read the file at the project root (the folder they are started in).
    if own is None or str(path.parent) != "." or path.name.lower() != own.lower():
        return None
    return (
        f"{rules_path} is the workspace rules file (Layer-0B) and {agent} also loads {own} "
        "by itself: the model reads it twice (set [paths] rules to another file, or leave "
        "it out of Layer-0B)"
    )
