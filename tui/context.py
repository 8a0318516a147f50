"""What the app hands its screens: the workspace and the session's fixed choices.

Screens take a :class:`DeckContext` when they are made instead of reaching for the app, so
no screen imports the app and a screen's needs are written in its constructor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.project import Workspace
from promptdeck.core.tokens import TokenCounter

from .format import duration_text
from .notices import KindedNote, Notice


class NoticeBoard(Protocol):
    """Where a screen leaves warnings for the session (the app: one toast, kept for ``w``)."""

    notices: list[Notice]
    """Every notice of the session."""

    def add_notices(
        self, source: str, messages: Sequence[str | KindedNote], severity: str = "warning"
    ) -> None:
        """Keep ``messages`` (plain lines or kinded notes) and tell the user once."""

    def acknowledge_notices(self) -> None:
        """The user has read every notice: quiet them until they change."""


@dataclass(frozen=True)
class DeckContext:
    """The session a screen works in.

    Attributes:
        workspace: the opened workspace.
        counter: the token counter of the meters.
        agent: the agent backend phases run with (``""`` when no real agent is found).
        encoding: the tokenizer's name.
        workspace_label: what the header calls the workspace.
        stable: show nothing that varies between two identical sessions.
        use_git: record SHAs, stage and commit around runs.
        board: where notices go.
        open_phase: the user's ``open_phase`` setting: every story opens on that phase.
    """

    workspace: Workspace
    counter: TokenCounter
    agent: str
    encoding: str
    workspace_label: str
    stable: bool
    use_git: bool
    board: NoticeBoard
    open_phase: str | None = None

    def duration(self, seconds: float | None) -> str:
        """A duration as shown (``—`` in stable mode)."""
        return "—" if self.stable else duration_text(seconds)

    def run_label(self, run_id: str) -> str:
        """A run id as shown (hidden in stable mode: ids carry the time)."""
        return "" if self.stable else run_id
