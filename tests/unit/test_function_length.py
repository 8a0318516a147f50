"""A function over 100 lines says, near its top, why it is one piece.

Long functions are split into named steps where they split naturally; the ones that stay
whole carry a ``# One piece:`` comment within their first 15 lines saying why.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("core", "cli", "tui")
SKIPPED = (ROOT / "core" / "demo" / "workspace",)
MAX_LINES = 100
REASON = "# One piece:"
REASON_WITHIN = 15


def _comments(source: str) -> dict[int, str]:
    """Each comment by its line number (a string that looks like one is not one)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {t.start[0]: t.string for t in tokens if t.type == tokenize.COMMENT}


def offenders(source: str, name: str) -> list[str]:
    """``name:function:lines`` for each function over the limit that gives no reason."""
    comments = _comments(source)
    found = []
    for node in ast.walk(ast.parse(source, filename=name)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        assert node.end_lineno is not None
        lines = node.end_lineno - node.lineno + 1
        if lines <= MAX_LINES:
            continue
        top = range(node.lineno, _body_start(node) + REASON_WITHIN)
        if not any(comments.get(n, "").lstrip().startswith(REASON) for n in top):
            found.append(f"{name}:{node.name}:{lines}")
    return found


def _body_start(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The first line of the body after the docstring (a comment above it counts too)."""
    first = node.body[0]
    docstring = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    if docstring and first.end_lineno is not None:
        return first.end_lineno + 1
    return first.lineno


def _scanned_files() -> list[Path]:
    return sorted(
        path
        for folder in SCANNED
        for path in (ROOT / folder).rglob("*.py")
        if not any(path.is_relative_to(skipped) for skipped in SKIPPED)
    )


def test_every_long_function_says_why_it_is_one_piece() -> None:
    found = [
        entry
        for path in _scanned_files()
        for entry in offenders(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not found, (
        f"functions over {MAX_LINES} lines without a '{REASON}' comment in their first "
        f"{REASON_WITHIN} lines (split them, or say why they stay whole):\n" + "\n".join(found)
    )


def _long_body(indent: str = "    ") -> str:
    return "\n".join(f"{indent}x{n} = {n}" for n in range(MAX_LINES))


def test_the_scan_finds_a_long_function_without_a_reason() -> None:
    body = _long_body()
    short = "def short():\n    return 1\n"
    assert offenders(f"def long():\n{body}\n\n\n{short}", "m.py") == ["m.py:long:101"]
    lines = body.split("\n")
    late = "\n".join([*lines[:20], "    # One piece: too far down to count.", *lines[20:]])
    assert offenders(f"def long():\n{late}\n", "m.py") == ["m.py:long:102"]
    in_a_string = f'def long():\n    s = "# One piece: not a comment"\n{body}\n'
    assert offenders(in_a_string, "m.py") == ["m.py:long:102"]


def test_a_reason_near_the_top_is_enough() -> None:
    reasoned = f'def long():\n    """Doc."""\n    # One piece: the order.\n{_long_body()}\n'
    assert offenders(reasoned, "m.py") == []
    method = f"class C:\n    def long(self):\n        # One piece: why.\n{_long_body(' ' * 8)}\n"
    assert offenders(method, "m.py") == []
