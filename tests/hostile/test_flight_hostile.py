"""``show RUN --turns`` against a forged run record: a committed ``.promptdeck/runs/`` can
carry a ``turns.json`` (kept, and believed while no stream is newer) whose every text field
holds escape sequences. None reaches the terminal raw — not even a colour (SGR), which the
output guard lets pass for promptdeck's own styling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.cli import main
from promptdeck.core.records.writer import RunRecord

SGR = "\x1b[8m"  # conceal: the rest of the line is hidden on a terminal
OSC = "\x1b]0;pwned\x07"
CSI = "\x9b2J"


def forged_run(root: Path) -> str:
    art = root / "_bmad-output/implementation-artifacts"
    art.mkdir(parents=True)
    (art / "1-1-login.md").write_text("# Story 1.1: Login\n\nStatus: ready-for-dev\n")
    commit_all(root)
    record = RunRecord.create(root, "1-1", "dev")
    record.write_meta(
        {"run_id": record.id, "story": "1-1", "phase": "dev", "agent": "claude", "pid": 0}
    )
    record.write_result(
        {
            "run_id": record.id,
            "story": "1-1",
            "phase": "dev",
            "attempt": 1,
            "mode": "create",
            "agent": "claude",
            "outcome": "success",
            "exit_code": 0,
            "message": "done",
        }
    )
    record.close()
    (record.dir / "stream.jsonl").unlink(missing_ok=True)
    bad = SGR + OSC + CSI
    turns = {
        "agent": "claude",
        "format": "stream" + bad,
        "sources": ["stream" + bad],
        "requests": [
            {
                "index": 1,
                "id": "msg" + bad,
                "input_tokens": 10,
                "added": [{"tool": "Read" + bad, "source": "a.md" + bad, "bytes": 3}],
                "tool_calls": [{"id": "c1", "tool": "Bash" + bad, "target": "ls" + bad}],
                "subagents": [{"tool_use_id": "toolu" + bad, "description": bad, "requests": []}],
                "notes": ["note" + bad],
            }
        ],
        "notes": ["kept" + bad],
        "reported": {},
    }
    (record.dir / "turns.json").write_text(json.dumps(turns))
    return record.id


def test_a_forged_turn_list_prints_no_escape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = forged_run(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["show", run_id, "--turns"]) == 0
    out = capsys.readouterr().out
    assert "Bash" in out and "Read" in out  # the forged list is what was shown
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out


def test_a_forged_turn_list_as_json_prints_no_escape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = forged_run(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["show", run_id, "--turns", "--json"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert json.loads(out)["requests"][0]["tool_calls"][0]["tool"].startswith("Bash")
