"""The documentation as the docs tests read it: the pages, their links, headings and code.

The pages are README.md and every ``docs/*.md``. Text inside code (fenced blocks and inline
code spans) is code, never a link; a link's anchor is checked against GitHub's heading slugs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The checkout: README.md, docs/, core/, cli/, tui/."""

_FENCE = re.compile(r"^\s*(```|~~~)")
_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SRC = re.compile(r"""\b(?:src|href)\s*=\s*["']([^"']+)["']""")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def pages() -> list[Path]:
    """README.md and every page under docs/, in a fixed order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def relative(path: Path) -> str:
    """A page's path as the tests name it: from the checkout, or its name when outside it."""
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name


@dataclass(frozen=True)
class Line:
    """One line of a page, and whether it sits inside a fenced code block."""

    number: int
    text: str
    in_fence: bool


def lines(path: Path) -> Iterator[Line]:
    in_fence = False
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if _FENCE.match(text):
            in_fence = not in_fence
            continue
        yield Line(number, text, in_fence)


def prose(text: str) -> str:
    """A line with its inline code spans blanked out (what is left can hold links)."""
    return _SPAN.sub(lambda m: " " * len(m.group(0)), text)


def code_spans(text: str) -> list[str]:
    """The inline code spans of a line of prose, as written (a table's ``\\|`` unescaped)."""
    return [m.group(2).strip().replace("\\|", "|") for m in _SPAN.finditer(text)]


def links(path: Path) -> Iterator[tuple[int, str]]:
    """Every link target of a page outside code: Markdown links, images and HTML src/href."""
    for line in lines(path):
        if line.in_fence:
            continue
        text = prose(line.text)
        for pattern in (_LINK, _SRC):
            for match in pattern.finditer(text):
                yield line.number, match.group(1)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text as shown, lowercase, punctuation dropped (word
    characters, hyphens and spaces kept), each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML shows nothing of its tags
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors a page's headings give, duplicates numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in lines(path):
        match = None if line.in_fence else _HEADING.match(line.text)
        if match is None:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def section(path: Path, heading: str) -> list[str]:
    """The lines under ``heading`` (a whole heading line), up to the next heading of its level
    or above."""
    level = len(heading) - len(heading.lstrip("#"))
    out: list[str] = []
    inside = False
    for line in lines(path):
        match = None if line.in_fence else _HEADING.match(line.text)
        if match is not None and len(match.group(1)) <= level:
            if inside:
                break
            inside = line.text.strip() == heading
            continue
        if inside:
            out.append(line.text)
    return out
