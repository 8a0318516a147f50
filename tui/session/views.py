"""The views beside the preview — the fit report (``f``), the client's capture (``C``), the
cache row under the meters — decided apart from any screen.

:func:`fit_report` writes the fit view's text; :func:`capture_origin` and
:func:`kept_capture` say which capture replaces the overhead estimate; :class:`CacheRow` keeps
which request the cache row was measured for, so a row of another state never stands beside
the prompt shown and one measure at a time follows the latest prompt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptdeck.core.capture import Capture
    from promptdeck.core.project import Workspace
    from promptdeck.core.prompt import ComposedPrompt, PromptRequest
    from promptdeck.core.tokens import TokenCounter

FIT_TITLE = "Fit and cut lines"
FIT_SUBTITLE = "f: fit"


def fit_report(
    workspace: Workspace,
    prompt: ComposedPrompt,
    counter: TokenCounter,
    captured_window: int | None = None,
) -> str:
    """The fit view's text (blocking: it composes the prompt again without files): the
    fewest files to leave out so the prompt fits its budget — the window a kept capture of the
    client reported, ``captured_window``, when given —, then where the clients cut or warn."""
    from promptdeck.core.fit import cut_lines, default_fit

    answer = default_fit(workspace, prompt, counter, captured_window=captured_window)
    lines = cut_lines(prompt, workspace.root)
    cuts = (f"{'✖' if cut.over else '·'} {cut.client} {cut.name}: {cut.says}" for cut in lines)
    return "\n".join([*answer.lines(), "", "Where the clients cut or warn:", *cuts])


def capture_origin(capture: Capture, *, stable: bool) -> str:
    """Which capture the meters show: the client and its version (and, outside a stable
    session, when it was taken)."""
    if stable:
        # The moment of capture varies between sessions: a stable session leaves it out.
        return f"{capture.client} {capture.client_version or '(version unknown)'}"
    return capture.origin()


def kept_capture(client: str) -> tuple[Capture | None, list[str]]:
    """The last capture of ``client`` kept in the user's cache folder (blocking: read through
    the guarded reader), and the notes of reading it; none for a client promptdeck does not
    capture."""
    from promptdeck.core.capture import CLIENTS, remembered_capture

    notes: list[str] = []
    if client not in CLIENTS:
        return None, notes
    return remembered_capture(client, notes=notes), notes


def same_cache_row(one: PromptRequest, other: PromptRequest) -> bool:
    """The cache row of ``one`` holds for ``other`` too: the same story, inclusion, delivery
    and phase (the row composes the phase sequence from these alone)."""
    return (one.story_id, one.selection, one.delivery, one.phase) == (
        other.story_id,
        other.selection,
        other.delivery,
        other.phase,
    )


class CacheRow:
    """Which request the cache row is measured for, and whether a measure is under way."""

    def __init__(self) -> None:
        self.wanted: PromptRequest | None = None
        """The request whose row is shown or to be measured."""
        self.measuring = False
        """True while a measure runs (it follows :attr:`wanted` until it has measured it)."""

    def shown(self, request: PromptRequest) -> tuple[bool, bool]:
        """A counted prompt of ``request`` is shown: (clear the row standing — it was measured
        for another state —, start a measure — none runs)."""
        measured = self.wanted
        clear = measured is None or not same_cache_row(measured, request)
        self.wanted = request
        start = not self.measuring
        self.measuring = True
        return clear, start

    def still_wanted(self, request: PromptRequest | None) -> bool:
        """``request`` is the latest one asked for (a measure of it is worth showing)."""
        return request is not None and request is self.wanted

    async def follow(
        self,
        measure: Callable[[PromptRequest], Awaitable[str]],
        show: Callable[[str], None],
        rest: float,
    ) -> None:
        """Measure the latest request once it has rested ``rest`` seconds, and ``show`` the
        row if it is still the latest; follow the next one otherwise (no measure is ever
        cancelled half-way: one follower runs at a time, started by :meth:`shown`)."""
        try:
            while True:
                wanted = self.wanted
                await asyncio.sleep(rest)
                if wanted is None or not self.still_wanted(wanted):
                    continue
                line = await measure(wanted)
                if self.still_wanted(wanted):
                    show(line)
                    return
        finally:
            self.measuring = False
