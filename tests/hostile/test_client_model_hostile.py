"""The model a run will use, resolved from hostile settings: a value with escapes, or of
megabytes, in promptdeck's config (``[pricing] model``, ``[agent] claude_model``, a
``--model`` in the agent's arguments, a ``-c model=`` in Codex's) or in the client's settings
files is never taken, shown or priced as a model: the model is unknown and says why; a FIFO,
a link out of the home or a malformed file is a note."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.cost.client_model import resolve_model

BAD = ["opus\x1b[8mhidden", "opus\x1b]0;title\x07", "o" * 10_000_000]


@pytest.mark.parametrize("value", BAD, ids=["sgr", "osc", "10mb"])
@pytest.mark.parametrize(
    ("agent", "setting"),
    [
        ("claude", {"pricing_model": "{}"}),
        ("claude", {"agent_claude_model": "{}"}),
        ("claude", {"agent_claude_args": ("--model", "{}")}),
        ("claude", {"agent_claude_args": ("--model={}",)}),
        ("codex", {"agent_codex_args": ("-m", "{}")}),
        ("codex", {"agent_codex_args": ("-c", "model={}")}),
    ],
)
def test_a_configured_model_that_is_no_model_name_is_unknown(
    tmp_path: Path, agent: str, setting: dict[str, object], value: str
) -> None:
    config = {
        key: (
            tuple(part.replace("{}", value) for part in given)
            if isinstance(given, tuple)
            else str(given).replace("{}", value)
        )
        for key, given in setting.items()
    }
    ws = make_workspace(tmp_path / "project", {"README.md": "x\n"}, **config)
    resolved = resolve_model(ws, agent, version="2.1.197", environ={"HOME": str(tmp_path)})
    assert resolved.model == ""
    assert "not a model name" in resolved.source
    assert resolved.source.isprintable() and len(resolved.describe()) < 200


def test_hostile_client_files_are_notes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    os.mkfifo(home / ".claude" / "settings.json")
    ws = make_workspace(
        tmp_path / "project",
        {
            ".claude/settings.local.json": "{" * 100_000,
            ".claude/settings.json": json.dumps({"model": "opus\x1b[31m"}),
        },
    )
    resolved = resolve_model(
        ws, "claude", version="0.0.1", environ={"HOME": str(home), "ANTHROPIC_MODEL": "a\x1b[8m"}
    )
    assert resolved.model == ""
    assert len(resolved.notes) == 4 and all(note.isprintable() for note in resolved.notes)
