"""The replay agent's party phases read their party from the prompt, as a real agent would."""

from __future__ import annotations

from pathlib import Path

from _prompt_workspace import make_workspace
from promptdeck.core.agents.replay_party import PartyContext, is_party, retro_targets
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest


def _system(root: Path, phase: str, variant: str) -> str:
    workspace = open_workspace(make_workspace(root))
    request = PromptRequest("1-2", phase=phase, variant=variant)
    return compose_prompt(workspace, load_catalog(workspace), request, count_tokens=False).system


def _context(system: str, root: Path) -> PartyContext:
    return PartyContext("1-2", "T", "1", "2026-01-03", root, "", "ok", system, lambda p, s: None)


def test_the_roster_comes_from_the_participating_agents_section(tmp_path: Path) -> None:
    system = _system(tmp_path / "a", "failure", "party")
    assert is_party(system)
    party = _context(system, tmp_path)
    assert party.agents == ["Winston", "Amelia", "Bob"]
    assert party.participants == "Winston (Architect), Amelia (Developer), Bob (Scrum Master)"
    standard = _system(tmp_path / "b", "review", "standard")
    assert not is_party(standard)


def test_retro_targets_follow_the_prompt_even_across_wrapped_lines(tmp_path: Path) -> None:
    system = _system(tmp_path, "retro", "standard")
    assert retro_targets(system, "1") == (
        "docs/sprints/epic-1-retro.md",
        "docs/handoffs/epic-1-handoff.md",
    )
    wrapped = (
        "Write the retrospective to the new file\n  `a/r.md` and the handoff to the new file\n"
        " `b/h.md`."
    )
    assert retro_targets(wrapped, "9") == ("a/r.md", "b/h.md")
    assert retro_targets("", "9") == (
        "docs/sprints/epic-9-retro.md",
        "docs/handoffs/epic-9-handoff.md",
    )
