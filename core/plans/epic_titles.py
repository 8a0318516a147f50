"""The titles of a BMAD plan's epics: from the planning files' ``## Epic N: Title`` headings
and ``sprint-status.yaml``'s own ``# Epic N: Title`` comments, cleaned of the notes they carry.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from ..project.textfiles import DEFAULT_READ_LIMIT, TextProblem, read_text_file
from ..stories.keys import natural_key, normalize_key, number_text
from .markdown import iter_headings

_EPIC_HEADING = re.compile(r"^Epic\s+(?P<id>[A-Za-z0-9]+)\s*(?::\s*|\s+[-–—]\s+)(?P<title>.+)$")


@lru_cache(maxsize=4096)
def epic_of(key: str) -> str:
    """The epic id of a normalized story key: ``1-2`` → ``1``, ``a-1`` → ``A``."""
    first = key.split("-", 1)[0]
    if first.isdecimal():
        return number_text(first)
    return first.upper()


# `# Epic 2: Title`, and decorated: `# ── Epic 1A: Structural Refactoring ──`, `# === Epic 3 - X`.
_EPIC_COMMENT = re.compile(
    r"^\s*#[#\s=─━*-]*Epic\s+(?P<id>[A-Za-z0-9]+)\s*(?::\s*|\s+[-–—]\s+)"
    r"(?P<title>\S.*?)[\s=─━*-]*$",
    re.IGNORECASE,
)
_STORIES_SUFFIX = re.compile(r"\s*[-–—:]\s*Stories\s*$", re.IGNORECASE)
# What sprint-status comments add after a title: a count or size (`(9 stories)`,
# `(~57 points, 10 stories)`, `— 3 stories`, `[5/9 done]`), a state (`(DONE)`, `- COMPLETE`)
# or a review note (`— reviewed 2026-01-12 by PM`); none of it is the epic's title.
_STATE_WORDS = (
    r"done|complete[d]?|in[- ]progress|backlog|reviewed|approved|updated|revised|added"
    r"|deferred|closed|merged|blocked|cancell?ed|superseded"
)
_COMMENT_EXTRAS = re.compile(
    r"(?:\s*(?:\((?:[^()]*\d[^()]*\b(?:stor(?:y|ies)|points?|pts|sp)\b[^()]*"
    rf"|(?:{_STATE_WORDS})\b[^()]*)\)"
    r"|\[[^\]]*\]"
    r"|[-–—]\s*~?\d+\s*(?:stor(?:y|ies)|points?|pts)\b.*"
    rf"|[-–—]\s*(?:{_STATE_WORDS})\b.*))+\s*$",
    re.IGNORECASE,
)


def clean_epic_title(title: str) -> str:
    """An epic title without the extras a comment carries: ``Auth (9 stories)`` → ``Auth``."""
    cleaned = _COMMENT_EXTRAS.sub("", title).strip()
    return cleaned or title.strip()


def sprint_epic_titles(text: str) -> dict[str, str]:
    """Epic titles from ``sprint-status.yaml``'s own comments (``# Epic 2: Title``), by epic id.

    BMAD's sprint planning writes one such comment above each epic's block; it is the most
    specific source of a title, since it names the epics this very file tracks.
    """
    titles: dict[str, str] = {}
    for line in text.splitlines():
        match = _EPIC_COMMENT.match(line)
        if match:
            title = clean_epic_title(match.group("title"))
            titles.setdefault(epic_of(normalize_key(match.group("id"))), title)
    return titles


def _planning_epic_titles(
    planning: Path, root: Path | None = None, limit: int = DEFAULT_READ_LIMIT
) -> dict[str, dict[str, str]]:
    """Every title each ``*epic*.md`` planning file gives each epic: id → {title: file}."""
    found: dict[str, dict[str, str]] = {}
    try:
        names = sorted(
            entry.name
            for entry in os.scandir(planning)
            if "epic" in entry.name.lower() and entry.name.lower().endswith(".md")
        )
    except OSError:
        return found
    for name in names:
        text = read_text_file(planning / name, root=root, limit=limit)
        if isinstance(text, TextProblem):
            continue
        for heading in iter_headings(text.splitlines()):
            match = _EPIC_HEADING.match(heading.text) if heading.level <= 3 else None
            if match:
                # `## Epic 21: CLI Output — Stories` is the same epic as `### Epic 21: CLI Output`.
                title = clean_epic_title(_STORIES_SUFFIX.sub("", match.group("title")))
                epic = epic_of(normalize_key(match.group("id")))
                titles = found.setdefault(epic, {})
                if not any(t.lower() == title.lower() for t in titles):
                    titles[title] = name
    return found


def resolve_epic_titles(
    planning: Path,
    sprint_titles: dict[str, str],
    epics: set[str],
    warnings: list[str],
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
) -> dict[str, str]:
    """The title of each epic in ``epics``, from the cleanest source that has one.

    The planning files' ``## Epic N: Title`` headings first, when they agree on one title:
    they are the titles as planned, where ``sprint-status.yaml``'s comments carry notes
    (sizes, review dates) around them; then those comments, cleaned
    (:func:`clean_epic_title`). Projects often keep several ``epics-*.md`` files that each
    restart at "Epic 1": when they give one epic different titles, none of theirs is taken
    (a wrong title is worse than the id), and with no comment either a warning says so.
    """
    titles: dict[str, str] = {}
    missing = set(epics)
    if not missing:
        return titles
    planned = _planning_epic_titles(planning, root, limit)
    # A file that gives some epic another title than a second file does restarts its own
    # numbering ("Epic 1" of epics-next.md is not the project's epic 1): none of its titles
    # is taken.
    clashing = {
        name
        for candidates in planned.values()
        if len(candidates) > 1
        for name in candidates.values()
    }
    for epic in sorted(missing, key=natural_key):
        candidates = planned.get(epic, {})
        trusted = {title: name for title, name in candidates.items() if name not in clashing}
        if len(candidates) == 1 and len(trusted) == 1:
            titles[epic] = next(iter(trusted))
        elif epic in sprint_titles:
            titles[epic] = sprint_titles[epic]
        elif candidates:
            listed = "; ".join(f"'{title}' in {name}" for title, name in candidates.items())
            why = (
                "the planning files disagree on its title"
                if len(candidates) > 1
                else "its planning file restarts the epic numbers of another"
            )
            warnings.append(
                f"epic {epic}: {why} ({listed}); showing the id only (a '# Epic N: Title' "
                "comment in sprint-status.yaml settles it)"
            )
    return titles
