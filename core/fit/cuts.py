"""The lines where the clients cut or warn, measured against a story's prompt and project.

promptdeck's own prompt reaches the agent whole, but the clients apply caps of their own:

- **Codex** reads the ``AGENTS.md`` files from the project root down to its working folder
  (``AGENTS.override.md`` first in each folder) and keeps only the first
  ``project_doc_max_bytes`` of them together (32 KiB by default): a file past the budget is cut
  at the byte where it runs out, and the files after it are not sent at all. Measured against
  codex-cli: the kept text is the files' bytes joined by a blank line, the joins not counted.
- **Claude Code** warns when one of its memory files (``CLAUDE.md``) is over about 40,000
  characters.
- **Linux** limits one argument to 131,072 bytes: a system prompt passed on the command line
  must stay under it.
- **BMAD** aims at story specs of 900–1,300 tokens (over 1,600 is a "high risk of context rot")
  and epic context of 800–1,500 tokens.

:func:`cut_lines` measures each against a composed prompt; ``inspect`` lists them (``--json``:
``cut_lines``) and the composition chart draws the ones on the system prompt's own scale.
Only files inside the project are read, through the guarded reader.
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from ..client_loads import (
    CLAUDE_LARGE_MEMORY_CHARS,
    CLAUDE_MEMORY_NAMES,
    CODEX_PROJECT_DOC_MAX_BYTES,
    codex_chain_paths,
    codex_kept,
)
from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, read_file_bytes
from ..prompt.request import ComposedPrompt
from ..tokens.counter import ARGV_LIMIT_BYTES

BMAD_SPEC_TARGET = (900, 1_300)
BMAD_SPEC_RISK_TOKENS = 1_600
BMAD_EPIC_CONTEXT_TARGET = (800, 1_500)
RULES_READ_LIMIT = 4 * 1024 * 1024
"""A rules file larger than this is not read to measure it (its size comes from ``stat``)."""

_HEADING = re.compile(rb"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_EPIC_CONTEXT = re.compile(r"(^|/)epic-[^/]*context[^/]*\.md$")

Unit = Literal["bytes", "chars", "tokens"]


@dataclass(frozen=True)
class ChainFile:
    """One file of Codex's ``AGENTS.md`` chain and what of it Codex keeps.

    Attributes:
        path: root-relative.
        bytes: its size.
        kept: the bytes of it Codex sends (``bytes`` when whole, 0 when not sent at all).
        lost_headings: the Markdown headings at or after the cut (``## Setup``).
    """

    path: str
    bytes: int
    kept: int
    lost_headings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of one chain file."""
        return {
            "path": self.path,
            "bytes": self.bytes,
            "kept": self.kept,
            "lost_headings": list(self.lost_headings),
        }


@dataclass(frozen=True)
class CutLine:
    """One client's cap against what it measures.

    Attributes:
        client: ``codex``, ``claude``, ``linux`` or ``bmad``.
        name: what the line is (``AGENTS.md budget``).
        subject: what is measured (a path, ``system prompt``).
        unit: ``bytes``, ``chars`` or ``tokens``.
        limit: where the line is.
        size: the subject's size in that unit (None when not counted).
        over: True when the subject passes the line.
        says: one line for a person: where the cut falls and what it loses.
        on_system_scale: True when the subject is the system prompt (the chart draws it).
        files: Codex's chain, file by file (empty for the other lines).
    """

    client: str
    name: str
    subject: str
    unit: Unit
    limit: int
    size: int | None
    over: bool
    says: str
    on_system_scale: bool = False
    files: tuple[ChainFile, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The ``inspect --json`` shape of one line."""
        data: dict[str, Any] = {
            "client": self.client,
            "name": self.name,
            "subject": self.subject,
            "unit": self.unit,
            "limit": self.limit,
            "size": self.size,
            "over": self.over,
            "says": self.says,
        }
        if self.files:
            data["files"] = [f.to_dict() for f in self.files]
        return data


def _read(root: Path, path: Path) -> bytes | None:
    data = read_file_bytes(path, root, limit=RULES_READ_LIMIT)
    return None if isinstance(data, TextProblem) else data


def _headings(data: bytes, start: int) -> tuple[str, ...]:
    """The headings whose line reaches past byte ``start`` (a heading cut in two is lost)."""
    found = []
    for match in _HEADING.finditer(data):
        if match.end() > start:
            text = match.group(0).decode("utf-8", "replace").strip()
            found.append(text)
    return tuple(found)


def codex_chain(
    root: Path, cwd: Path | None = None, max_bytes: int = CODEX_PROJECT_DOC_MAX_BYTES
) -> tuple[ChainFile, ...]:
    """Codex's ``AGENTS.md`` files from its project root (the nearest folder up from ``cwd``
    holding ``.git``, which may be above ``root``) down to ``cwd`` (default: ``root``, where
    promptdeck runs it), each with the bytes Codex keeps of it under its one ``max_bytes``
    budget (:func:`~promptdeck.core.client_loads.codex_kept`). A path is relative to ``root``
    (``../AGENTS.md`` for a file above it).

    A file that holds only whitespace is skipped and costs nothing, as Codex does.
    """
    root = root.resolve()
    here = (cwd or root).resolve()
    if not here.is_relative_to(root):
        here = root
    top, paths = codex_chain_paths(root, here)
    found: list[tuple[str, bytes]] = []
    for path in paths:
        data = _read(top, path)
        if data is None or not data.strip():
            continue
        found.append((os.path.relpath(path, root).replace(os.sep, "/"), data))
    kept = codex_kept([len(data) for _, data in found], max_bytes)
    return tuple(
        ChainFile(name, len(data), keep, _headings(data, keep) if keep < len(data) else ())
        for (name, data), keep in zip(found, kept, strict=True)
    )


def codex_line(root: Path, cwd: Path | None = None) -> CutLine | None:
    """Codex's ``AGENTS.md`` budget against the chain (None when there is no AGENTS.md)."""
    chain = codex_chain(root, cwd)
    if not chain:
        return None
    total = sum(f.bytes for f in chain)
    over = total > CODEX_PROJECT_DOC_MAX_BYTES
    if over:
        cut = next(f for f in chain if f.kept < f.bytes)
        dropped = [f.path for f in chain if f.kept == 0]
        lost = [h for f in chain for h in f.lost_headings]
        says = (
            f"Codex keeps {CODEX_PROJECT_DOC_MAX_BYTES:,} of {total:,} bytes: {cut.path} is cut "
            f"at byte {cut.kept:,} of {cut.bytes:,}"
            + (f"; not sent: {', '.join(dropped)}" if dropped and dropped != [cut.path] else "")
            + (f"; headings lost: {', '.join(lost[:8])}" if lost else "")
            + (f" (+{len(lost) - 8} more)" if len(lost) > 8 else "")
            + _pushed_out(chain)
        )
    else:
        says = f"Codex sends all {total:,} bytes (budget {CODEX_PROJECT_DOC_MAX_BYTES:,})"
    subject = " → ".join(f.path for f in chain)
    return CutLine(
        "codex",
        "AGENTS.md budget",
        subject,
        "bytes",
        CODEX_PROJECT_DOC_MAX_BYTES,
        total,
        over,
        says,
        files=chain,
    )


def _pushed_out(chain: tuple[ChainFile, ...]) -> str:
    """What the files above the project take of the budget, when the project's own
    ``AGENTS.md`` loses to them (empty otherwise)."""
    above = [f for f in chain if f.path.startswith("../")]
    own = [f for f in chain if not f.path.startswith("../") and f.kept < f.bytes]
    if not above or not own:
        return ""
    taken = sum(f.kept for f in above)
    return (
        f"; {' and '.join(f.path for f in above)} above the project take {taken:,} bytes"
        f" of the budget first, pushing out the project's own {own[0].path}"
        + (" (not sent at all)" if own[0].kept == 0 else f" (cut at byte {own[0].kept:,})")
    )


def claude_lines(root: Path) -> list[CutLine]:
    """Claude Code's large-memory warning against each ``CLAUDE.md`` of the project root."""
    lines = []
    for name in CLAUDE_MEMORY_NAMES:
        path = root / name
        if not path.is_file():
            continue
        data = _read(root, path)
        if data is None:
            continue
        chars = len(data.decode("utf-8", "replace"))
        over = chars > CLAUDE_LARGE_MEMORY_CHARS
        says = (
            f"Claude Code warns: {name} is {chars:,} characters, over about "
            f"{CLAUDE_LARGE_MEMORY_CHARS:,}"
            if over
            else f"{name}: {chars:,} characters, under Claude Code's large-file warning"
        )
        lines.append(
            CutLine(
                "claude",
                "large CLAUDE.md warning",
                name,
                "chars",
                CLAUDE_LARGE_MEMORY_CHARS,
                chars,
                over,
                says,
            )
        )
    return lines


def prompt_lines(prompt: ComposedPrompt) -> list[CutLine]:
    """The lines on the prompt itself: the argv limit and BMAD's size targets."""
    system = prompt.system_meter.bytes
    over = system > ARGV_LIMIT_BYTES
    lines = [
        CutLine(
            "linux",
            "one-argument limit",
            "system prompt",
            "bytes",
            ARGV_LIMIT_BYTES,
            system,
            over,
            f"the system prompt is {system:,} bytes: "
            + ("over" if over else "within")
            + f" the {ARGV_LIMIT_BYTES:,}-byte limit of one argument",
            on_system_scale=True,
        )
    ]
    for item in prompt.injection.files:
        if not item.included:
            continue
        if item.category == "story" and item.path.endswith(".md"):
            low, high = BMAD_SPEC_TARGET
            lines.append(
                _bmad_line(
                    "story spec target", item.path, item.tokens, BMAD_SPEC_RISK_TOKENS, low, high
                )
            )
        elif _EPIC_CONTEXT.search(item.path):
            low, high = BMAD_EPIC_CONTEXT_TARGET
            lines.append(_bmad_line("epic context target", item.path, item.tokens, high, low, high))
    return lines


def _bmad_line(
    name: str, path: str, tokens: int | None, limit: int, low: int, high: int
) -> CutLine:
    if tokens is None:
        says = f"{path}: not counted yet (BMAD aims at {low:,}–{high:,} tokens)"
    elif tokens > limit:
        says = f"{path} is {tokens:,} tokens, over BMAD's {limit:,} (aim: {low:,}–{high:,})"
    else:
        says = f"{path} is {tokens:,} tokens (BMAD aims at {low:,}–{high:,})"
    over = tokens is not None and tokens > limit
    return CutLine("bmad", name, path, "tokens", limit, tokens, over, says)


def cut_lines(prompt: ComposedPrompt, root: Path, cwd: Path | None = None) -> list[CutLine]:
    """Every client line against ``prompt`` and the project at ``root``, over ones first."""
    lines: list[CutLine] = []
    codex = codex_line(root, cwd)
    if codex is not None:
        lines.append(codex)
    lines.extend(claude_lines(root))
    lines.extend(prompt_lines(prompt))
    return sorted(lines, key=lambda line: not line.over)
