"""The phase choice without a screen: the flow read from real run records, the request the
preview shows, the rows of the phase list, the title of the region."""

from __future__ import annotations

from pathlib import Path

from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.run.runner import start_run
from promptdeck.core.tokens.counter import get_counter
from promptdeck.tui.session.story_phases import PhaseChoice, PhaseRow, phases_title, read_flow


def test_a_fresh_story_suggests_its_kickoff_and_the_request_follows_the_suggestion(
    demo_root: Path,
) -> None:
    workspace = open_workspace(demo_root)
    catalog = load_catalog(workspace)
    story = catalog.find("1-4")  # ready-for-dev: the flow starts at its kickoff
    choice = PhaseChoice(workspace.config)
    assert choice.flow is None and choice.note() == "no run yet"
    assert choice.why_nothing_suggested() == "the phase flow is still loading"
    assert [row.state for row in choice.rows()] == ["pending"] * 6

    choice.reading = read_flow(workspace, catalog, story)
    suggestion = choice.suggestion
    assert suggestion is not None and suggestion.phase == "kickoff"
    assert choice.note() == f"next: kickoff — {suggestion.why}"
    selection = Selection(discovery=True)
    assert choice.request("1-4", "kickoff", "create", selection) == PromptRequest(
        "1-4", phase="kickoff", mode="create", selection=selection, variant="standard"
    )
    # Another phase than the suggested one: a plain request of it.
    plain = choice.request("1-4", "dev", "optimize", selection)
    assert (plain.phase, plain.mode, plain.failure) == ("dev", "optimize", None)
    rows = choice.rows(running="dev")
    assert rows[0] == PhaseRow("kickoff", "suggested", 1)
    assert rows[1] == PhaseRow("dev", "running", 0)


def test_attempts_and_states_come_from_the_run_records(demo_root: Path) -> None:
    workspace = open_workspace(demo_root)
    catalog = load_catalog(workspace)
    counter = get_counter("o200k_base")
    prompt = compose_prompt(workspace, catalog, PromptRequest("1-4", phase="dev"), counter=counter)
    handle = start_run(workspace, prompt, agent="replay", use_git=False)
    result = handle.wait(60)
    story = catalog.find("1-4")

    reading = read_flow(workspace, catalog, story)
    assert reading.story_id == "1-4" and dict(reading.attempts) == {"dev": 1}
    assert reading.flow.states["dev"] == ("done" if result.outcome == "success" else "failed")
    choice = PhaseChoice(workspace.config)
    choice.reading = reading
    dev = next(row for row in choice.rows() if row.name == "dev")
    assert dev.attempt >= 1


def test_a_variant_chosen_for_a_phase_is_kept_and_goes_into_its_request(demo_root: Path) -> None:
    workspace = open_workspace(demo_root)
    choice = PhaseChoice(workspace.config)
    assert choice.variant_of("review") == "standard"
    assert choice.toggle_variant("review") == "party"
    assert choice.request("1-1", "review", "create", Selection()).variant == "party"
    assert choice.variant_of("dev") == "standard"
    assert choice.toggle_variant("review") == "standard"
    # dev has no party variant: nothing changes.
    assert choice.toggle_variant("dev") is None and "dev" not in choice.variants


def test_the_phases_title_says_whose_phases_they_are(demo_root: Path) -> None:
    catalog = load_catalog(open_workspace(demo_root))
    story = catalog.find("1-1")
    assert phases_title(None, "dev", "create") == "Phases"
    assert phases_title(story, "dev", "create") == "Phases · 1-1 · dev · create"
    solo = phases_title(story, "review", "optimize", solo=True)
    assert solo == f"Phases · 1-1 · review · optimize · {story.title}"


def test_a_done_story_says_why_nothing_is_suggested(demo_root: Path) -> None:
    workspace = open_workspace(demo_root)
    catalog = load_catalog(workspace)
    choice = PhaseChoice(workspace.config)
    choice.reading = read_flow(workspace, catalog, catalog.find("1-1"))
    assert choice.suggestion is None
    # 1-1 is done while the rest of epic 1 is not: the sentence `n` shows and the status line.
    said = "story done; UAT and retro follow once every story of the epic is done"
    assert choice.why_nothing_suggested() == said
    assert choice.note() == said
