"""Party mode (seed 002): the four party variants, personas as data, and isolation."""

from __future__ import annotations

from pathlib import Path

import pytest
from _prompt_workspace import STORY_1_2, make_workspace
from promptdeck.core.errors import ComposeError, UsageError
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.party import PARTY_PHASES, default_variant, load_persona, party_for
from promptdeck.core.prompt.request import ComposedPrompt, FailureInfo, PromptRequest
from promptdeck.core.run.optional_phases import auto_plan, parse_with


@pytest.fixture()
def workspace(tmp_path: Path) -> Workspace:
    return open_workspace(make_workspace(tmp_path / "ws"))


def compose(workspace: Workspace, phase: str, variant: str | None = "party", **kw: object):
    request = PromptRequest("1-2", phase=phase, variant=variant, **kw)  # type: ignore[arg-type]
    return compose_prompt(workspace, load_catalog(workspace), request, count_tokens=False)


def layer(prompt: ComposedPrompt, layer_id: str) -> str:
    return next(x for x in prompt.layers if x.layer_id == layer_id).content


def test_party_kickoff_has_the_seeds_participants_and_insights_section(workspace) -> None:
    prompt = compose(workspace, "kickoff")
    entry = layer(prompt, "Layer-3")
    for label in ("Winston (Architect)", "Amelia (Developer)", "Murat (Test Architect)"):
        assert f"### {label}" in entry
    assert "**Communication style**" in entry and "**Focus**" in entry
    assert "## Story Kickoff Insights" in entry and "**Discussion Date**" in entry
    assert (
        "**Participants**: Winston (Architect), Amelia (Developer), Murat (Test Architect)" in entry
    )
    for part in ("Architectural Notes", "Implementation Strategy", "Testing Approach"):
        assert f"### {part}" in entry
    assert "### Identified Risks" in entry
    assert "`KICKOFF COMPLETE: 1-2`" in layer(prompt, "Layer-2")
    assert prompt.variant == "party"
    assert prompt.layers[4].source == "template:layer-3-entry-party-kickoff.md"


def test_party_review_keeps_the_reviews_inputs_signals_and_policy(workspace) -> None:
    standard, party = compose(workspace, "review", None), compose(workspace, "review")
    entry = layer(party, "Layer-3")
    assert "git diff --staged" in entry and "cross-discussion" in entry
    assert "### Consensus" in entry and "`## Party Review Record`" in entry
    assert "seeing this code for the first time" in entry
    for severity in ("HIGH", "MEDIUM", "LOW"):
        assert severity in entry
    # Same contract (signals), same story context, same injected files: isolation intact.
    assert layer(party, "Layer-2") == layer(standard, "Layer-2")
    assert party.injection.text == standard.injection.text
    head, rest = layer(party, "Layer-5").split("## Variant: Party code review", 1)
    assert head + "## Transfers" + rest.split("## Transfers", 1)[1] == layer(standard, "Layer-5")
    assert "Party Review Record" in layer(party, "Layer-6")
    assert "Code Review Record" in layer(standard, "Layer-6")
    for text in (party.system, party.user):
        assert "Dev Agent Record" not in party.user
        assert "dead end" not in text.lower()


def test_party_failure_has_winston_amelia_bob_and_the_failure_block(workspace) -> None:
    failure = FailureInfo.for_phase("dev", "Cannot resolve a circular import")
    prompt = compose(workspace, "failure", failure=failure)
    entry = layer(prompt, "Layer-3")
    assert "Winston (Architect)" in entry and "Bob (Scrum Master)" in entry
    assert "Assess if this is an architectural issue" in entry
    assert "Assess if this is a requirements or process issue" in entry
    assert "`## Failure Analysis Record`" in entry
    context = layer(prompt, "Layer-5")
    assert "## Failure Information" in context
    assert '- **Message**: "Cannot resolve a circular import"' in context
    assert "ANALYSIS COMPLETE: 1-2 - Retry|Skip|Escalate" in layer(prompt, "Layer-2")


def test_party_retro_and_layer5_note_say_which_variant(workspace) -> None:
    prompt = compose(workspace, "retro")
    assert prompt.layers[4].source == "template:layer-3-entry-party-retro.md"
    assert "## Variant: Party retrospective" in layer(prompt, "Layer-5")
    assert "persona:bob.md" in layer(prompt, "Layer-5")
    assert "## Variant" not in layer(compose(workspace, "retro", None), "Layer-5")


def test_dev_and_uat_have_no_party_variant(workspace) -> None:
    for phase in ("dev", "uat"):
        with pytest.raises(UsageError, match="no party variant"):
            compose(workspace, phase)
    with pytest.raises(UsageError, match="unknown variant"):
        compose(workspace, "review", "carnival")


def test_workspace_personas_override_the_bundled_ones(workspace) -> None:
    folder = workspace.root / ".promptdeck" / "personas"
    folder.mkdir(parents=True)
    (folder / "winston.md").write_text(
        "# Wanda (Principal Architect)\n\n- **Icon**: 🧭\n- **Focus**: boundaries\n"
    )
    prompt = compose(workspace, "review")
    assert "### Wanda (Principal Architect)" in layer(prompt, "Layer-3")
    assert '🧭 **Wanda**: "…"' in layer(prompt, "Layer-3")
    assert ".promptdeck/personas/winston.md" in layer(prompt, "Layer-5")
    (folder / "winston.md").write_text("no heading here\n")
    with pytest.raises(ComposeError, match="Name \\(Role\\)"):
        compose(workspace, "review")
    (folder / "winston.md").write_bytes(b"\xff\xfe")
    with pytest.raises(ComposeError, match="not UTF-8"):
        compose(workspace, "review")


def test_a_persona_override_outside_the_project_is_never_read(tmp_path: Path) -> None:
    workspace = open_workspace(make_workspace(tmp_path / "ws"))
    secret = tmp_path / "secret.md"
    secret.write_text("# Eve (Attacker)\n- token: hunter2\n")
    folder = workspace.root / ".promptdeck" / "personas"
    folder.mkdir(parents=True)
    (folder / "bob.md").symlink_to(secret)
    with pytest.raises(ComposeError, match="outside the project"):
        load_persona(workspace, "bob")


def test_config_defaults_pick_the_party_variant() -> None:
    config = Config(party_review=True)
    assert default_variant(config, "review") == "party"
    assert default_variant(config, "kickoff") == "standard"
    assert default_variant(config, "dev") == "standard"
    assert {p: len(party_for(None, p).personas) for p in PARTY_PHASES} == {
        "kickoff": 3,
        "review": 3,
        "failure": 3,
        "retro": 4,
    }


def test_auto_plan_runs_optional_phases_only_when_asked() -> None:
    plan = auto_plan(Config())
    assert plan.skip == {"kickoff", "failure", "retro"}
    assert plan.describe() == "dev → review → uat"
    plan = auto_plan(Config(flow_auto_retro=True), party={"kickoff", "review"})
    assert plan.skip == {"failure"}
    assert plan.variants["review"] == "party" and plan.variants["retro"] == "standard"
    assert plan.describe() == "kickoff (party) → dev → review (party) → uat → retro"
    assert auto_plan(Config(party_retro=True), asked={"retro"}).variants["retro"] == "party"
    assert (
        auto_plan(Config(party_retro=True), asked={"retro"}, standard=True).variants["retro"]
        == "standard"
    )
    assert parse_with("kickoff, retro") == {"kickoff", "retro"}
    with pytest.raises(UsageError):
        parse_with("dev")


def test_standard_story_file_path_is_the_same_in_every_variant(workspace) -> None:
    for phase in ("kickoff", "review", "failure"):
        prompt = compose(workspace, phase)
        assert STORY_1_2 in {f.path for f in prompt.injection.included()}
