"""Helpers for the app's Pilot and snapshot tests: building the app, waiting on conditions (never on
fixed sleeps), running async scenarios from plain pytest functions."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import subprocess
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.tokens.counter import get_counter
from promptdeck.tui.app import PromptdeckApp
from promptdeck.tui.context import DeckContext
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.screens.notices import KindedNote, Notice, as_notices
from promptdeck.tui.settings import LoadedSettings, UserSettings
from textual.app import App
from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerState

WAIT_LIMIT_SECONDS = 180.0
"""A safety net so a broken test fails instead of hanging; never a speed assertion. Generous:
on a loaded machine running the suite in parallel a first preview can take a minute."""


class NoticeList:
    """A notice board that only keeps what it is given (for widgets tested without the app)."""

    def __init__(self) -> None:
        self.notices: list[Notice] = []
        self.acknowledged = 0

    def add_notices(
        self, source: str, messages: Sequence[str | KindedNote], severity: str = "warning"
    ) -> None:
        self.notices.extend(as_notices(source, messages, severity))

    def acknowledge_notices(self) -> None:
        self.acknowledged = len(self.notices)


def deck_on(root: Path, *, stable: bool = True, **config: Any) -> DeckContext:
    """A session on the workspace at ``root`` with the replay agent and no git, its notices
    kept in a :class:`NoticeList`; ``config`` overrides settings of the workspace's config."""
    workspace = open_workspace(root)
    if config:
        workspace = replace(workspace, config=replace(workspace.config, **config))
    return DeckContext(
        workspace=workspace,
        counter=get_counter("o200k_base"),
        agent="replay",
        encoding="o200k_base",
        workspace_label=root.name,
        stable=stable,
        use_git=False,
        board=NoticeList(),
    )


class Toasts:
    """Every toast ``app`` is asked to show, in order, recorded at its ``notify``.

    A toast on screen expires after its timeout (a slow machine may outlast it before the test
    looks), so tests read what was shown from here, never from the app's private toast list.
    """

    def __init__(self, app: App[Any]) -> None:
        self.messages: list[str] = []
        self.severities: list[str] = []
        show = app.notify

        def notify(message: str, **options: Any) -> None:
            self.messages.append(message)
            self.severities.append(str(options.get("severity", "information")))
            show(message, **options)

        # An attribute of the instance: every screen and widget notifies through `self.app`.
        setattr(app, "notify", notify)  # noqa: B010

    def containing(self, text: str) -> list[str]:
        """The toasts whose text contains ``text``."""
        return [message for message in self.messages if text in message]


def set_agent_settings(root: Path, **values: object) -> None:
    """Put ``[agent]`` settings into the workspace's config (the demo's has an [agent] table)."""
    config = root / ".promptdeck" / "config.toml"
    lines = []
    for key, value in values.items():
        shown = f'"{value}"' if isinstance(value, str) else str(value)
        lines.append(f"{key} = {shown}")
    text = config.read_text(encoding="utf-8")
    assert "[agent]\n" in text
    config.write_text(text.replace("[agent]\n", "[agent]\n" + "\n".join(lines) + "\n", 1))
    # Committed, so runs do not report the settings as changes made before the phase.
    subprocess.run(
        ["git", "-C", str(root), "commit", "-q", "--no-verify", "-am", "test settings"],
        check=True,
    )


def make_app(
    root: Path,
    *,
    theme: str | None = None,
    user_settings: UserSettings | None = None,
    **options: object,
) -> PromptdeckApp:
    """The app on ``root`` with default user settings (none read from disk), in ``theme``;
    ``user_settings``: other settings, as if read from the user's file."""
    settings = LoadedSettings(
        user_settings or UserSettings(theme=theme),
        root.parent / "xdg" / "promptdeck" / "settings.toml",
    )
    return PromptdeckApp(
        open_workspace(root),
        workspace_label=root.name,
        settings=settings,
        **options,  # type: ignore[arg-type]
    )


async def wait_for(pilot: Pilot[None], condition: Callable[[], bool], what: str) -> None:
    """Let the app run until ``condition()`` holds."""
    loop_time = 0.0
    while not condition():
        await pilot.pause(0.05)
        loop_time += 0.05
        if loop_time > WAIT_LIMIT_SECONDS:
            raise AssertionError(f"gave up waiting for {what}")


async def workers_settled(app: App[Any]) -> None:
    """Wait until every worker of ``app`` has ended. A worker cancelled on the way is not a
    failure: the app cancels an exclusive worker (a preview's cache measure, say) when a newer
    request replaces it, and the newer one is then waited for. A worker that fails while it
    is waited for fails the wait (``WorkerFailed``)."""
    waited = 0.0
    while True:
        running = [w for w in app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]
        if not running:
            return
        if waited > WAIT_LIMIT_SECONDS:
            raise AssertionError(f"gave up waiting for the workers {running}")
        started = [w for w in running if w.state is WorkerState.RUNNING]
        with contextlib.suppress(WorkerCancelled):
            await app.workers.wait_for_complete(started)
        await asyncio.sleep(0.01)
        waited += 0.01


def main_screen(pilot: Pilot[None]) -> MainScreen:
    """The main screen (the bottom of the stack)."""
    for screen in pilot.app.screen_stack:
        if isinstance(screen, MainScreen):
            return screen
    raise AssertionError("no main screen")


async def wait_for_preview(pilot: Pilot[None], story_id: str | None = None) -> MainScreen:
    """Wait until the preview shows a counted prompt (of ``story_id`` when given)."""
    await wait_for(
        pilot,
        lambda: any(isinstance(s, MainScreen) for s in pilot.app.screen_stack),
        "the main screen",
    )
    screen = main_screen(pilot)

    def ready() -> bool:
        prompt = screen.prompt
        if prompt is None or not screen.prompt_counted:
            return False
        if story_id is not None and prompt.story.id != story_id:
            return False
        # Counted and current: nothing left to compose.
        request = screen.current_request()
        return request is not None and request == prompt.request

    try:
        await wait_for(pilot, ready, f"the preview of {story_id or 'the first story'}")
    except AssertionError as exc:
        prompt = screen.prompt
        state = (
            f"story={screen.story.id if screen.story else None} "
            f"shown={prompt.request if prompt else None} counted={screen.prompt_counted} "
            f"wanted={screen.current_request()} "
            f"workers={[(w.group, w.state.name) for w in pilot.app.workers]} "
            f"notices={[n.text for n in getattr(pilot.app, 'notices', [])]}"
        )
        raise AssertionError(f"{exc}: {state}") from None
    return screen


async def settled_preview(pilot: Pilot[Any], story_id: str) -> MainScreen:
    """:func:`wait_for_preview`, then every worker done and one more frame: the screen as a
    snapshot should take it (the cache row and the cut lines are measured by workers)."""
    screen = await wait_for_preview(pilot, story_id)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return screen


def run_async(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test body with ``asyncio.run`` (pytest fixtures pass through)."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return wrapper
