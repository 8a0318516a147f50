"""The main screen as its controllers' host: their workers, toasts, and the runs' two
questions (start the run? quit while it runs?) as this floor's dialogs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

if TYPE_CHECKING:
    from promptdeck.core.run import RunPlan


class ScreenHost:
    """The :class:`~promptdeck.tui.session.runs.RunHost` of a screen.

    Args:
        screen: the screen whose workers take the runs' blocking steps.
    """

    def __init__(self, screen: Screen[Any]) -> None:
        self._screen = screen

    def worker(self, step: Callable[[], None], group: str, description: str) -> None:
        """Take ``step`` in an exclusive thread worker of the screen."""
        self._screen.run_worker(
            step,
            thread=True,
            exclusive=True,
            group=group,
            exit_on_error=False,
            description=description,
        )

    def on_ui(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Call ``callback`` on the UI thread."""
        self._screen.app.call_from_thread(callback, *args, **kwargs)

    def busy(self, groups: Iterable[str]) -> bool:
        """A worker of one of ``groups`` has not finished."""
        wanted = set(groups)
        return any(w.group in wanted and not w.is_finished for w in self._screen.app.workers)

    def notify(
        self, message: str, *, severity: str = "information", timeout: float | None = None
    ) -> None:
        """A toast."""
        self._screen.notify(message, severity=severity, timeout=timeout)  # type: ignore[arg-type]

    def ask_start(self, plan: RunPlan, answered: Callable[[bool | None], None]) -> None:
        """The confirmation dialog."""
        # Imported by the question: the first frame shows no dialog.
        from .confirm_run import ConfirmRunScreen

        self._screen.app.push_screen(ConfirmRunScreen(plan), answered)

    def ask_quit(self, running: str, answered: Callable[[bool | None], None]) -> None:
        """The quit question."""
        from .quit_confirm import QuitConfirmScreen

        self._screen.app.push_screen(QuitConfirmScreen(running), answered)

    def tell_quit_question(self, outcome: str) -> None:
        """An open quit question learns that the run has ended."""
        from .quit_confirm import QuitConfirmScreen

        for screen in self._screen.app.screen_stack:
            if isinstance(screen, QuitConfirmScreen):
                screen.run_finished(outcome)

    def exit(self) -> None:
        """Leave the app."""
        self._screen.app.exit()
