"""The guarded reader (core.textfiles) and the terminal guard (core.terminal)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from promptdeck.cli import compose as compose_cli
from promptdeck.cli.common import SafeStream
from promptdeck.core.project.textfiles import TextProblem, read_file_bytes, read_text
from promptdeck.core.terminal import printable, printable_keep_style, printable_line


def test_reads_every_byte_of_a_regular_file_inside_the_root(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"\xef\xbb\xbf# Title\r\n")
    assert read_file_bytes(path, tmp_path.resolve()) == b"\xef\xbb\xbf# Title\r\n"
    assert read_text(path, tmp_path.resolve()) == "# Title\r\n"


def test_special_files_are_refused_from_stat(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    assert read_file_bytes(fifo, tmp_path) == TextProblem(
        "unreadable", "a FIFO, not a regular file"
    )
    assert read_file_bytes("/dev/zero", None) == TextProblem(
        "unreadable", "a device, not a regular file"
    )
    loop = tmp_path / "loop.md"
    loop.symlink_to(loop.name)
    assert read_file_bytes(loop, tmp_path) == TextProblem("unreadable", "a symlink loop")
    assert read_file_bytes(tmp_path / "nope", tmp_path) == TextProblem("missing")
    assert read_file_bytes(tmp_path, tmp_path) == TextProblem("unreadable", "is a folder")
    assert read_file_bytes("a\0b", tmp_path).reason == "unreadable"  # type: ignore[union-attr]


def test_outside_the_root_and_over_the_limit_are_not_read(tmp_path: Path) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    outside = tmp_path / "secret.md"
    outside.write_text("secret", encoding="utf-8")
    (root / "link.md").symlink_to(outside)
    (root / "folder").symlink_to(tmp_path)
    assert read_file_bytes(root / "link.md", root).reason == "outside-project"  # type: ignore[union-attr]
    assert read_file_bytes(root / "folder" / "secret.md", root).reason == "outside-project"  # type: ignore[union-attr]
    big = root / "big.md"
    big.write_bytes(b"x" * 101)
    problem = read_file_bytes(big, root, limit=100)
    assert problem == TextProblem("too-large", "101 bytes, over the 100-byte read limit; not read")
    assert read_file_bytes(big, root, limit=1000, head=10) == b"x" * 11


def test_printable_shows_every_control_but_newline_and_tab() -> None:
    assert printable("a\tb\nc") == "a\tb\nc"
    assert printable("\x1b]52;c;eA==\x07") == "␛]52;c;eA==␇"
    assert printable("\x9b2J\x7f\x00\r") == "\\x9b2J␡␀␍"
    assert printable_line("a\nb\tc\x1b") == "a b c␛"
    assert printable_keep_style("\x1b[1;31mred\x1b[0m \x1b]0;t\x07") == (
        "\x1b[1;31mred\x1b[0m ␛]0;t␇"
    )


def test_every_byte_written_through_the_safe_stream_is_guarded() -> None:
    out = io.StringIO()
    stream = SafeStream(out)
    stream.write("title \x1b]52;c;eA==\x07 \x9b\n")
    assert out.getvalue() == "title ␛]52;c;eA==␇ \\x9b\n"


class _Terminal(io.TextIOWrapper):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("tty", [True, False])
def test_compose_writes_exact_bytes_to_a_pipe_and_visible_ones_to_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tty: bool
) -> None:
    raw = io.BytesIO()
    stream = _Terminal(raw, encoding="utf-8") if tty else io.TextIOWrapper(raw, encoding="utf-8")
    monkeypatch.setattr("sys.stdout", stream)
    compose_cli._write_exact("# Story \x1b]52;c;eA==\x07\n")
    assert raw.getvalue().decode("utf-8") == (
        "# Story ␛]52;c;eA==␇\n" if tty else "# Story \x1b]52;c;eA==\x07\n"
    )


@pytest.mark.parametrize("char", ["\u202a", "\u202e", "\u2066", "\u2069", "\u200b", "\ufeff"])
def test_format_characters_are_made_visible(char: str) -> None:
    shown = printable(f"name{char}.md")
    assert char not in shown and f"\\u{ord(char):04x}" in shown
    assert char not in printable_keep_style(f"\x1b[1m{char}\x1b[0m")
    assert printable_line("plain é text") == "plain é text"
