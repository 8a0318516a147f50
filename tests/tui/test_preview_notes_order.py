"""The preview's notes have room for two warning rows: the most serious notes take them (the
missing story file first, then an injection over the error line), and the rest are counted
(``+N more``), never shown in their place."""

from __future__ import annotations

from pathlib import Path

from builders import write_files
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.tui.session.preview_words import NOTE_ROWS, notes_text


def test_the_missing_story_file_and_the_error_line_take_the_rows(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "_bmad-output/implementation-artifacts/sprint-status.yaml": (
                "development_status:\n  1-1-a: ready-for-dev\n"
            ),
            "big.md": "x" * (160 * 1024),
        },
    )
    workspace = open_workspace(tmp_path)
    request = PromptRequest("1-1", phase="dev", selection=Selection(additional_files=("big.md",)))
    prompt = compose_prompt(workspace, load_catalog(workspace), request, count_tokens=False)
    assert NOTE_ROWS == 2
    rows = notes_text(prompt, workspace.config).splitlines()[1:]
    assert len(rows) == NOTE_ROWS
    assert rows[0].startswith("⚠ story 1-1 has no story file")
    # Four notes for two rows: the most serious one, then the count of the rest.
    assert rows[1] == "⚠ +3 more (all in the tooltip)"
    three = notes_text(prompt, workspace.config, rows=3).splitlines()[1:]
    assert "error line" in three[1] and three[2] == "⚠ +2 more (all in the tooltip)"
    every = notes_text(prompt, workspace.config, rows=None).splitlines()[1:]
    assert len(every) == 4 and every[0] == rows[0] and "error line" in every[1]
    assert every[2].startswith("⚠ no workspace rules file")
