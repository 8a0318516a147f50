"""``y`` says where the system prompt went: the system clipboard, or OSC 52 (which may not
arrive); the clipboard program is one found on an absolute PATH entry, never the project's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from promptdeck.tui import clipboard
from promptdeck.tui.clipboard import copy_text


def test_the_system_clipboard_is_used_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    copied: list[str] = []
    sent: list[str] = []
    monkeypatch.setattr(clipboard, "system_copy", lambda text, _root=None: not copied.append(text))
    reached, message = copy_text("the prompt", sent.append, "system prompt (10 bytes)")
    assert reached and copied == ["the prompt"] and sent == []
    assert message == "system prompt (10 bytes) copied to the system clipboard"


def test_without_one_osc52_is_used_and_the_message_says_it_may_not_arrive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[str] = []
    monkeypatch.setattr(clipboard, "system_copy", lambda _text, _root=None: False)
    reached, message = copy_text("the prompt", sent.append, "system prompt (10 bytes)")
    assert not reached and sent == ["the prompt"]
    assert "OSC 52" in message and "only if" in message and "copied" not in message


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="X clipboard programs")
def test_xclip_found_on_an_absolute_entry_takes_the_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    got = tmp_path / "got"
    xclip = folder / "xclip"
    xclip.write_text(f"#!/bin/sh\ncat > {got}\n", encoding="utf-8")
    xclip.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    reached, _ = copy_text("the prompt", [].append, "system prompt")
    assert reached and got.read_text(encoding="utf-8") == "the prompt"
