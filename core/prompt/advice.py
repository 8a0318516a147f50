"""What would bring an oversized injection under the error line: each inclusion the user
could turn off, measured by building the injection without it (the same core call the
preview makes), largest saving first.

The app's run confirmation and ``promptdeck run --dry-run`` both list them under a refusal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..injection.builder import build_story_injection
from ..injection.model import Injection, Selection
from ..project.workspace import Workspace
from ..stories.model import Story
from ..units import human_bytes


@dataclass(frozen=True)
class SizeOption:
    """One change the user can make, and the injection size it would give.

    Attributes:
        action: what to do, e.g. ``turn off discovery (d)``.
        saving: bytes it saves.
        size_after: the injection size after it.
        fits: True when that alone brings the injection under the error line.
    """

    action: str
    saving: int
    size_after: int
    fits: bool

    def describe(self) -> str:
        """``turn off discovery (d): −38.2 KiB → 120.0 KiB, fits``."""
        verdict = "under the line" if self.fits else "still over"
        saving, after = human_bytes(self.saving), human_bytes(self.size_after)
        return f"{self.action}: −{saving} → {after}, {verdict}"


def _alternatives(selection: Selection) -> list[tuple[str, Selection]]:
    options: list[tuple[str, Selection]] = []
    if selection.discovery:
        options.append(("turn off discovery files (d)", replace(selection, discovery=False)))
    if selection.tech_spec:
        options.append(("turn off tech-spec files (t)", replace(selection, tech_spec=False)))
    if selection.project_context:
        options.append(
            ("leave out the project context (p)", replace(selection, project_context=False))
        )
    for path in selection.additional_files:
        rest = tuple(p for p in selection.additional_files if p != path)
        options.append(
            (f"remove the added file {path} (x)", replace(selection, additional_files=rest))
        )
    if len(options) > 1:
        options.append(
            (
                "turn off every optional inclusion",
                Selection(project_context=False, discovery=False, tech_spec=False),
            )
        )
    return options


def size_options(
    workspace: Workspace, story: Story, selection: Selection, injection: Injection
) -> list[SizeOption]:
    """Every optional inclusion the user could drop, with the size it would leave.

    Blocking (reads file sizes and contents): call it from a worker thread.
    """
    found: list[SizeOption] = []
    for action, alternative in _alternatives(selection):
        smaller = build_story_injection(
            workspace,
            story,
            alternative,
            command_name=injection.command_name,
            count_tokens=False,
            scan_secrets=False,
        )
        saving = injection.size_bytes - smaller.size_bytes
        if saving <= 0:
            continue
        found.append(SizeOption(action, saving, smaller.size_bytes, smaller.level != "error"))
    return sorted(found, key=lambda option: (-option.saving, option.action))
