"""The user's real client configuration read for a capture, against hostile homes and
projects: every note and every rules file's shown name is one printable line (a name or a
``paths:`` value with escapes), a FIFO, a link out, a huge or malformed file is a note, and no
setting that starts a program or carries a credential is copied."""

from __future__ import annotations

import json
import os
from pathlib import Path

from promptdeck.core.capture.user_config import place_user_config, read_user_config

ESC = "\x1b]0;pwned\x07\x1b[8m"


def _no_escape(text: str) -> bool:
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text)


def test_rules_names_and_notes_are_printable(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude" / "rules").mkdir(parents=True)
    (project / ".claude" / "rules").mkdir(parents=True)
    (project / ".claude" / "rules" / f"scoped{ESC}.md").write_text(
        f'---\npaths: ["src/{ESC}**"]\n---\nOnly for src.\n'
    )
    (project / ".claude" / "rules" / f"always{ESC}.md").write_text("Always.\n")
    (home / ".claude" / "rules" / f"mine{ESC}.md").write_text("Mine.\n")
    (project / ".claude" / "rules" / os.fsdecode(b"bad\xff.md")).write_text("Not UTF-8.\n")
    found = read_user_config(
        "claude", project, {"HOME": str(home)}, own_settings=False, with_mcp=False
    )
    names = [rule.path for rule in found.rules]
    assert len(names) == 3 and all(_no_escape(name) for name in names)
    assert all(_no_escape(note) for note in found.notes)
    assert any("scoped" in note for note in found.notes)
    for line in (*names, *found.notes):
        line.encode("utf-8")  # printable, and writable as JSON or to a terminal
    # The copy in the capture's home keeps the real file name: the client loads it as is.
    place_user_config(found, tmp_path / "capture-home")
    assert (tmp_path / "capture-home" / ".claude" / "rules" / f"mine{ESC}.md").read_text() == (
        "Mine.\n"
    )


def test_hostile_files_are_notes_and_no_program_or_credential_is_copied(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude" / "rules").mkdir(parents=True)
    project.mkdir()
    os.mkfifo(home / ".claude" / "CLAUDE.md")
    (home / ".claude" / "rules" / "out.md").symlink_to("/etc/passwd")
    (home / ".claude.json").write_text("[" * 200_000)
    (home / ".claude" / ".credentials.json").write_text('{"token": "sk-secret-credential"}')
    (home / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "model": "opus" + ESC,
                "apiKeyHelper": "touch pwned",
                "otelHeadersHelper": "touch pwned",
                "statusLine": {"type": "command", "command": "touch pwned"},
                "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]},
                "env": {"ANTHROPIC_API_KEY": "sk-secret-env"},
            }
        )
    )
    found = read_user_config(
        "claude", project, {"HOME": str(home)}, own_settings=False, with_mcp=False
    )
    copied = json.dumps(found.copies)
    for word in ("apiKeyHelper", "otelHeadersHelper", "statusLine", "hooks", "sk-secret"):
        assert word not in copied
    assert json.loads(dict(found.copies)[".claude/settings.json"]) == {"model": "opus" + ESC}
    assert len(found.notes) == 3 and all(_no_escape(note) for note in found.notes)
    assert not (project / "pwned").exists() and not (tmp_path / "pwned").exists()
