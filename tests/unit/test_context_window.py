"""The prompt's place in the model's context window, with the client's overhead measured or
estimated, and the rules file a client would read twice."""

from __future__ import annotations

from promptdeck.core.project.config import Config
from promptdeck.core.tokens.context_window import (
    ESTIMATED_CLIENT_OVERHEAD,
    context_use,
    rules_read_twice,
)


def test_the_estimate_stands_in_until_a_measure_is_given() -> None:
    config = Config(agent_claude_context_window=200_000, agent_codex_context_window=272_000)
    estimated = context_use(40_000, config, "claude")
    assert estimated.overhead == ESTIMATED_CLIENT_OVERHEAD["claude"]
    assert not estimated.overhead_measured
    assert estimated.used == 40_000 + estimated.overhead
    assert estimated.free == 200_000 - estimated.used
    measured = context_use(40_000, config, "claude", client_overhead=21_345)
    assert measured.overhead == 21_345 and measured.overhead_measured
    assert context_use(40_000, config, "codex").window == 272_000
    assert context_use(40_000, config, "replay").overhead == 0


def test_a_window_already_full_has_nothing_free() -> None:
    use = context_use(250_000, Config(agent_claude_context_window=200_000), "claude")
    assert use.free == 0 and use.share > 1.0


def test_the_client_rules_file_as_workspace_rules_is_read_twice() -> None:
    assert rules_read_twice("CLAUDE.md", "claude") is not None
    assert rules_read_twice("agents.md", "codex") is not None
    assert rules_read_twice("docs/AGENTS.md", "codex") is None
    assert rules_read_twice("AGENTS.md", "claude") is None
    assert rules_read_twice(".promptdeck/rules.md", "claude") is None
    assert rules_read_twice("CLAUDE.md", "replay") is None


def test_the_context_view_gets_the_clients_reserve_and_compaction_buffer() -> None:
    use = context_use(10_000, Config(), "claude", client_overhead=17_600)
    assert use.kept_back is not None
    assert (use.kept_back.output_reserve, use.kept_back.autocompact_buffer) == (20_000, 13_000)
    assert use.before_compaction == 200_000 - 27_600 - 33_000
    captured = context_use(10_000, Config(), "claude", 17_600, captured_window=1_000_000)
    assert captured.window == 1_000_000
    assert context_use(1, Config(), "replay").kept_back is None
