"""What each client loads by itself, in one home: Codex's one budget, Claude Code's path-scoped
rules, the windows and what the clients keep back of them."""

from __future__ import annotations

from pathlib import Path

from promptdeck.core.client_loads import (
    CODEX_PROJECT_DOC_MAX_BYTES,
    codex_kept,
    folders_down,
    project_root,
    rule_applies,
    rule_paths,
    window_budget,
)


def test_codex_keeps_whole_files_until_its_one_budget_runs_out() -> None:
    budget = CODEX_PROJECT_DOC_MAX_BYTES
    assert codex_kept([40 * 1024, 100]) == [budget, 0]
    assert codex_kept([100, budget, 5]) == [100, budget - 100, 0]


def test_the_chain_starts_at_the_nearest_git_root(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert project_root(deep) == tmp_path.resolve()
    assert folders_down(tmp_path, deep) == [tmp_path.resolve(), tmp_path / "a", deep]


def test_a_path_scoped_rule_waits_for_a_matching_file() -> None:
    scoped = "---\npaths:\n  - 'src/**/*.ts'\n---\nUse strict types.\n"
    assert rule_paths(scoped) == ("src/**/*.ts",)
    assert not rule_applies(rule_paths(scoped), ".")
    assert rule_paths('---\npaths: ["**"]\n---\nall\n') == ("**",)
    assert rule_applies(("**",), ".")
    assert rule_applies((), ".")


def test_the_clients_keep_back_an_output_reserve_and_a_compaction_buffer() -> None:
    claude = window_budget("claude", "claude-sonnet-4-5")
    assert (claude.window, claude.output_reserve, claude.autocompact_buffer) == (
        200_000,
        20_000,
        13_000,
    )
    assert claude.usable == 167_000
    codex = window_budget("codex", "gpt-6.2-sol")
    assert codex.window == 500_000 and codex.usable == 450_000
    assert window_budget("claude", "x", captured=1_000_000).source == "capture"
