"""Every context window a prompt is measured against comes from one place: the configured
window, whose defaults are the clients' in ``core/client_loads.py``, and a kept capture's
window where one is given, as ``context_use`` takes them."""

from __future__ import annotations

from promptdeck.core import Config
from promptdeck.core.agents.claude import ClaudeAgent
from promptdeck.core.agents.replay import ReplayAgent
from promptdeck.core.client_loads import CLIENT_WINDOWS
from promptdeck.core.fit import agent_window
from promptdeck.core.tokens.context_window import context_use


def test_the_replay_agent_measures_against_claudes_configured_window() -> None:
    config = Config(agent_claude_context_window=123_456)
    assert ReplayAgent(config).output_parser().context_window == 123_456
    assert (
        ReplayAgent(Config()).output_parser().context_window
        == ClaudeAgent(Config()).output_parser().context_window
        == CLIENT_WINDOWS["claude"]
    )


def test_a_fit_percentage_is_of_the_same_window_context_use_takes() -> None:
    for config, agent in ((Config(), "claude"), (Config(agent_default="codex"), "codex")):
        assert agent_window(config) == CLIENT_WINDOWS[agent]
        assert agent_window(config) == context_use(1, config, agent).window
        # A kept capture's window wins over the configured one, as it does for context_use.
        assert agent_window(config, 180_000) == 180_000
        assert context_use(1, config, agent, captured_window=180_000).window == 180_000
