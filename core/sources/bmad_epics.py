"""BMAD epic titles: from ``sprint-status.yaml``'s own comments, else the planning files.

A title is taken only from a source that is sure of it: planning files that disagree on an
epic's title (several ``epics-*.md`` restarting at "Epic 1") give none, and a warning says so.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..keys import normalize_key
from ..textfiles import DEFAULT_READ_LIMIT, TextProblem, read_text_file
from .common import natural_key
from .markdown import iter_headings

_EPIC_HEADING = re.compile(r"^Epic\s+(?P<id>[A-Za-z0-9]+)\s*(?::\s*|\s+[-–—]\s+)(?P<title>.+)$")


def epic_of(key: str) -> str:
    """The epic id of a normalized story key: ``1-2`` → ``1``, ``a-1`` → ``A``."""
    first = key.split("-", 1)[0]
    if first.isdigit():
        return str(int(first))
    return first.upper()


# `# Epic 2: Title`, and decorated: `# ── Epic 1A: Structural Refactoring ──`, `# === Epic 3 - X`.
_EPIC_COMMENT = re.compile(
    r"^\s*#[#\s=─━*-]*Epic\s+(?P<id>[A-Za-z0-9]+)\s*(?::\s*|\s+[-–—]\s+)"
    r"(?P<title>\S.*?)[\s=─━*-]*$",
    re.IGNORECASE,
)
_STORIES_SUFFIX = re.compile(r"\s*[-–—:]\s*Stories\s*$", re.IGNORECASE)
# What sprint-status comments add after a title: a count (`(9 stories)`, `— 3 stories`,
# `[5/9 done]`) or a state (`(DONE)`, `- COMPLETE`); none of it is the epic's title.
_COMMENT_EXTRAS = re.compile(
    r"(?:\s*(?:\((?:[^()]*\d[^()]*\bstor(?:y|ies)\b[^()]*|done|complete[d]?|in[- ]progress"
    r"|backlog)\)|\[[^\]]*\]|[-–—]\s*\d+\s+stor(?:y|ies)\b.*|[-–—]\s*(?:done|complete[d]?)))+\s*$",
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
    """The title of each epic in ``epics``, from the most specific source that has one.

    ``sprint-status.yaml``'s comments first; then the planning files, when they agree on one
    title. Projects often keep several ``epics-*.md`` files that each restart at "Epic 1":
    when they give one epic different titles, none is taken (a wrong title is worse than the
    id) and a warning says so.
    """
    titles = {epic: sprint_titles[epic] for epic in epics if epic in sprint_titles}
    missing = epics - titles.keys()
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
