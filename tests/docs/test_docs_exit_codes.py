"""docs/exit-codes.md and ``promptdeck --help`` name every exit code the CLI has
(``EXIT_*`` in promptdeck.core.errors), and the page names no other."""

from __future__ import annotations

import re

from doc_pages import ROOT, lines
from promptdeck.cli import build_parser
from promptdeck.core import errors


def _codes() -> set[int]:
    return {value for name, value in vars(errors).items() if name.startswith("EXIT_")}


def test_the_exit_codes_page_names_every_code() -> None:
    page = ROOT / "docs" / "exit-codes.md"
    rows = {
        int(m.group(1)) for line in lines(page) if (m := re.match(r"^\|\s*(\d+)\s*\|", line.text))
    }
    assert rows == _codes()


def test_help_names_every_code() -> None:
    epilog = build_parser().epilog or ""
    named = {int(code) for code in re.findall(r"(?:: |· )(\d+) ", epilog)}
    assert named >= _codes()
