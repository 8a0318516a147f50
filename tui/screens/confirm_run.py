"""Asked before a phase runs: what will be launched, with what, and how large.

A story whose injection is over the error line cannot be run from here: the screen says why
and what would bring it under, and Enter does nothing. When the secret scan flagged files of the
injection, the screen lists them (file, line, kind — never the secret) and the run needs a
second, explicit Enter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Static

from ..format import human_bytes, human_tokens, printable, printable_line, wrap_argv
from ..size_advice import SizeOption


@dataclass(frozen=True)
class RunPlan:
    """Everything the confirmation shows; all of it from core.

    Attributes:
        story_id: the story.
        phase: the phase to run.
        mode: create or optimize.
        agent: the backend.
        argv: the exact argv the run will launch (empty when it cannot start).
        system_bytes: bytes of the system prompt.
        system_tokens: its tokens, None when not counted yet.
        user_bytes: bytes of the user message.
        injection_bytes: the injection size the thresholds compare.
        level: ``ok``, ``warning`` or ``error``.
        error_bytes: the error line.
        largest: the largest injected files (path, bytes).
        options: what would bring an oversized injection under the line.
        notes: anything else worth saying (dirty files, a missing binary…).
        variant: ``standard`` or ``party``.
        budget: the phase's token budget against the prompt, or "" when none is set.
        over_budget: why the prompt is refused for its budget, or "" when within it.
        secrets: the secret scan's findings, ``path:line: kind`` (never the secret itself).
        images: the images sent with the user message, described (``--image``).
        attempt: the attempt number the run is recorded as.
        run_folder: the run's folder, relative to the workspace.
    """

    story_id: str
    phase: str
    mode: str
    agent: str
    argv: tuple[str, ...]
    system_bytes: int
    system_tokens: int | None
    user_bytes: int
    injection_bytes: int
    level: str
    error_bytes: int
    largest: tuple[tuple[str, int], ...] = ()
    options: tuple[SizeOption, ...] = ()
    notes: tuple[str, ...] = ()
    variant: str = "standard"
    budget: str = ""
    over_budget: str = ""
    secrets: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    attempt: int = 1
    run_folder: str = ""

    @property
    def blocked(self) -> bool:
        """True when the run must not start (over the error line or the token budget)."""
        return self.level == "error" or bool(self.over_budget)


def refusal_lines(plan: RunPlan) -> list[str]:
    """Why an oversized story cannot run, and what would bring it under."""
    if plan.level != "error":
        return [
            f"Cannot run: {plan.over_budget}.",
            "Leave files out of the injection, or raise the budget in .promptdeck/config.toml.",
        ]
    over = plan.injection_bytes - plan.error_bytes
    lines = [
        f"Cannot run: the injection is {human_bytes(plan.injection_bytes)} "
        f"({plan.injection_bytes:,} bytes), {human_bytes(over)} over the "
        f"{human_bytes(plan.error_bytes)} error line.",
    ]
    if plan.largest:
        top = ", ".join(
            f"{printable_line(path)} ({human_bytes(size)})" for path, size in plan.largest
        )
        lines.append(f"Largest files: {top}.")
    fitting = [option for option in plan.options if option.fits]
    if plan.options:
        lines.append("What would bring it under:" if fitting else "Each option alone:")
        lines.extend(f"  • {option.describe()}" for option in plan.options)
    if not fitting:
        lines.append(
            "  • no single inclusion brings it under: the story's own files are too large; "
            "trim them, or raise [injection] error_bytes in .promptdeck/config.toml"
        )
    return lines


class ArgvView(Widget):
    """The argv, one option a line, wrapped to the width without splitting a word."""

    DEFAULT_CSS = """
    ArgvView {
        height: auto;
        color: $text-muted;
    }
    """

    def __init__(self, argv: Sequence[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.argv = tuple(argv)

    def render(self) -> Text:
        """The wrapped lines (a text, never markup: arguments are the user's)."""
        if not self.argv:
            return Text("(this run cannot start)")
        return Text(printable("\n".join(wrap_argv(self.argv, max(self.size.width, 20)))))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """As many lines as the wrapped argv takes at ``width``."""
        return max(len(wrap_argv(self.argv, max(width, 20))), 1) if self.argv else 1


class ConfirmRunScreen(ModalScreen[bool]):
    """Enter starts the run (True); Escape goes back (False)."""

    DEFAULT_CSS = """
    ConfirmRunScreen {
        align: center middle;
    }
    ConfirmRunScreen > Vertical {
        width: 100;
        max-width: 96%;
        height: auto;
        max-height: 96%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    ConfirmRunScreen.-blocked > Vertical {
        border: thick $error;
    }
    ConfirmRunScreen #confirm-body {
        height: auto;
    }
    ConfirmRunScreen #confirm-refusal {
        color: $error;
        margin-top: 1;
    }
    ConfirmRunScreen #confirm-argv-title {
        margin-top: 1;
        color: $text-muted;
        text-style: bold;
    }
    ConfirmRunScreen #confirm-notes {
        color: $warning;
    }
    ConfirmRunScreen #confirm-secrets {
        color: $error;
        text-style: bold;
        margin-top: 1;
    }
    ConfirmRunScreen #confirm-buttons {
        height: 1;
        align-horizontal: right;
        margin-top: 1;
    }
    ConfirmRunScreen Button {
        margin-left: 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "start", "Start", id="confirm.start", tooltip="Start the run"),
        Binding("escape", "back", "Back", id="confirm.back", tooltip="Do not run"),
    ]

    def __init__(self, plan: RunPlan) -> None:
        super().__init__()
        self.plan = plan
        self.secrets_confirmed = False
        """True once the user pressed Start a second time to send flagged secrets."""

    def compose(self) -> ComposeResult:
        """Title and sizes on top, buttons at the bottom, the argv scrolling between them."""
        plan = self.plan
        title = Text.assemble(
            ("Run ", "bold"),
            (plan.phase, "bold"),
            " for story ",
            (printable_line(plan.story_id), "bold"),
            f" ({plan.mode}",
            (", party variant" if plan.variant == "party" else ""),
            f", attempt {plan.attempt}) with the ",
            (printable_line(plan.agent), "bold"),
            " agent",
        )
        with Vertical():
            yield Static(title, id="confirm-title")
            yield Static(
                f"system {human_bytes(plan.system_bytes)} · "
                f"{human_tokens(plan.system_tokens)} tok · user "
                f"{human_bytes(plan.user_bytes)} · injection "
                f"{human_bytes(plan.injection_bytes)} ({plan.level})",
                id="confirm-sizes",
                markup=False,
            )
            with VerticalScroll(id="confirm-body"):
                if plan.budget:
                    yield Static(printable_line(plan.budget), id="confirm-budget", markup=False)
                if plan.images:
                    shown = "\n".join(f"  {image}" for image in plan.images)
                    yield Static(f"images:\n{shown}", id="confirm-images", markup=False)
                if plan.notes:
                    notes = "\n".join(printable_line(note) for note in plan.notes)
                    yield Static(notes, id="confirm-notes", markup=False)
                if plan.secrets and not plan.blocked:
                    lines = [f"⚠ The secret scan flagged {len(plan.secrets)} likely secret(s):"]
                    lines.extend(f"  • {printable_line(finding)}" for finding in plan.secrets)
                    lines.append(
                        "They would be sent to the agent. Start twice to send them anyway."
                    )
                    yield Static("\n".join(lines), id="confirm-secrets", markup=False)
                if plan.blocked:
                    yield Static("\n".join(refusal_lines(plan)), id="confirm-refusal", markup=False)
                else:
                    where = f" (run folder {plan.run_folder})" if plan.run_folder else ""
                    yield Static(
                        f"The command that will run{where}:", id="confirm-argv-title", markup=False
                    )
                    yield ArgvView(plan.argv, id="confirm-argv")
            with Horizontal(id="confirm-buttons"):
                yield Button("Back  Esc", id="back", compact=True)
                if not plan.blocked and plan.secrets:
                    yield Button(
                        "Start with secrets…  Enter", id="start", variant="error", compact=True
                    )
                elif not plan.blocked:
                    yield Button("Start  Enter", id="start", variant="success", compact=True)

    def on_resize(self) -> None:
        """The argv scrolls between the fixed title and buttons, so both always show."""
        # Screen rows less: the box's margin and border (4), title and sizes (2), the buttons
        # with their margin (2).
        self.query_one("#confirm-body").styles.max_height = max(self.size.height - 8, 3)

    def on_mount(self) -> None:
        """Mark a blocked plan; focus the right button."""
        self.on_resize()
        self.set_class(self.plan.blocked, "-blocked")
        self.query_one("#start" if not self.plan.blocked else "#back", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Buttons answer like the keys."""
        event.stop()
        if event.button.id == "start":
            self.action_start()
        else:
            self.action_back()

    def action_start(self) -> None:
        """Start, unless the plan is blocked."""
        if self.plan.blocked:
            why = "over its token budget" if self.plan.over_budget else "over the error line"
            self.notify(f"{why}: this story cannot run as it is", severity="error")
            return
        if self.plan.secrets and not self.secrets_confirmed:
            # The second, explicit confirmation: one Enter never sends a flagged secret.
            self.secrets_confirmed = True
            self.query_one("#start", Button).label = "Yes, send the secrets (Enter)"
            self.notify(
                "the injection holds likely secrets: press Start again to send them",
                severity="warning",
            )
            return
        self.dismiss(True)

    def action_back(self) -> None:
        """Do not run."""
        self.dismiss(False)
