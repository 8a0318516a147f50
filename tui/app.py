"""The promptdeck app: a thin shell that registers themes, remembers the chosen one, and
opens the main screen on a workspace. Screens own the workflows; core does the work."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import ClassVar

from promptdeck.core.agents import found_default_agent
from promptdeck.core.project import AcknowledgedNotes, Workspace, acknowledge, load_acknowledged
from promptdeck.core.tokens import TokenCounter, get_counter, save_code_memory
from promptdeck.themes import DEFAULT_THEME, THEMES
from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.theme import Theme

from ..core.terminal import printable, printable_line
from .bindings import MAIN_BINDINGS, binding_ids, ids_of
from .commands import PromptdeckCommands
from .context import DeckContext
from .notices import KindedNote, Notice, as_notices
from .screens.main import MainScreen
from .session.interrupted import interrupted_line
from .session.opening import OpeningHelper
from .settings import LoadedSettings, load_settings, save_settings
from .styles_memory import install, loaded, remember, to_remember

TOAST_LIMIT_SECONDS = 8.0
STABLE_TOAST_SECONDS = 3600.0
"""No toast stays longer: what it says is kept on the notice board (``w``) and, for an error,
in the preview's notes, so a toast never sits over the composition."""

WARM_AFTER_SECONDS = 3.0
"""How long after start the encoder is built (if no count built it) and the compose machinery
loaded in the background."""

INTERRUPTED_AFTER_SECONDS = 0.5
"""How long after start the run records are read for interrupted runs (after the first frame:
one notice, when runs wait for ``promptdeck resume``)."""

STYLES_WAIT_SECONDS = 0.0
"""How long the app waits, as it is made, for the stylesheet the opening helper remembers: not
at all. Sent first, it is there long before (the helper starts before Textual is imported);
if it is not, Textual parses, which costs less than waiting would."""

REMEMBER_AFTER_SECONDS = 2.0
"""How long after start what the start worked out is remembered for the next one (after the
main screen's first frame, off the UI thread): what Textual parsed, when the memory did not
hold it all, and the methods compiled for the classes made."""


class PromptdeckApp(App[None]):
    """The app on one workspace.

    Args:
        workspace: the opened workspace.
        agent: the agent backend phases run with (default: the workspace's configured one).
        encoding: the tokenizer of the token meters (default: the workspace's).
        workspace_label: what the header calls the workspace (default: its folder name).
        settings: the user's settings as loaded (default: read from the user's config).
        warm_encoder: build the token encoder in the background a moment after start.
        stable: show nothing that varies between two identical sessions (durations, run
            ids, whether a toast has timed out yet on a slow machine), for snapshot tests and
            screencasts.
        use_git: record SHAs, stage after dev and commit after a passed review (``--no-git``
            turns it off, for a workspace outside git).
        opening: the catalog and first prompt being read beside the app's start (see
            :mod:`promptdeck.tui.session.opening`); None: the screen reads them itself.
    """

    CSS_PATH: ClassVar[list[str | PurePath]] = ["app.tcss", "screens/main.tcss"]
    """The main screen's layout too: read with the app's at start (a screen's own stylesheet
    is read when it is pushed, and makes Textual parse every stylesheet again)."""
    TITLE = "promptdeck"
    COMMANDS = App.COMMANDS | {PromptdeckCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+p",
            "command_palette",
            "Palette",
            id="app.command_palette",
            tooltip="Open the command palette: every key, every theme, every story",
            show=True,
            priority=True,
        ),
    ]

    def __init__(
        self,
        workspace: Workspace,
        *,
        agent: str | None = None,
        encoding: str | None = None,
        workspace_label: str | None = None,
        settings: LoadedSettings | None = None,
        warm_encoder: bool = True,
        stable: bool = False,
        use_git: bool = True,
        opening: OpeningHelper | None = None,
    ) -> None:
        super().__init__()
        self._opening = opening
        # Taken before the theme is set below: setting it hands the stylesheet the theme's
        # variables, and the remembered parse with them (refresh_css).
        self._styles = loaded(opening.take_styles(STYLES_WAIT_SECONDS)) if opening else None
        self.use_git = use_git
        self.workspace = workspace
        # Never a simulation unless named; "" when no real agent is found (`r` then refuses
        # with the line saying how to pick one).
        self.agent = agent or found_default_agent(workspace.config) or ""
        self.encoding = encoding or workspace.config.tokens_encoding
        self.workspace_label = workspace_label or workspace.root.name
        self.counter: TokenCounter = get_counter(self.encoding)
        # The themes and the remembered one before the app starts: its stylesheet is then
        # parsed once, with this theme's variables (a theme set after start parses it again).
        for theme in THEMES:
            self.register_theme(theme)
        self._settings = settings or load_settings()
        remembered = self._settings.settings.theme
        self.theme = remembered if remembered in self.available_themes else DEFAULT_THEME
        self._started_theme = self.theme
        self._warm_encoder = warm_encoder
        self.stable = stable
        self.notices: list[Notice] = []
        """Every notice of the session, for the notices screen (``w``)."""
        self.acknowledged = AcknowledgedNotes()
        """The notes already read in this project (read at mount): they stay quiet."""
        # A stable session keeps its toasts: how long the first compose takes on the machine
        # must not decide whether a toast is still on screen.
        self.toast_limit = STABLE_TOAST_SECONDS if stable else TOAST_LIMIT_SECONDS
        """The longest any toast stays, in seconds."""
        self.context = DeckContext(
            workspace=workspace,
            counter=self.counter,
            agent=self.agent,
            encoding=self.encoding,
            workspace_label=self.workspace_label,
            stable=stable,
            use_git=use_git,
            board=self,
        )
        """What the screens work with: handed to each one made."""

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's pass over the styles, except before the first screen exists.

        The theme chosen in ``__init__`` queues a pass that runs before any widget is styled.
        Textual's pass parses every stylesheet with the theme's variables and then drops what
        it parsed: the first widget that adds its own CSS makes the stylesheet parse all of
        it again (some 10 ms of the first frame). Before the first screen, nothing has been
        parsed or styled yet, so the stylesheet only needs the theme's variables: it is parsed
        once, with them, when the first widget is styled.
        """
        if not self.screen_stack:
            self.stylesheet.set_variables(self.get_css_variables())
            install(self.stylesheet, getattr(self, "_styles", None))
            return
        super().refresh_css(animate)

    def add_notices(
        self,
        source: str,
        messages: Sequence[str | KindedNote],
        severity: str = "warning",
    ) -> None:
        """Keep ``messages`` (plain lines or kinded notes) and show one line for those not
        read before in this project, pointing at ``w``."""
        fresh = as_notices(source, messages, severity)
        if not fresh:
            return
        self.notices.extend(fresh)
        news = [n for n in fresh if n.severity == "error" or not self.acknowledged.is_read(n.text)]
        if not news:
            return
        what = news[0].text if len(news) == 1 else f"{len(news)} new notes"
        self.notify(
            f"{source}: {what} · w to read",
            severity="error" if severity == "error" else "warning",
            markup=False,
        )

    def acknowledge_notices(self) -> None:
        """The user has read the notices: their warnings stay quiet in this project until
        they change (errors are news every time). Written off the UI thread."""
        texts = [n.text for n in self.notices if n.severity != "error"]
        self.acknowledged = AcknowledgedNotes(
            (*self.acknowledged.digests, *AcknowledgedNotes.of(texts).digests)
        )
        root = self.workspace.root

        def remember() -> None:
            problem = acknowledge(root, texts)
            if problem:
                self.call_from_thread(self.notify, problem, severity="warning")

        self.run_worker(remember, thread=True, group="acknowledge", exit_on_error=False)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast whose text is shown as it is: never parsed as markup (a warning may quote a
        status such as ``[/x]`` from the workspace), control characters made visible."""
        limit = self.toast_limit
        super().notify(
            printable(message),
            title=printable_line(title),
            severity=severity,
            timeout=limit if timeout is None else min(timeout, limit),
            markup=False,
        )

    async def action_quit(self) -> None:
        """``ctrl+q`` quits like ``q``: while a phase runs, ask first and cancel it cleanly,
        so no agent is left running after the app has gone."""
        main = next((s for s in self.screen_stack if isinstance(s, MainScreen)), None)
        if main is None:
            self.exit()
            return
        main.action_quit()

    def on_mount(self) -> None:
        """Say what the settings could not apply, open the main screen."""
        self.acknowledged = load_acknowledged(self.workspace.root)
        loaded = self._settings
        remembered = loaded.settings.theme
        if loaded.notice:
            self.add_notices("settings", [loaded.notice])
        elif remembered and remembered not in self.available_themes:
            self.notify(
                f"theme {remembered!r} is not known; using {DEFAULT_THEME}", severity="warning"
            )
        self._apply_keymap(loaded.settings.keymap)
        self.context = replace(self.context, open_phase=loaded.settings.open_phase)
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        if self._warm_encoder:
            # Not at start: the first counts usually come from the persistent cache, and a
            # count that is not known builds the encoder itself. Building it later, off the
            # first paint's path, keeps a later toggle of unseen text quick.
            self.set_timer(WARM_AFTER_SECONDS, self._warm_later)
        self.set_timer(INTERRUPTED_AFTER_SECONDS, self._say_interrupted_runs)
        opening, self._opening = self._opening, None
        if opening is not None:  # a launch (tests make their apps without a helper)
            self.set_timer(REMEMBER_AFTER_SECONDS, self._remember_for_next_start)
        # Pushed once the app's start is over: Textual draws nothing while it starts (it
        # batches), so a screen pushed here would lay itself out and render a frame that is
        # thrown away, then render it again.
        self.call_later(self.push_screen, MainScreen(self.context, opening))

    def _say_interrupted_runs(self) -> None:
        root = self.workspace.root

        def look() -> None:
            # Run records and the fleet room: read off the UI thread, after the first frame.
            line = interrupted_line(root)
            if line:
                self.call_from_thread(self.add_notices, "interrupted runs", [line])

        self.run_worker(look, thread=True, group="interrupted", exit_on_error=False)

    def _remember_for_next_start(self) -> None:
        """Remember, off the UI thread, what this start had to work out:

        * what Textual parsed, if the memory lacked any of it and the theme is still the one
          the app started with (the next start asks for that one);
        * the methods compiled for the classes it made
          (:mod:`promptdeck.core.tokens.generated_code`; the exit remembers those made later).
        """
        memory = to_remember(self.stylesheet, self._styles)
        if memory is not None and self.theme != self._started_theme:
            memory = None
        theme = self._settings.settings.theme  # what the next start's helper asks for

        def remember_all() -> None:
            if memory is not None:
                remember(memory, theme)
            save_code_memory()

        self.run_worker(remember_all, thread=True, group="remember-next-start", exit_on_error=False)

    def _warm_later(self) -> None:
        counter = self.counter

        def warm() -> None:
            # The compose machinery too: a first prompt composed by the opening helper left it
            # unloaded, and the first change would wait for it.
            from promptdeck.core.prompt import compose_prompt  # noqa: F401 (loads it)

            if not counter.ready:
                counter.warm()

        self.run_worker(
            warm,
            thread=True,
            group="encoder",
            description="Loading the composer and building the token encoder",
            exit_on_error=False,
        )

    def _apply_keymap(self, keymap: dict[str, str]) -> None:
        """The user's ``[keymap]``: known binding ids are rebound; unknown ones are named."""
        if not keymap:
            return
        known = known_binding_ids() | binding_ids(PromptdeckApp)
        unknown = sorted(set(keymap) - known)
        if unknown:
            self.notify(
                f"[keymap]: unknown binding ids {', '.join(unknown)} (docs/app.md#your-own-keys)",
                severity="warning",
                timeout=10,
                markup=False,
            )
        self.set_keymap({key: value for key, value in keymap.items() if key in known})

    def _remember_theme(self, theme: Theme) -> None:
        loaded = self._settings
        if loaded.settings.theme == theme.name:
            return
        if not loaded.writable:
            return
        remembered = replace(loaded.settings, theme=theme.name)
        problem = save_settings(remembered, loaded.path)
        if problem:
            self.notify(problem, severity="warning")
            return
        self._settings = LoadedSettings(remembered, loaded.path)


def known_binding_ids() -> set[str]:
    """Every binding id of the screens a ``[keymap]`` may rebind: the main screen's and the
    dialogs' (the app adds its own)."""
    # The dialogs are imported here, when a keymap is checked, not with the main screen's keys:
    # the first frame shows none of them.
    from .screens.confirm_run import ConfirmRunScreen
    from .screens.help import HelpScreen
    from .screens.notices import NoticesScreen
    from .screens.quit_confirm import QuitConfirmScreen
    from .screens.text_view import TextViewScreen

    return ids_of(MAIN_BINDINGS) | binding_ids(
        ConfirmRunScreen,
        HelpScreen,
        NoticesScreen,
        QuitConfirmScreen,
        TextViewScreen,
    )
