"""What changed between two prompts: per layer and per injected file, added, removed or
changed, with line diffs — so "why did the agent behave differently this time" has an answer.

A run records the exact system prompt and user message it sent (``system.md``, ``user.md``)
and each layer's sha256 (``meta.json``). The layers are found again in ``system.md`` by those
hashes (the layers are joined by a blank line, so each ends where the text hashed so far
matches); the injected files by their ``<file path="…">`` blocks. The app and
``promptdeck diff`` share everything here.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import UsageError
from ..layers.model import JOINER
from ..lean_dataclass import dataclass
from ..project.textfiles import RECORD_TEXT_LIMIT, TextProblem, printable_name, read_text
from ..records.reader import RunInfo, list_runs
from ..records.writer import RUNS_RELPATH
from .request import ComposedPrompt

_FILE_BLOCK = re.compile(r'^  <file path="([^"]*)">\n(.*?)\n  </file>$', re.DOTALL | re.MULTILINE)
_EMPTY_SHA = hashlib.sha256(b"").hexdigest()


@dataclass(frozen=True)
class PromptSide:
    """One prompt as parts: ``(kind, name, text)`` with kind ``layer``, ``file`` or ``user``.

    Attributes:
        label: what it is (``run 20260101-… (dev #2)``, ``now``).
        parts: its parts, in prompt order.
    """

    label: str
    parts: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class PartChange:
    """One part compared.

    Attributes:
        kind: ``layer``, ``file``, ``user`` or ``system`` (the whole text, when the layers of
            a run could not be found again).
        name: the layer id, the file path, ``user message``.
        change: ``added``, ``removed``, ``changed`` or ``same``.
        old_bytes: its size before (0 when added).
        new_bytes: its size after (0 when removed).
        lines: the unified line diff (changed parts only).
    """

    kind: str
    name: str
    change: str
    old_bytes: int
    new_bytes: int
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class PromptDiff:
    """Two prompts compared, part by part."""

    old: str
    new: str
    parts: tuple[PartChange, ...]

    @property
    def changed(self) -> tuple[PartChange, ...]:
        """The parts that differ."""
        return tuple(part for part in self.parts if part.change != "same")


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def split_layers(system: str, layers: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]] | None:
    """``system`` cut back into its layers, using the recorded ``{"id", "sha256"}`` of each.

    Returns:
        ``(layer id, text)`` in order, or None when the text does not match the hashes.
    """
    found: list[tuple[str, str]] = []
    position = 0
    data = system
    for layer in layers:
        layer_id, digest = str(layer.get("id", "")), str(layer.get("sha256", ""))
        if digest == _EMPTY_SHA:
            found.append((layer_id, ""))
            continue
        if found and any(text for _id, text in found):
            if not data.startswith(JOINER, position):
                return None
            position += len(JOINER)
        hasher = hashlib.sha256()
        start = cursor = position
        end = None
        while True:
            # Candidate ends are where a joiner starts, and the end of the text.
            joiner_at = data.find(JOINER, cursor)
            stop = len(data) if joiner_at < 0 else joiner_at
            hasher.update(data[cursor:stop].encode("utf-8"))
            if hasher.hexdigest() == digest:
                end = stop
                break
            if joiner_at < 0:
                break
            hasher.update(JOINER.encode("utf-8"))
            cursor = joiner_at + len(JOINER)
        if end is None:
            return None
        found.append((layer_id, data[start:end]))
        position = end
    return found if position == len(data) else None


def _parts(layers: Sequence[tuple[str, str]], user: str) -> tuple[tuple[str, str, str], ...]:
    parts: list[tuple[str, str, str]] = []
    files: list[tuple[str, str, str]] = []
    for layer_id, text in layers:
        # Injected files are compared one by one; their layer keeps only its own words.
        for match in _FILE_BLOCK.finditer(text):
            files.append(("file", match.group(1), match.group(2)))
        parts.append(("layer", layer_id, _FILE_BLOCK.sub(r'  <file path="\1">…</file>', text)))
    return (*parts, *files, ("user", "user message", user))


def side_of_prompt(prompt: ComposedPrompt, label: str = "now") -> PromptSide:
    """The prompt about to be sent, as parts."""
    layers = [(layer.layer_id, layer.content) for layer in prompt.layers]
    return PromptSide(label, _parts(layers, prompt.user))


def side_of_run(run: RunInfo) -> PromptSide:
    """A recorded run's prompt, as parts (the whole system text when its layers cannot be
    found again)."""
    label = f"run {run.id} ({run.phase} #{run.attempt})"
    root = run.dir.parent.parent.parent.resolve()
    texts: list[str] = []
    for name in ("system.md", "user.md"):
        # Guarded: a record is a file the repository can ship (a FIFO, a link to /dev/zero).
        text = read_text(run.dir / name, root, limit=RECORD_TEXT_LIMIT)
        if isinstance(text, TextProblem) and text.reason == "empty":
            text = ""
        if isinstance(text, TextProblem):
            raise UsageError(f"{RUNS_RELPATH}/{printable_name(run.id)}/{name}: {text}")
        texts.append(text)
    system, user = texts
    layers = split_layers(system, list(run.run_meta.layers))
    if layers is None:
        return PromptSide(
            label, (("system", "system prompt", system), ("user", "user message", user))
        )
    return PromptSide(label, _parts(layers, user))


def compare(old: PromptSide, new: PromptSide, context: int = 2) -> PromptDiff:
    """Every part of either side: added, removed, changed (with its line diff) or the same."""
    if any(kind == "system" for kind, _n, _t in old.parts + new.parts):
        # One side has no layers: compare whole texts (layers joined as sent).
        old = _whole(old)
        new = _whole(new)
    before = {(kind, name): text for kind, name, text in old.parts}
    after = {(kind, name): text for kind, name, text in new.parts}
    keys = list(
        dict.fromkeys([*((k, n) for k, n, _t in old.parts), *((k, n) for k, n, _t in new.parts)])
    )
    changes: list[PartChange] = []
    for key in keys:
        kind, name = key
        if key not in after:
            changes.append(PartChange(kind, name, "removed", _size(before[key]), 0))
        elif key not in before:
            changes.append(PartChange(kind, name, "added", 0, _size(after[key])))
        elif before[key] == after[key]:
            size = _size(after[key])
            changes.append(PartChange(kind, name, "same", size, size))
        else:
            lines = difflib.unified_diff(
                before[key].splitlines(),
                after[key].splitlines(),
                fromfile=f"{name} ({old.label})",
                tofile=f"{name} ({new.label})",
                n=context,
                lineterm="",
            )
            changes.append(
                PartChange(
                    kind, name, "changed", _size(before[key]), _size(after[key]), tuple(lines)
                )
            )
    return PromptDiff(old.label, new.label, tuple(changes))


def _whole(side: PromptSide) -> PromptSide:
    system = [text for kind, _n, text in side.parts if kind == "system"]
    if not system:
        # Put the layers back together as sent (files inside their layer again is not
        # needed: the comparison is of texts).
        system = [
            JOINER.join(text for kind, _n, text in side.parts if kind in ("layer", "file") and text)
        ]
    user = [text for kind, _n, text in side.parts if kind == "user"]
    return PromptSide(
        side.label,
        (("system", "system prompt", system[0]), ("user", "user message", user[0] if user else "")),
    )


def last_run_of(root: Any, story_id: str, phase: str, before: str | None = None) -> RunInfo | None:
    """The latest run of ``phase`` for a story (chat turns aside), optionally before run id
    ``before``."""
    found = None
    for run in list_runs(root, story_id):
        if before is not None and run.id == before:
            break
        if run.phase == phase and run.run_meta.mode != "chat":
            found = run
    return found


def diff_text(diff: PromptDiff) -> list[str]:
    """The comparison as lines: a summary, then each changed part with its line diff."""
    changed = diff.changed
    lines = [f"--- {diff.old}", f"+++ {diff.new}"]
    if not changed:
        lines.append(f"the prompts are the same ({len(diff.parts)} parts compared)")
        return lines
    counts = {
        kind: sum(1 for part in changed if part.change == kind)
        for kind in ("added", "removed", "changed")
    }
    lines.append(
        f"{len(changed)} of {len(diff.parts)} parts differ: "
        + ", ".join(f"{count} {kind}" for kind, count in counts.items() if count)
    )
    for part in changed:
        delta = part.new_bytes - part.old_bytes
        lines.append("")
        lines.append(
            f"{part.change:<8} {part.kind} {part.name}  "
            f"{part.old_bytes:,} → {part.new_bytes:,} bytes ({delta:+,})"
        )
        lines.extend(part.lines)
    return lines
