"""Commit hashes BMAD writes into its plan files are not secrets.

BMAD's build specs and v7 plans record the commit their work starts from in their front
matter (``baseline_commit: 6e43f6b9…``, ``baseline_revision: …``): a full git object name,
40 hex digits (SHA-1) or 64 (SHA-256). detect-secrets' high-entropy detector flags every one
of them, so every spec and plan of a real project would look like it leaks a credential and
a run would be refused. :func:`drop_commit_hashes` takes those findings back, and only those:

* the line is inside the file's front matter (the ``---`` block that opens it);
* its key names a commit (``commit``, ``revision``, ``rev`` or ``sha`` as a word of the key:
  ``baseline_commit``, ``head_sha``, ``baseline-revision``);
* its value, quotes aside, is exactly 40 or 64 hex digits;
* the finding is a high-entropy one (a detector that recognises a credential's own shape
  still reports the line).

A credential under any other key, in the body, or of another length is still reported. This
is a filter over the scan's findings: the scan itself is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .scan import SecretFinding

ENTROPY_KINDS = frozenset({"Hex High Entropy String", "Base64 High Entropy String"})
"""The findings a commit hash raises: detect-secrets' names of its high-entropy detectors."""

_COMMIT_LINE = re.compile(
    r"""^[ \t]*(?P<key>[A-Za-z0-9_-]+)[ \t]*:[ \t]*(?P<quote>["']?)"""
    r"""(?P<value>[0-9a-fA-F]{40}|[0-9a-fA-F]{64})(?P=quote)[ \t]*(?:\#.*)?$"""
)
_COMMIT_WORDS = frozenset({"commit", "revision", "rev", "sha"})
_FRONT_MATTER_LIMIT = 400
"""Most lines looked at for the end of the front matter: a plan's is a few dozen."""
_YAML_BREAKS = ("\x85", "\u2028", "\u2029")
"""Characters the YAML parser ends a line at and ``\n``-numbering does not: in a YAML file
detect-secrets numbers lines the parser's way, so a text holding one keeps every finding."""


def scanned_lines(text: str) -> list[str]:
    """``text``'s lines numbered as detect-secrets numbers them: universal newlines, then
    ``\n`` alone (``str.splitlines`` also ends a line at a form feed, ``\v``, U+2028 …, which
    would shift every later line number by one)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _front_matter_end(lines: Sequence[str]) -> int:
    """The 1-based line of the front matter's closing ``---`` (0 when there is none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for number, line in enumerate(lines[1:_FRONT_MATTER_LIMIT], start=2):
        if line.strip() in ("---", "..."):
            return number
    return 0


def is_commit_hash_line(line: str) -> bool:
    """Whether ``line`` is a front-matter ``key: value`` whose key names a commit and whose
    value is a full git object name (40 or 64 hex digits)."""
    match = _COMMIT_LINE.match(line)
    if match is None:
        return False
    words = re.split(r"[_-]+", match.group("key").lower())
    return any(word in _COMMIT_WORDS for word in words)


def drop_commit_hashes(text: str, findings: Sequence[SecretFinding]) -> tuple[SecretFinding, ...]:
    """``findings`` of ``text`` without the high-entropy ones that are commit hashes in its
    front matter (see the module's docstring)."""
    if not findings or not text.startswith("---") or any(c in text for c in _YAML_BREAKS):
        return tuple(findings)
    lines = scanned_lines(text)
    end = _front_matter_end(lines)
    return tuple(
        finding
        for finding in findings
        if not (
            finding.kind in ENTROPY_KINDS
            and 1 < finding.line < end
            and is_commit_hash_line(lines[finding.line - 1])
        )
    )
