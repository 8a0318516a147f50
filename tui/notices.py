"""What the session has to say beside the screen: notices (startup warnings, run warnings,
errors) kept to be read again on the notices screen, and the notes they are made of."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from promptdeck.core.lean_dataclass import dataclass


@dataclass(frozen=True)
class Notice:
    """One message worth reading again.

    Attributes:
        source: where it came from (``stories``, ``run 1-1 dev``, ``settings``).
        text: the message, as plain text.
        severity: ``information``, ``warning`` or ``error``.
        kind: what sort of note it is (``skipped``, ``unknown-status`` …), when its sender
            says; notes of one kind are listed together.
    """

    source: str
    text: str
    severity: str = "warning"
    kind: str = ""


@runtime_checkable
class KindedNote(Protocol):
    """A note that says what kind it is (a loading note grouped by kind, with a summary)."""

    @property
    def kind(self) -> str:
        """What sort of note it is."""

    @property
    def summary(self) -> str:
        """The note as one line."""


def as_notices(
    source: str, messages: Sequence[str | KindedNote], severity: str = "warning"
) -> list[Notice]:
    """``messages`` (plain lines or kinded notes) as notices, each text once, empty ones left
    out."""
    notices: dict[str, Notice] = {}
    for message in messages:
        if isinstance(message, str):
            notice = Notice(source, message, severity)
        else:
            notice = Notice(source, message.summary, severity, message.kind)
        if notice.text and notice.text not in notices:
            notices[notice.text] = notice
    return list(notices.values())
