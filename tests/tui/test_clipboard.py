"""``y`` says where the system prompt went: the system clipboard, or OSC 52 (which may not
arrive)."""

from __future__ import annotations

import pyperclip
import pytest
from promptdeck.tui.clipboard import copy_text


def test_the_system_clipboard_is_used_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    copied: list[str] = []
    sent: list[str] = []
    monkeypatch.setattr(pyperclip, "copy", copied.append)
    reached, message = copy_text("the prompt", sent.append, "system prompt (10 bytes)")
    assert reached and copied == ["the prompt"] and sent == []
    assert message == "system prompt (10 bytes) copied to the system clipboard"


def test_without_one_osc52_is_used_and_the_message_says_it_may_not_arrive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_clipboard(_text: str) -> None:
        raise pyperclip.PyperclipException("no copy/paste mechanism")

    sent: list[str] = []
    monkeypatch.setattr(pyperclip, "copy", no_clipboard)
    reached, message = copy_text("the prompt", sent.append, "system prompt (10 bytes)")
    assert not reached and sent == ["the prompt"]
    assert "OSC 52" in message and "only if" in message and "copied" not in message
