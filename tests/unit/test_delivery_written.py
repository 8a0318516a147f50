"""Cache-aware delivery keeps the files the phases write out of the shared system block."""

from __future__ import annotations

from promptdeck.core.layers.delivery import split_envelope

OPEN = '<file_injections rule="r">'


def _envelope(*files: tuple[str, str]) -> str:
    body = "".join(f'\n  <file path="{path}">\n{text}\n  </file>' for path, text in files)
    return f"{OPEN}{body}\n</file_injections>"


def test_the_story_file_and_sprint_status_leave_the_shared_envelope() -> None:
    files = _envelope(
        ("a/story.md", "Status: dev"), ("docs/arch.md", "Arch."), ("x/sprint-status.yaml", "s")
    )
    stable, written = split_envelope(files, frozenset({"a/story.md"}))
    assert stable == _envelope(("docs/arch.md", "Arch."))
    assert written == _envelope(("a/story.md", "Status: dev"), ("x/sprint-status.yaml", "s"))


def test_an_envelope_that_does_not_read_back_stays_whole() -> None:
    files = _envelope(("a/story.md", 'holds\n  <file path="fake">\nx'))
    assert split_envelope(files, frozenset({"a/story.md"})) == (files, "")
    plain = _envelope(("docs/arch.md", "Arch."))
    assert split_envelope(plain, frozenset({"a/story.md"})) == (plain, "")
