"""The main screen's controllers, each made with plain data and asked what it decides: no
screen, no app."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from promptdeck.core.injection import InjectedFile, Selection
from promptdeck.core.injection.choices import story_choice
from promptdeck.core.plans import load_catalog
from promptdeck.core.project import Workspace, open_workspace
from promptdeck.core.prompt import ComposedPrompt, PromptRequest, compose_prompt
from promptdeck.core.stories import StoryCatalog
from promptdeck.core.tokens import TokenCounter
from promptdeck.core.units import human_bytes
from promptdeck.core.vocabulary import RULES_LAYER
from promptdeck.tui.session.file_actions import REFUSAL, FileActions, Pointed
from promptdeck.tui.session.inclusion import COMPOSING, InclusionChoices
from promptdeck.tui.session.runs import suggested_run
from promptdeck.tui.session.story_phases import PhaseChoice
from promptdeck.tui.session.story_shelf import Loaded, StoryShelf
from promptdeck.tui.session.views import CacheRow, same_cache_row
from promptdeck.tui.widgets.meter_line import meter_reading


def word_counter() -> TokenCounter:
    class Words:
        def encode_ordinary(self, text: str) -> list[int]:
            return [0] * len(text.split())

    return TokenCounter("o200k_base", builder=lambda _name: Words())


@pytest.fixture
def workspace(demo_root: Path) -> Workspace:
    return open_workspace(demo_root)


@pytest.fixture
def catalog(workspace: Workspace) -> StoryCatalog:
    return load_catalog(workspace)


def composed(workspace: Workspace, catalog: StoryCatalog, **request: object) -> ComposedPrompt:
    story = catalog.stories[0]
    wanted = PromptRequest(story_id=story.id, phase="dev", **request)  # type: ignore[arg-type]
    return compose_prompt(workspace, catalog, wanted, counter=word_counter(), count_tokens=True)


def row(path: str, *, status: str = "included", category: str = "context") -> InjectedFile:
    return InjectedFile(path, category, status, 10, None, "", why="heading")  # type: ignore[arg-type]


# ---------------------------------------------------------------- inclusion


def test_a_toggle_flips_its_part_and_recomposes(tmp_path: Path) -> None:
    choices = InclusionChoices(tmp_path)
    answer = choices.toggled(Selection(), "discovery")
    assert answer.recompose and answer.selection is not None
    assert answer.selection.discovery is not Selection().discovery
    with pytest.raises(ValueError):
        choices.toggled(Selection(), "everything")


def test_a_file_is_added_once_and_removing_with_none_added_warns(tmp_path: Path) -> None:
    choices = InclusionChoices(tmp_path)
    added = choices.added(Selection(), "docs/a.md").selection
    assert added is not None and added.additional_files == ("docs/a.md",)
    assert choices.added(added, "docs/a.md").selection is None
    assert choices.added(added, None).selection is None
    removed = choices.removed(added, "docs/a.md")
    assert removed.selection is not None and removed.selection.additional_files == ()
    nothing = choices.removed(Selection(), None)
    assert (nothing.message, nothing.severity) == ("no added files to remove", "warning")


def test_keys_that_need_the_prompt_say_it_is_being_composed(tmp_path: Path) -> None:
    choices = InclusionChoices(tmp_path)
    assert choices.rules_layer(None).message == COMPOSING
    assert choices.file_choice(None, row("a.md")).message == "no file under the cursor"


def test_the_own_story_file_and_a_required_layer_stay_in(
    workspace: Workspace, catalog: StoryCatalog
) -> None:
    prompt = composed(workspace, catalog)
    choices = InclusionChoices(workspace.root)
    own = next(f for f in prompt.injection.files if f.own_story_file and f.included)
    answer = choices.file_choice(prompt, own)
    assert "story's own file: it stays in" in answer.message and not answer.recompose
    required = next(layer for layer in prompt.layers if layer.layer_id != RULES_LAYER)
    answer = choices.file_choice(prompt, None, required)
    assert answer.message == f"{required.layer_id} is required: it stays in"


def test_leaving_a_file_out_is_remembered_for_the_story(
    workspace: Workspace, catalog: StoryCatalog
) -> None:
    prompt = composed(workspace, catalog)
    other = next(f for f in prompt.injection.files if f.included and not f.own_story_file)
    answer = InclusionChoices(workspace.root).file_choice(prompt, other)
    assert answer.recompose and not answer.message
    remembered, _ = story_choice(workspace.root, prompt.story.id)
    assert other.path in remembered.excluded


# ---------------------------------------------------------------- editor and copy


def test_the_file_pointed_at_or_why_there_is_none(
    workspace: Workspace, catalog: StoryCatalog
) -> None:
    actions = FileActions(workspace)
    story = catalog.stories[0]
    assert actions.selected_file(Pointed(story)) == story.path
    assert actions.selected_file(Pointed(story, row("x.md"))) == "x.md"
    outside = actions.selected_file(Pointed(story, row("../x.md", status="outside-project")))
    assert outside.startswith(REFUSAL) and "outside the project" in outside
    assert actions.selected_file(Pointed(None)) == f"{REFUSAL}no story selected"
    fileless = replace(story, path=None)
    assert "has no file of its own" in actions.selected_file(Pointed(fileless))
    assert actions.editor_command(f"{REFUSAL}no story selected") == "no story selected"


def test_the_copy_menu_and_the_meter_give_one_sent_size(
    workspace: Workspace, catalog: StoryCatalog
) -> None:
    prompt = composed(workspace, catalog)
    actions = FileActions(workspace)
    labels = dict(actions.copy_choices(Pointed(prompt.story), None, prompt))
    reading = meter_reading(prompt, counted=True)
    assert labels["system"].endswith(f"{human_bytes(reading.system_bytes)} sent")
    assert labels["user"].endswith(f"{human_bytes(prompt.user_meter.bytes)} sent")
    copied = actions.copied("system", Pointed(prompt.story), None, prompt)
    assert copied is not None and copied.text == prompt.system
    assert f"{human_bytes(prompt.system_meter.bytes)} sent" in copied.what
    assert len(prompt.system.encode()) == prompt.system_meter.bytes


# ---------------------------------------------------------------- the shelf


def test_the_first_catalog_opens_on_the_place_left_and_a_reload_keeps_the_story(
    catalog: StoryCatalog,
) -> None:
    from promptdeck.tui.session.last_place import LastPlace

    second = catalog.stories[1]
    shelf = StoryShelf(LastPlace(second.id, "review"))
    shelved = shelf.shelve(Loaded(catalog), None, {})
    assert shelved.chosen == second and not shelved.kept
    again = shelf.shelve(Loaded(catalog), second, {})
    assert again.chosen == second and again.kept


def test_a_place_naming_a_story_gone_opens_on_the_first_with_one_note(
    catalog: StoryCatalog,
) -> None:
    from promptdeck.tui.session.last_place import NOTICE_SOURCE, LastPlace

    shelf = StoryShelf(LastPlace("99-99", "dev"))
    shelved = shelf.shelve(Loaded(catalog), None, {})
    assert shelved.chosen == catalog.stories[0]
    notes = [lines for source, lines in shelved.notices if source == NOTICE_SOURCE]
    assert len(notes) == 1 and "99-99" in str(notes[0][0])


# ---------------------------------------------------------------- views and runs


def test_the_cache_row_is_cleared_for_another_state_and_measured_once() -> None:
    row_ = CacheRow()
    dev = PromptRequest(story_id="1-1", phase="dev")
    assert row_.shown(dev) == (True, True)
    assert row_.shown(replace(dev, mode="optimize")) == (False, False)
    assert same_cache_row(dev, replace(dev, mode="optimize"))
    assert row_.shown(replace(dev, phase="review")) == (True, False)

    measured: list[PromptRequest] = []
    shown: list[str] = []

    async def measure(request: PromptRequest) -> str:
        measured.append(request)
        return f"row of {request.phase}"

    asyncio.run(row_.follow(measure, shown.append, 0))
    assert shown == ["row of review"] and len(measured) == 1 and not row_.measuring


def test_next_says_why_when_the_flow_suggests_nothing(workspace: Workspace) -> None:
    choice = PhaseChoice(workspace.config)
    step = suggested_run(choice, "1-1", ("dev", "create"), Selection())
    assert step == "the phase flow is still loading"
