"""Every command and option the docs show with a command exists in that command's ``--help``,
and every command's ``--help`` links to its section of docs/commands.md.

What counts as "shown with a command" (in README.md and docs/*.md):

* an inline code span, or a line of a fenced code block (a leading ``$ `` dropped, a ``#``
  comment and anything after a `` | `` pipe cut off), that starts with ``promptdeck`` (or a
  path ending in ``/promptdeck``) followed by a space. Its next word, when it is a plain
  lowercase word, names the command and must be one of the CLI's commands; anything else
  there (a PATH, ``[PATH]``, an option) means the app, as the CLI itself reads it;
* an inline code span that starts with a command's name followed by an option
  (```run --dry-run```, ```inspect --cache --json```).

Every ``--long-option`` in such a span or line must be one of that command's options (or
``--help`` / ``--version``). Options written as a pattern (``--party-<phase>``) are not
checked. The parser is built from ``promptdeck.cli`` once, in this process.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from doc_pages import ROOT, code_spans, lines, pages, relative
from promptdeck.cli import build_parser
from promptdeck.cli.parsing import COMMANDS_PAGE

DELIBERATE_TYPOS = frozenset({"stoires"})
"""Command words the docs misspell on purpose (to show the CLI's did-you-mean)."""

_PROMPTDECK = re.compile(r"^(?:\S*/)?promptdeck\s+(.*)$")
_COMMAND_WORD = re.compile(r"^[a-z][a-z-]*$")
_OPTION = re.compile(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*)(?![\w<-])")


@cache
def _parser() -> argparse.ArgumentParser:
    return build_parser()


def _commands() -> dict[str, argparse.ArgumentParser]:
    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("the CLI has no subcommands")


def _options(command: str) -> set[str]:
    return {*_commands()[command]._option_string_actions, *_parser()._option_string_actions}


def _mentions(text: str) -> tuple[str, str] | None:
    """(command, the rest of the text) when ``text`` shows a command, else None."""
    match = _PROMPTDECK.match(text.strip())
    if match is not None:
        rest = match.group(1)
        word = rest.split(maxsplit=1)[0] if rest.split() else ""
        if _COMMAND_WORD.match(word):
            return word, rest[len(word) :]
        return "app", rest
    words = text.split()
    if len(words) > 1 and words[0] in _commands() and words[1].startswith("--"):
        return words[0], " ".join(words[1:])
    return None


def _shown(page: Path) -> Iterator[tuple[int, str, str, str]]:
    """(line, text, command, rest) for every command the page shows."""
    for line in lines(page):
        if line.in_fence:
            text = line.text.strip().removeprefix("$ ").split(" # ", 1)[0].split(" | ", 1)[0]
            candidates = [text] if text.startswith(("promptdeck", ".venv/")) else []
        else:
            candidates = code_spans(line.text)
        for text in candidates:
            found = _mentions(text)
            if found is not None:
                yield line.number, text, *found


def _unknown(page: Path) -> list[str]:
    problems: list[str] = []
    for number, text, command, rest in _shown(page):
        where = f"{relative(page)}:{number}: `{text}`"
        if command not in _commands():
            if command not in DELIBERATE_TYPOS:
                problems.append(f"{where}: no command {command!r}")
            continue
        for option in _OPTION.findall(rest):
            if option not in _options(command):
                problems.append(f"{where}: {command} has no option {option}")
    return problems


@pytest.mark.parametrize("page", pages(), ids=relative)
def test_commands_and_options_shown_exist(page: Path) -> None:
    assert _unknown(page) == []


def test_the_rule_reads_commands_and_options(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "`promptdeck inspect 1-2 --cache --no-such-flag` `run --dry-run` `run --nope`\n"
        "`promptdeck --agent codex` `promptdeck stoires` `promptdeck stories`\n"
        "`promptdeck frobnicate --json` `--party-<phase>` `git diff --staged`\n"
        "```sh\n$ promptdeck runs --story 1-2 --bogus  # --not-this\n```\n",
        encoding="utf-8",
    )
    found = [problem.split(": ", 2)[2] for problem in _unknown(page)]
    assert found == [
        "inspect has no option --no-such-flag",
        "run has no option --nope",
        "no command 'frobnicate'",
        "runs has no option --bogus",
    ]


def test_the_docs_show_commands_at_all() -> None:
    shown = {command for page in pages() for _, _, command, _ in _shown(page)}
    assert {"inspect", "run", "compose", "stories", "capture"} <= shown


def test_every_command_help_links_to_its_section() -> None:
    page = ROOT / COMMANDS_PAGE
    from doc_pages import anchors

    headings = anchors(page)
    for name, parser in _commands().items():
        help_text = parser.format_help()
        links = re.findall(rf"{re.escape(COMMANDS_PAGE)}#([\w-]+)", help_text)
        assert links, f"promptdeck {name} --help has no link to {COMMANDS_PAGE}"
        for anchor in links:
            assert anchor in headings, f"promptdeck {name} --help: no section #{anchor}"
