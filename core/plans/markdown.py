"""The little Markdown both story sources need: headings, sections and checkbox lists.

Only what story files use is parsed — ATX headings, a leading YAML front-matter block,
fenced code blocks (whose ``#`` lines are not headings), and ``- [ ]`` checkboxes nested by
indentation. Everything else is text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import field
from functools import cache
from typing import TYPE_CHECKING, Any

from ..lean_dataclass import dataclass
from ..project.textfiles import LONG_NUMBER, long_number_line
from ..stories.model import Task

if TYPE_CHECKING:
    import yaml

# The text runs to the line's end and is trimmed in code (:func:`_heading_text`): a lazy
# `(.*?)` before trailing blanks takes time growing with the square of a run of spaces.
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CHECKBOX = re.compile(
    r"^(?P<indent>[ \t]*)(?:[-*+]|\d+[.)])[ \t]+\[(?P<mark>[ xX])\][ \t]+(?P<text>.*)$"
)
_MARK_STARTS = frozenset(" #`~")
"""The first characters a fence (:data:`_FENCE`) or a heading (:data:`_HEADING`) can have."""
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
        # A fence or a heading starts with up to three spaces, then its mark: the prose lines
        # (most of a story) are passed by one look at their first character, and a line
        # opening with `#` is no fence.
        first = line[:1]
        if first not in _MARK_STARTS:
            continue
        fence_match = _FENCE.match(line) if first != "#" else None
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
            yield Heading(len(match.group(1)), _heading_text(match.group(2) or ""), index)


def _heading_text(text: str) -> str:
    """A heading's text without its closing ``#`` run (``# Title ##``) and blanks."""
    text = text.rstrip(" \t")
    body = text.rstrip("#")
    if body != text and body[-1:] in (" ", "\t"):
        text = body
    return text.strip()


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


def section_ends(headings: Sequence[Heading], total: int) -> list[int]:
    """For each of ``headings`` (in file order), the index of the line its section ends
    before: the next heading of the same or a higher level, else ``total``.

    One pass for them all: a spec of tens of thousands of headings asking
    :func:`section_lines` once per heading would take time growing with their square.
    """
    ends = [total] * len(headings)
    open_sections: list[int] = []
    for index, heading in enumerate(headings):
        while open_sections and headings[open_sections[-1]].level >= heading.level:
            ends[open_sections.pop()] = heading.line
        open_sections.append(index)
    return ends


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
    # Most lines of a story are prose: a line with no "[" cannot be a checkbox. One plain
    # loop (no generator per call): a plan of thousands of short files passes here.
    items: list[re.Match[str]] = []
    flat = True
    for line in lines:
        if "[" in line:
            match = _CHECKBOX.match(line)
            if match is not None:
                items.append(match)
                if match.group("indent"):
                    flat = False
    if flat:
        # A flat list (the common case) needs no tree.
        return tuple(
            [Task(match.group("text").rstrip(), match.group("mark") != " ", ()) for match in items]
        )
    roots: list[_Node] = []
    stack: list[_Node] = []
    for match in items:
        indent = len(match.group("indent").expandtabs(_TAB_WIDTH))
        node = _Node(match.group("text").rstrip(), match.group("mark") != " ", indent)
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


@cache
def _loader() -> type[yaml.SafeLoader]:
    """The safe YAML loader, imported on first use: most plans (a v6 sprint status, plain
    story files, v7 plans of ``key: word`` lines) are read without the YAML parser, and its
    import is a good part of a short command's start."""
    try:  # the C loader is much faster and behaves the same
        from yaml import CSafeLoader

        return CSafeLoader  # type: ignore[return-value]
    except ImportError:  # pragma: no cover - PyYAML built without libyaml
        from yaml import SafeLoader

        return SafeLoader


class PlanYamlError(ValueError):
    """A YAML document (or front matter) that cannot be read, with its 1-based line."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML document and where its parts are.

    Attributes:
        data: the document's value (None for an empty document).
        key_lines: 1-based line of each top-level key of a mapping document.
        item_lines: 1-based line of each item of a sequence document, or of the items of
            each top-level key holding a sequence (``key_lines``' keys).
    """

    data: Any
    key_lines: dict[str, int]
    item_lines: dict[str, tuple[int, ...]]

    def line_of(self, key: str, default: int) -> int:
        """The line of top-level ``key``, or ``default`` when the document has none."""
        return self.key_lines.get(key, default)


def _check_aliases(text: str, offset: int) -> None:
    if "*" not in text:
        return
    import yaml

    try:
        for event in yaml.parse(text, Loader=_loader()):
            if isinstance(event, yaml.AliasEvent):
                line = (event.start_mark.line if event.start_mark else 0) + 1 + offset
                raise PlanYamlError(line, "YAML aliases are not read")
    except yaml.YAMLError as exc:
        raise _error(exc, offset) from None


def _error(exc: yaml.YAMLError, offset: int) -> PlanYamlError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = (mark.line if mark is not None else 0) + 1 + offset
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return PlanYamlError(line, f"not valid YAML ({problem})")


def load_yaml(text: str, *, offset: int = 0) -> YamlDocument:
    """Parse one YAML document with the safe loader.

    Args:
        text: the YAML text.
        offset: lines before ``text`` in its file (front matter starts after its ``---``), so
            reported lines are the file's.

    Raises:
        PlanYamlError: not valid YAML, more than one document, or an alias.
    """
    import yaml

    _check_aliases(text, offset)
    loader = _loader()(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise _error(exc, offset) from None
    except RecursionError:
        raise PlanYamlError(1 + offset, "not valid YAML (nested too deeply to read)") from None
    except ValueError as exc:
        # The constructors call `int()` and `datetime`: a number past Python's 4,300-digit
        # limit or a date like 2024-13-45 is a bare ValueError, not a YAMLError.
        line = long_number_line(text)
        if line is not None:
            raise PlanYamlError(line + offset, f"not valid YAML ({LONG_NUMBER})") from None
        raise PlanYamlError(1 + offset, f"not valid YAML ({exc})") from None
    finally:
        loader.dispose()
    key_lines: dict[str, int] = {}
    item_lines: dict[str, tuple[int, ...]] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key_lines.setdefault(key_node.value, key_node.start_mark.line + 1 + offset)
                if isinstance(value_node, yaml.SequenceNode):
                    item_lines[key_node.value] = tuple(
                        item.start_mark.line + 1 + offset for item in value_node.value
                    )
    elif isinstance(node, yaml.SequenceNode):
        item_lines[""] = tuple(item.start_mark.line + 1 + offset for item in node.value)
    return YamlDocument(data, key_lines, item_lines)


@dataclass(frozen=True)
class FrontMatter:
    """A Markdown file's leading ``---`` block, parsed, and where the body starts.

    Attributes:
        fields: the block's top-level mapping (empty when the block is empty).
        document: the parsed block, with the file's line of each key.
        body_start: 0-based index of the first line after the closing ``---``.
    """

    fields: dict[str, Any]
    document: YamlDocument
    body_start: int


_SIMPLE_FIELD = re.compile(
    r"^([A-Za-z_][A-Za-z0-9_-]*):[ \t]+([A-Za-z][A-Za-z0-9_-]*|0|[1-9][0-9]{0,17})[ \t]*$"
)
_NOT_PLAIN_WORDS = frozenset(
    ("true", "false", "yes", "no", "on", "off", "null", "y", "n", "nan", "inf")
)


def _simple_block(lines: list[str], offset: int) -> YamlDocument | None:
    """A block of ``key: word`` or ``key: 12`` lines only (a v7 plan's ``ticket`` and
    ``status``), read without the YAML parser — with the values YAML would give them; None
    when any line needs the real parser (quotes, lists, booleans, dates, repeated keys)."""
    data: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    for index, line in enumerate(lines):
        match = _SIMPLE_FIELD.match(line)
        if match is None:
            if line.strip():
                return None
            continue
        key, value = match.group(1), match.group(2)
        if key in data or value.lower() in _NOT_PLAIN_WORDS or key.lower() in _NOT_PLAIN_WORDS:
            return None
        data[key] = int(value) if value.isdigit() else value
        key_lines[key] = index + 1 + offset
    return YamlDocument(data, key_lines, {})


def read_front_matter(lines: list[str]) -> FrontMatter | None:
    """The front matter of a Markdown file's ``lines``, or None when it has none.

    Raises:
        PlanYamlError: the block is not closed, is not valid YAML, or is not a mapping.
    """
    if not lines or lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            block = lines[1:index]
            document = _simple_block(block, 1) or load_yaml("\n".join(block), offset=1)
            if document.data is None:
                return FrontMatter({}, document, index + 1)
            if not isinstance(document.data, dict):
                raise PlanYamlError(2, "front matter is not a mapping of fields")
            return FrontMatter(document.data, document, index + 1)
    raise PlanYamlError(1, "front matter opened with '---' is never closed")


def scalar_text(value: Any) -> str | None:
    """A front-matter value as one line of text (``status: done``), or None when it is not
    a plain scalar (a list, a mapping, nothing)."""
    if isinstance(value, bool) or value is None or isinstance(value, list | dict):
        return None
    text = str(value).strip()
    return text or None
