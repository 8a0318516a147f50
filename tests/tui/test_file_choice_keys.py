"""``space`` on a file row leaves the file out (or takes it in), remembered for the story, and
``f`` answers with the fewest files to leave out and the clients' cut lines."""

from __future__ import annotations

from pathlib import Path

from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.injection.choices import story_choice
from promptdeck.core.layers import PromptLayer
from promptdeck.core.project import open_workspace
from promptdeck.core.prompt import PromptRequest, compose_prompt
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.screens.text_view import TextViewScreen
from promptdeck.tui.session.preview_words import notes_text
from promptdeck.tui.widgets.files_table import FilesTable
from promptdeck.tui.widgets.layers_table import LayersTable

CONTEXT = "_bmad-output/planning-artifacts/sprint-project-context.md"
STORY = "_bmad-output/implementation-artifacts/1-1-parse-csv-statement-rows.md"


def _row(files: FilesTable, path: str) -> int:
    return [f.path for f in files.shown_files].index(path)


@run_async
async def test_space_leaves_a_file_out_and_space_again_takes_it_back(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        files = screen.query_one(FilesTable)
        files.focus()
        files.move_cursor(row=_row(files, CONTEXT))
        await pilot.press("space")

        def status() -> str:
            return {f.path: f for f in files.shown_files}[CONTEXT].status

        await wait_for(pilot, lambda: status() == "excluded", "the context left out")
        assert screen.prompt is not None and f'<file path="{CONTEXT}">' not in screen.prompt.system
        assert story_choice(demo_root, "1-1")[0].excluded == (CONTEXT,)
        files.move_cursor(row=_row(files, CONTEXT))
        await pilot.press("space")
        await wait_for(pilot, lambda: status() == "included", "the context back in")
        assert story_choice(demo_root, "1-1")[0].empty
        # The story's own file stays, whatever is pressed.
        files.move_cursor(row=_row(files, STORY))
        await pilot.press("space")
        await pilot.pause()
        assert {f.path: f for f in files.shown_files}[STORY].status == "included"
        assert story_choice(demo_root, "1-1")[0].empty


@run_async
async def test_f_answers_with_the_fit(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for_preview(pilot, "1-1")
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, TextViewScreen), "the fit view")
        assert isinstance(app.screen, TextViewScreen)
        text = app.screen._view_text
        assert "it fits, nothing to leave out" in text
        assert "· linux one-argument limit: the system prompt is" in text


def test_the_notes_say_when_a_toggle_has_nothing_to_switch(demo_root: Path) -> None:
    workspace = open_workspace(demo_root)
    prompt = compose_prompt(workspace, None, PromptRequest("1-2", "dev"), count_tokens=False)
    notes = notes_text(prompt, workspace.config)
    assert notes.startswith("[p] project on  [d] no discovery files  [t] no tech-spec files")
    with_files = compose_prompt(workspace, None, PromptRequest("1-1", "dev"), count_tokens=False)
    assert "[d] discovery off  " in notes_text(with_files, workspace.config)


def _rules(screen: MainScreen) -> PromptLayer:
    assert screen.prompt is not None
    return next(layer for layer in screen.prompt.layers if layer.layer_id == "Layer-0B")


@run_async
async def test_r_leaves_the_rules_layer_out_and_space_on_its_row_puts_it_back(
    demo_root: Path,
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        rules = _rules(screen)
        assert not rules.missing and rules.content in (
            screen.prompt.system if screen.prompt else ""
        )
        await pilot.press("R")
        await wait_for(pilot, lambda: _rules(screen).left_out, "the rules left out")
        assert screen.prompt is not None and rules.content not in screen.prompt.system
        assert story_choice(demo_root, "1-1")[0].layers == ("Layer-0B",)
        layers = screen.query_one(LayersTable)
        shown = {layer.layer_id: layer for layer in layers.shown_layers}
        assert shown["Layer-0B"].absence == "left out"
        layers.focus()
        layers.move_cursor(row=[x.layer_id for x in layers.shown_layers].index("Layer-0B"))
        await pilot.press("space")
        await wait_for(pilot, lambda: not _rules(screen).left_out, "the rules back in")
        assert story_choice(demo_root, "1-1")[0].empty
        # A required layer stays, whatever is pressed.
        layers.move_cursor(row=0)
        await pilot.press("space")
        await pilot.pause()
        assert story_choice(demo_root, "1-1")[0].empty


@run_async
async def test_space_leaves_out_a_file_the_spec_s_context_list_asks_for(tmp_path: Path) -> None:
    # A `context:` file is a `story` row, yet not the story's own file: it can be left out.
    import shutil

    root = tmp_path / "v63"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "layouts" / "v63-specs", root)
    listed = "docs/architecture.md"
    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot)
        assert screen.catalog is not None
        screen.select_story(screen.catalog.find("1-2"))
        screen = await wait_for_preview(pilot, "1-2")
        files = screen.query_one(FilesTable)
        row = {f.path: f for f in files.shown_files}[listed]
        assert row.category == "story" and not row.own_story_file
        files.focus()
        files.move_cursor(row=_row(files, listed))
        await pilot.press("space")

        def status() -> str:
            return {f.path: f for f in files.shown_files}[listed].status

        await wait_for(pilot, lambda: status() == "excluded", "the context: file left out")
        assert story_choice(root, "1-2")[0].excluded == (listed,)
        assert screen.prompt is not None
        assert not any("is the story's own file" in w for w in screen.prompt.warnings)
