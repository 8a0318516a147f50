"""Every relative link and #anchor in README.md and docs/*.md leads somewhere.

A link to a file names a file or folder of the checkout; a link with an anchor, to this page or
another Markdown page, names a heading there (GitHub's slug: lowercase, punctuation dropped,
spaces to hyphens). A heading renamed or removed fails the pages that pointed at it.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from doc_pages import ROOT, anchors, links, pages, relative, slug


def _broken(page: Path) -> list[str]:
    broken: list[str] = []
    for number, target in links(page):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc:
            continue  # a web address: not this checkout's to check
        where = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
        if not where.exists() or not where.is_relative_to(ROOT):
            broken.append(f"{relative(page)}:{number}: {target}: no such file")
            continue
        if parts.fragment and where.suffix == ".md" and parts.fragment not in anchors(where):
            broken.append(f"{relative(page)}:{number}: {target}: no such heading")
    return broken


@pytest.mark.parametrize("page", pages(), ids=relative)
def test_every_link_and_anchor_resolves(page: Path) -> None:
    assert _broken(page) == []


def test_a_link_to_a_removed_heading_is_caught(tmp_path: Path) -> None:
    docs = ROOT / "docs"
    page = docs / f".links-check-{tmp_path.name}.md"
    try:
        page.write_text(
            "# Title\n\n## Kept heading\n\n[here](#kept-heading) [gone](#removed-heading)\n"
            "[file](commands.md#inspect) [missing](no-such-page.md)\n`[code](#not-a-link)`\n",
            encoding="utf-8",
        )
        assert [line.split(": ", 1)[1] for line in _broken(page)] == [
            "#removed-heading: no such heading",
            "no-such-page.md: no such file",
        ]
    finally:
        page.unlink()


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Exit codes", "exit-codes"),
        ("`promptdeck inspect STORY [--phase P]`", "promptdeck-inspect-story---phase-p"),
        ("What `runs` and `show` print", "what-runs-and-show-print"),
        ("Fit, and the clients' cut lines", "fit-and-the-clients-cut-lines"),
        ("Options (`run`, `chat`)", "options-run-chat"),
    ],
)
def test_anchors_are_github_slugs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def _sources() -> list[Path]:
    found = []
    for top in ("core", "cli", "tui"):
        found += [p for p in sorted((ROOT / top).rglob("*.py")) if "demo/workspace" not in str(p)]
    return found


def test_every_docs_page_the_code_names_resolves() -> None:
    """A message or help text that sends the user to ``docs/<page>.md[#anchor]`` sends them
    somewhere that exists."""
    broken = []
    for source in _sources():
        text = source.read_text(encoding="utf-8")
        for page, anchor in re.findall(r"\bdocs/([\w.-]+\.md)(?:#([\w-]+))?", text):
            target = ROOT / "docs" / page
            if not target.exists():
                broken.append(f"{relative(source)}: docs/{page}: no such page")
            elif anchor and anchor not in anchors(target):
                broken.append(f"{relative(source)}: docs/{page}#{anchor}: no such heading")
    assert broken == []
