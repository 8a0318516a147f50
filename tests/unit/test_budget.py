"""Per-phase token budgets: measured on the prompt the agent would be sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from _prompt_workspace import make_workspace
from promptdeck.core.errors import ConfigError, OverBudget
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.config import Config, config_from_mapping
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.prompt.budget import check_budget, enforce_budget, phase_budget
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest


def _prompt(tmp_path: Path, config: Config):
    workspace = Workspace(make_workspace(tmp_path / "ws").resolve(), config)
    return compose_prompt(workspace, load_catalog(workspace), PromptRequest("1-2", phase="review"))


def test_budget_compares_system_and_user_tokens(tmp_path: Path) -> None:
    prompt = _prompt(tmp_path, Config())
    used = (prompt.system_meter.tokens or 0) + (prompt.user_meter.tokens or 0)
    assert used > 0
    fits = check_budget(prompt, Config(budget_review=used))
    assert not fits.over and fits.tokens == used and "100 %, within" in fits.describe()
    over = Config(budget_review=used - 1)
    with pytest.raises(OverBudget) as raised:
        enforce_budget(prompt, over)
    assert raised.value.exit_code == 9
    assert f"{used:,} o200k_base tokens, over its budget of {used - 1:,}" in str(raised.value)
    assert not check_budget(prompt, Config()).over
    assert "no token budget" in check_budget(prompt, Config()).describe()
    assert phase_budget(Config(budget_dev=5), "dev") == 5


def test_uncounted_prompts_are_never_judged_over(tmp_path: Path) -> None:
    workspace = Workspace(make_workspace(tmp_path / "ws").resolve(), Config(budget_review=1))
    prompt = compose_prompt(
        workspace, load_catalog(workspace), PromptRequest("1-2", phase="review"), count_tokens=False
    )
    check = check_budget(prompt, workspace.config)
    assert check.tokens is None and not check.over and "not counted yet" in check.describe()


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("budget", "dev", -1),
        ("budget", "retro", "lots"),
        ("paths", "retro", "/etc/retro.md"),
        ("paths", "handoff", "../out/{id}.md"),
        ("paths", "handoff", "  "),
        ("flow", "honour_analysis", "yes"),
        ("party", "review", 1),
    ],
)
def test_new_settings_are_validated(section: str, key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"{section}.{key}"):
        config_from_mapping({section: {key: value}}, "config.toml")


def test_retro_and_handoff_paths_are_configurable(tmp_path: Path) -> None:
    config = config_from_mapping(
        {"paths": {"retro": "notes/retro-{id}.md", "handoff": "notes/next-{id}.md"}}, "c.toml"
    )
    workspace = Workspace(make_workspace(tmp_path / "ws").resolve(), config)
    prompt = compose_prompt(
        workspace, load_catalog(workspace), PromptRequest("1-2", phase="retro"), count_tokens=False
    )
    assert "`notes/retro-1.md`" in prompt.system and "`notes/next-1.md`" in prompt.system
    assert "docs/sprints" not in prompt.system
