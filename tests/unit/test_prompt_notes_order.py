"""A story's notes, most serious first: what the agent will not see of the story itself (no
story file), then an injection over the error line, then the rest — so a face with room for
two notes never shows a long rules note in place of the missing story file."""

from __future__ import annotations

from pathlib import Path

from builders import write_files
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.notes import no_story_file_note, notes_by_seriousness
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest

STATUS = "_bmad-output/implementation-artifacts/sprint-status.yaml"


def _compose(root: Path, *added: str) -> ComposedPrompt:
    workspace = open_workspace(root)
    request = PromptRequest("1-1", phase="dev", selection=Selection(additional_files=added))
    return compose_prompt(workspace, load_catalog(workspace), request, count_tokens=False)


def test_no_story_file_comes_before_the_rules_note(tmp_path: Path) -> None:
    # No rules file either: its note is long, and it used to come first.
    write_files(tmp_path, {STATUS: "development_status:\n  1-1-a: ready-for-dev\n"})
    prompt = _compose(tmp_path)
    config = open_workspace(tmp_path).config
    missing = no_story_file_note(prompt.story, config)
    assert missing.startswith("story 1-1 has no story file")
    assert any(w.startswith("no workspace rules file") for w in prompt.warnings)
    assert prompt.warnings[0] == missing
    assert notes_by_seriousness(prompt, config)[0] == missing


def test_over_the_error_line_comes_next_and_the_face_s_own_notes_last(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            STATUS: "development_status:\n  1-1-a: ready-for-dev\n",
            "big.md": "x" * (160 * 1024),
        },
    )
    prompt = _compose(tmp_path, "big.md")
    config = open_workspace(tmp_path).config
    assert prompt.injection.level == "error"
    notes = notes_by_seriousness(prompt, config, ["the rules are read twice"])
    assert notes[0] == no_story_file_note(prompt.story, config)
    assert "over the 153,600-byte error line" in notes[1]
    assert notes[-1] == "the rules are read twice"
    # Once each, and nothing lost.
    assert len(notes) == len(set(notes))
    every = {*prompt.warnings, *prompt.injection.warnings}
    assert every <= set(notes)


def test_a_story_with_its_file_keeps_the_order_found(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            STATUS: "development_status:\n  1-1-a: ready-for-dev\n",
            "_bmad-output/implementation-artifacts/1-1-a.md": "# Story 1.1: A\n\nStatus: ready\n",
        },
    )
    prompt = _compose(tmp_path)
    config = open_workspace(tmp_path).config
    notes = notes_by_seriousness(prompt, config)
    assert notes == tuple(dict.fromkeys((*prompt.warnings, *prompt.injection.warnings)))
    assert not any("no story file" in note for note in notes)
