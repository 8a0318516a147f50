"""The little Markdown both story sources need: headings, sections and checkbox lists.

Only what story files use is parsed — ATX headings, a leading YAML front-matter block,
fenced code blocks (whose ``#`` lines are not headings), and ``- [ ]`` checkboxes nested by
indentation. Everything else is text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..stories import Task

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CHECKBOX = re.compile(
    r"^(?P<indent>[ \t]*)(?:[-*+]|\d+[.)])[ \t]+\[(?P<mark>[ xX])\][ \t]+(?P<text>.*?)\s*$"
)
_TAB_WIDTH = 4
MAX_TASK_DEPTH = 50
"""Deepest checkbox nesting a task list may have. Deeper lists are refused rather than
built: every consumer of a task tree (prompts, counts, the app's tree) walks it recursively."""


class TaskNestingError(ValueError):
    """A task list is nested deeper than :data:`MAX_TASK_DEPTH`."""

    def __init__(self) -> None:
        super().__init__(f"task list nested deeper than {MAX_TASK_DEPTH} levels")


@dataclass(frozen=True)
class Heading:
    """An ATX heading: its level (1–6), its text, and its 0-based line number."""

    level: int
    text: str
    line: int


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after a leading ``---`` front-matter block (0 if none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return index + 1
    # Unterminated: it was a thematic break, not front matter.
    return 0


def iter_headings(lines: list[str]) -> Iterator[Heading]:
    """Every heading of ``lines`` in order, skipping front matter and fenced code."""
    fence: str | None = None
    for index in range(_front_matter_end(lines), len(lines)):
        line = lines[index]
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        match = _HEADING.match(line)
        if match:
            yield Heading(len(match.group(1)), (match.group(2) or "").strip(), index)


def first_heading(lines: list[str]) -> Heading | None:
    """The first heading of ``lines`` (see :func:`iter_headings`), or None."""
    return next(iter_headings(lines), None)


def section_lines(lines: list[str], start: Heading, headings: Iterable[Heading]) -> list[str]:
    """The lines under ``start`` up to the next heading of the same or a higher level."""
    end = len(lines)
    for heading in headings:
        if heading.line > start.line and heading.level <= start.level:
            end = heading.line
            break
    return lines[start.line + 1 : end]


@dataclass
class _Node:
    text: str
    done: bool
    indent: int
    children: list[_Node] = field(default_factory=list)

    def freeze(self) -> Task:
        return Task(self.text, self.done, tuple(child.freeze() for child in self.children))


def parse_task_list(lines: Iterable[str]) -> tuple[Task, ...]:
    """The checkbox items of ``lines`` as a task tree, nested by indentation.

    A line that is not a checkbox (prose, a continuation) is ignored; an item indented
    deeper than the one before it is that item's child.

    Raises:
        TaskNestingError: the list nests deeper than :data:`MAX_TASK_DEPTH` levels.
    """
    roots: list[_Node] = []
    stack: list[_Node] = []
    for line in lines:
        # Most lines of a story are prose: a line with no "[" cannot be a checkbox.
        match = _CHECKBOX.match(line) if "[" in line else None
        if match is None:
            continue
        indent = len(match.group("indent").expandtabs(_TAB_WIDTH))
        node = _Node(match.group("text"), match.group("mark") != " ", indent)
        while stack and stack[-1].indent >= indent:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
        if len(stack) > MAX_TASK_DEPTH:
            raise TaskNestingError
    return tuple(node.freeze() for node in roots)


def count_tasks(tasks: Iterable[Task]) -> tuple[int, int]:
    """``(done, total)`` over a task tree, counting every level."""
    done = total = 0
    for task in tasks:
        child_done, child_total = count_tasks(task.children)
        done += child_done + (1 if task.done else 0)
        total += child_total + 1
    return done, total
