"""YAML the plan files carry: a Markdown file's front matter, and whole YAML files.

BMAD's build specs keep their ``status``, ``story_key`` and ``context:`` list in front matter,
bmad-spec keeps its story order in ``stories.yaml``, and OpenSpec keeps a change's schema in
``.openspec.yaml`` and the project's ``context`` and ``rules`` in ``config.yaml``. All of it
is read with PyYAML's safe loader, and every problem is a :class:`PlanYamlError` naming the
line (1-based, in the file), so a source can report the file and carry on with the rest.

Aliases (``*name``) are refused rather than expanded: none of these files needs one, and a
few nested aliases can stand for more items than memory holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

try:  # the C loader is much faster and behaves the same
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


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
    try:
        for event in yaml.parse(text, Loader=_Loader):
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
    _check_aliases(text, offset)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise _error(exc, offset) from None
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
        if key in data or value.lower() in _NOT_PLAIN_WORDS:
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
