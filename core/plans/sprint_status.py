"""The ``sprint-status.yaml`` parser: BMAD's ``development_status`` mapping, line by line.

PyYAML is not a dependency, so a strict line parser reads exactly this file's shape:
comments, quoted scalars, one level of indentation. Anything else is a
:class:`SprintStatusError` with its line number, which the BMAD source reports as a skipped
file and the status write-back as a refusal — never a crash. A file with no
``development_status`` that lists its stories under ``epics:`` is read too
(:func:`parse_story_list`), by the source only: the write-back edits BMAD's mapping alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..lean_dataclass import dataclass

SPRINT_STATUS_NAME = "sprint-status.yaml"
"""The file's name inside the artifacts folder."""

_BLOCK_SCALARS = ("|", ">", "|-", ">-", "|+", ">+")
_PLAIN_KEY = re.compile(r"([^:#]+?)\s*:(?=\s|$)")
_COMMENT = re.compile(r"\s#")


class SprintStatusError(ValueError):
    """``sprint-status.yaml`` does not have the shape this parser reads."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


@dataclass(frozen=True)
class SprintEntry:
    """One ``development_status`` entry of ``sprint-status.yaml``."""

    name: str
    value: str
    line: int


def _content_lines(text: str) -> Iterator[tuple[int, str, str, int]]:
    """Each line of ``text`` holding more than a comment: its 1-based number, the line, the
    line without its leading spaces, and how many spaces those were."""
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        body = raw.lstrip(" ")
        yield number, raw, body, len(raw) - len(body)


def _quoted(text: str, line: int) -> tuple[str, str]:
    """Split a leading quoted scalar off ``text``: ``(value, rest)``."""
    quote = text[0]
    out: list[str] = []
    index = 1
    while index < len(text):
        char = text[index]
        if quote == "'" and char == "'":
            if text.startswith("''", index):
                out.append("'")
                index += 2
                continue
            return "".join(out), text[index + 1 :]
        if quote == '"' and char == "\\" and index + 1 < len(text):
            out.append(text[index + 1])
            index += 2
            continue
        if quote == '"' and char == '"':
            return "".join(out), text[index + 1 :]
        out.append(char)
        index += 1
    raise SprintStatusError(line, f"unterminated {quote}-quoted string")


def _expect_end(rest: str, line: int) -> None:
    """Only a comment may follow a quoted scalar."""
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        raise SprintStatusError(line, f"unexpected text after a quoted value: {rest!r}")


def _plain(text: str) -> str:
    """A plain scalar with any trailing `` # comment`` removed."""
    match = _COMMENT.search(text) if "#" in text else None
    return (text[: match.start()] if match else text).strip()


def _pair(text: str, line: int) -> tuple[str, str | None]:
    """Parse ``key: value`` (``value`` None when the line opens a block)."""
    if text[0] in "'\"":
        key, rest = _quoted(text, line)
        rest = rest.lstrip()
        if not rest.startswith(":"):
            raise SprintStatusError(line, "expected ':' after a quoted key")
        rest = rest[1:]
    else:
        match = _PLAIN_KEY.match(text)
        if match is None or match.group(1).startswith(("-", "[", "{")):
            raise SprintStatusError(line, f"expected 'key: value', found {text.strip()!r}")
        key, rest = match.group(1), text[match.end() :]
    if rest and not rest[0].isspace():
        raise SprintStatusError(line, "expected a space after ':'")
    rest = rest.strip()
    if not rest or rest.startswith("#"):
        return key, None
    if rest[0] in "'\"":
        value, after = _quoted(rest, line)
        _expect_end(after, line)
        return key, value
    return key, _plain(rest)


def parse_sprint_status(text: str) -> list[SprintEntry]:
    """The ``development_status`` entries of a ``sprint-status.yaml`` text, in file order.

    Other top-level keys (``generated:``, ``project:`` …) and their indented blocks are
    passed over.

    Raises:
        SprintStatusError: a line does not fit the file's shape (tabs in indentation, a
            nested block under ``development_status``, an unterminated quote, a duplicate
            entry), or there is no ``development_status`` mapping.
    """
    entries: list[SprintEntry] = []
    seen: dict[str, int] = {}
    found = in_status = False
    status_indent: int | None = None
    for number, _line, body, indent in _content_lines(text):
        if body.startswith("\t"):
            raise SprintStatusError(number, "tab in indentation (YAML allows spaces only)")
        if indent == 0:
            if body.strip() in ("---", "..."):
                continue
            key, value = _pair(body, number)
            in_status = key == "development_status"
            if in_status:
                if found:
                    raise SprintStatusError(number, "development_status appears twice")
                found = True
                if value == "{}":
                    in_status = False
                elif value is not None:
                    raise SprintStatusError(number, "development_status must be a mapping")
            continue
        if not in_status:
            continue
        if status_indent is None:
            status_indent = indent
        if indent != status_indent:
            raise SprintStatusError(
                number, f"unexpected indentation under development_status ({indent} spaces)"
            )
        key, value = _pair(body, number)
        if value is None or value in _BLOCK_SCALARS:
            raise SprintStatusError(number, f"'{key}' has no status")
        if key in seen:
            raise SprintStatusError(number, f"'{key}' appears twice (first on line {seen[key]})")
        seen[key] = number
        entries.append(SprintEntry(key, value, number))
    if not found:
        raise SprintStatusError(0, "no development_status mapping")
    return entries


_LIST_ITEM = re.compile(r"^ *- +(?=\S)")
_EPICS_KEY = re.compile(r"^epics\s*:\s*(#.*)?$")
_STORIES_KEY = re.compile(r"^stories\s*:\s*(#.*)?$")
_STORY_FIELD = re.compile(r"^(id|status)\s*:")
_STORY_PREFIX = re.compile(r"^story[-_.]?(?=\d)", re.IGNORECASE)


@dataclass
class _ListedStory:
    """One ``- id: story-1.1`` item being read: where it starts, its fields' indent, and the
    id and status read so far (with the status's line)."""

    line: int
    fields: int
    id: str = ""
    status: tuple[str, int] | None = None

    def field(self, body: str, number: int) -> None:
        if _STORY_FIELD.match(body):
            key, value = _pair(body, number)
            if key == "id" and value:
                self.id = value
            elif key == "status" and value:
                self.status = (value, number)


def parse_story_list(text: str) -> list[SprintEntry] | None:
    """The stories of a ``sprint-status.yaml`` that lists them under ``epics:`` instead of a
    ``development_status`` mapping (a shape some projects write by hand; BMAD's sprint
    planning never does)::

        epics:
          - id: epic-1
            status: done
            stories:
              - id: story-1.1
                title: 'Monorepo Scaffolding'
                status: done

    Each story is an entry named by its id without ``story-`` and with dashes
    (``story-1.1`` → ``1-1``), its value the item's ``status:``, its line that status's line.
    The epics' own fields, and anything nested deeper in a story, are passed over.

    Returns:
        The entries in file order, or None when the file lists no story under ``epics:``.

    Raises:
        SprintStatusError: a story item has no id or no status, or an id appears twice.
    """
    entries: list[SprintEntry] = []
    seen: dict[str, int] = {}
    in_epics = False
    opened: int | None = None  # the indent of the open `stories:` key
    items: int | None = None  # the indent of its items
    story: _ListedStory | None = None

    def close() -> None:
        if story is None:
            return
        if not story.id:
            raise SprintStatusError(story.line, "a story item has no id")
        if story.status is None:
            raise SprintStatusError(story.line, f"story '{story.id}' has no status")
        name = _STORY_PREFIX.sub("", story.id).replace(".", "-")
        if name in seen:
            raise SprintStatusError(
                story.line, f"'{story.id}' appears twice (first on line {seen[name]})"
            )
        seen[name] = story.line
        entries.append(SprintEntry(name, *story.status))

    for number, raw, body, indent in _content_lines(text):
        item = _LIST_ITEM.match(raw)
        if indent == 0 and not (in_epics and item is not None):
            close()
            story, opened, items = None, None, None
            in_epics = _EPICS_KEY.match(body) is not None
            continue
        if not in_epics or body.startswith("\t"):
            continue
        if opened is not None and items is None and item is not None and indent >= opened:
            items = indent
        if items is not None and (indent < items or (indent == items and item is None)):
            close()  # the list of stories ended
            story, opened, items = None, None, None
        if items is not None and indent == items and item is not None:
            close()
            story = _ListedStory(number, item.end())
            story.field(raw[item.end() :], number)
        elif story is not None and indent == story.fields:
            story.field(body, number)
        elif story is None and opened is None:
            # `stories:` as an epic's field, or as the first key of its item (`- stories:`).
            key_at = item.end() if item is not None else indent
            if _STORIES_KEY.match(raw[key_at:]):
                opened = key_at
    close()
    return entries or None


def parse_plan_entries(text: str) -> tuple[list[SprintEntry], bool]:
    """The story entries of a ``sprint-status.yaml``: its ``development_status`` mapping
    (:func:`parse_sprint_status`), else, when it has none, the stories it lists under
    ``epics:`` (:func:`parse_story_list`); with whether they came from such a list.

    Raises:
        SprintStatusError: as :func:`parse_sprint_status`, or the list's own error.
    """
    try:
        return parse_sprint_status(text), False
    except SprintStatusError as exc:
        listed = parse_story_list(text) if not exc.line else None
        if listed is None:
            raise
        return listed, True


def top_level_value(text: str, name: str) -> tuple[str, int] | None:
    """The scalar value of the top-level key ``name`` (``story_location``) and its line, or
    None when the file has no such key, it opens a block, or its line cannot be read."""
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw or raw[0] in " \t#":
            continue
        try:
            key, value = _pair(raw, number)
        except SprintStatusError:
            continue
        if key == name:
            return (value, number) if value is not None else None
    return None
