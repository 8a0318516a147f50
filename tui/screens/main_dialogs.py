"""The screens the main screen opens over itself — the file picker, the text view, the copy
menu, the capture, the run history, the epic's forecast, the export, the notices and the
help — each imported when first opened (the first frame shows none of them)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.screen import Screen

from ..context import DeckContext

if TYPE_CHECKING:
    from promptdeck.core.capture import Capture
    from promptdeck.core.prompt import ComposedPrompt


class MainDialogs:
    """Opens the main screen's dialogs.

    Args:
        screen: the screen they open over.
        deck: the session.
    """

    def __init__(self, screen: Screen[Any], deck: DeckContext) -> None:
        self._screen = screen
        self._deck = deck

    def pick_file(self, chosen: Callable[[str], None]) -> None:
        """The project's files; ``chosen`` is told the one picked (nothing when none is)."""
        from .file_picker import FilePickerScreen

        def picked(path: str | None) -> None:
            if path:
                chosen(path)

        self._screen.app.push_screen(FilePickerScreen(self._deck.workspace), picked)

    def text(self, title: str, text: str, subtitle: str = "") -> None:
        """A text to read (and search)."""
        from .text_view import TextViewScreen

        self._screen.app.push_screen(TextViewScreen(title, text, subtitle))

    def copy_menu(
        self, choices: list[tuple[str, str]], chosen: Callable[[str | None], None]
    ) -> None:
        """What ``y`` copies; ``chosen`` is told the choice's id."""
        from .copy_menu import CopyMenuScreen

        self._screen.app.push_screen(CopyMenuScreen(choices), chosen)

    def fit(self, prompt: ComposedPrompt, window: int | None = None) -> None:
        """The fit report of ``prompt`` (composed in a worker: it composes the prompt again
        without files), then shown as a text; ``window``: the one a kept capture of the
        session's client reported (None: the configured one)."""
        from ..session.views import FIT_SUBTITLE, FIT_TITLE, fit_report

        deck = self._deck

        async def report() -> None:
            text = await asyncio.to_thread(fit_report, deck.workspace, prompt, deck.counter, window)
            self.text(FIT_TITLE, text, FIT_SUBTITLE)

        self._screen.run_worker(
            report(), group="fit", exclusive=True, exit_on_error=False, description="Fitting"
        )

    def capture(self, prompt: ComposedPrompt, kept: Callable[[Capture], None]) -> None:
        """The real client run once offline on ``prompt``; ``kept`` is told its capture (if
        one was taken)."""
        from .capture_view import CaptureScreen, capture_client

        def closed(capture: Capture | None) -> None:
            if capture is not None:
                kept(capture)

        client = capture_client(self._deck.agent)
        self._screen.app.push_screen(CaptureScreen(self._deck, prompt, client), closed)

    def history(self) -> None:
        """The runs of the workspace."""
        from .run_history import RunHistoryScreen

        self._screen.app.push_screen(RunHistoryScreen(self._deck))

    def epic_plan(self, epic: str) -> None:
        """The forecast of ``epic``."""
        from .epic_plan import EpicPlanScreen

        self._screen.app.push_screen(EpicPlanScreen(self._deck, epic))

    def export(self, prompt: ComposedPrompt) -> None:
        """Write ``prompt``'s files to a folder."""
        from .export import ExportScreen

        self._screen.app.push_screen(ExportScreen(self._deck.workspace, prompt))

    def notices(self) -> None:
        """Every notice of the session; read once, they stay quiet at the next start."""
        from .notices import NoticesScreen

        board = self._deck.board
        self._screen.app.push_screen(NoticesScreen(board.notices))
        board.acknowledge_notices()

    def help(self, declared: list[Binding], active: Iterable[Binding]) -> None:
        """Every key, as the user's keymap made them."""
        from .help import HelpScreen, as_bound_now

        self._screen.app.push_screen(HelpScreen(as_bound_now(declared, active)))
