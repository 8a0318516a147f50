"""JSON that a cloned repository commits (``.promptdeck/`` state) or an agent prints is data: a
number past Python's 4,300-digit limit (a bare ``ValueError``, not a ``JSONDecodeError``) or
nesting deeper than the parser goes is one note, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from promptdeck.core.agents.codex_stream import CodexJsonParser
from promptdeck.core.injection.choices import CHOICES_FILE, load_choices

HOSTILE = {
    "huge number": '{"stories": {"1-1": {"excluded": [' + "9" * 5000 + "]}}}",
    "deep nesting": "[" * 200_000 + "]" * 200_000,
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_committed_file_choices_are_a_note(tmp_path: Path, text: str) -> None:
    (tmp_path / ".promptdeck").mkdir()
    (tmp_path / CHOICES_FILE).write_text(text, encoding="utf-8")
    stored = load_choices(tmp_path)
    assert stored.notes and "the file choices are not applied" in stored.notes[0]


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_an_agent_line_of_hostile_json_is_text(text: str) -> None:
    events = CodexJsonParser().parse(text)
    assert events and events[0].text == text
