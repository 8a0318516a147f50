"""Asked before a phase runs: what will be launched, with what, and how large.

A story whose injection is over the error line cannot be run from here: the screen says why
and what would bring it under, and Enter does nothing. When the secret scan flagged files of the
injection, the screen lists them (file, line, kind — never the secret) and the run needs a
second, explicit Enter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Static

from ...core.terminal import printable
from ..format import wrap_argv

if TYPE_CHECKING:
    from promptdeck.core.run import RunPlan

# The plan and its wording live in core (``promptdeck run --dry-run`` prints the same blocks);
# they are imported when a plan is shown, so the app's first paint does not pay for the run
# machinery.
__all__ = ["ArgvView", "ConfirmRunScreen"]

_BODY_IDS = {
    "why": "confirm-why",
    "cost": "confirm-cost",
    "budget": "confirm-budget",
    "images": "confirm-images",
    "choices": "confirm-choices",
    "notes": "confirm-notes",
    "trust": "confirm-trust",
    "secrets": "confirm-secrets",
    "scope": "confirm-scope",
    "refusal": "confirm-refusal",
    "command": "confirm-argv-title",
}
"""The id (and so the style) of each block shown as text in the scrolling body."""


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
    ConfirmRunScreen #confirm-trust, ConfirmRunScreen #confirm-secrets {
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
        self.trust_confirmed = False
        """True once the user pressed Start a second time to trust the project's config; the
        caller records the trust before the run starts."""

    def compose(self) -> ComposeResult:
        """Title and sizes on top, buttons at the bottom, the argv scrolling between them.

        Every line is core's (:func:`confirmation_blocks`); the screen only places them.
        """
        from promptdeck.core.run import confirmation_blocks

        plan = self.plan
        title, sizes, *body = confirmation_blocks(plan)
        with Vertical():
            yield Static(
                Text.assemble(*((text, "bold") if bold else text for text, bold in title.strong)),
                id="confirm-title",
            )
            yield Static(sizes.text, id="confirm-sizes", markup=False)
            with VerticalScroll(id="confirm-body"):
                for block in body:
                    if block.kind == "argv":
                        yield ArgvView(plan.argv, id="confirm-argv")
                    else:
                        yield Static(block.text, id=_BODY_IDS[block.kind], markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button("Back  Esc", id="back", compact=True)
                if not plan.blocked and plan.untrusted:
                    yield Button(
                        "Trust the config…  Enter", id="start", variant="error", compact=True
                    )
                elif not plan.blocked and plan.secrets:
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
        if self.plan.untrusted and not self.trust_confirmed:
            # One Enter never runs a program the repository chose.
            self.trust_confirmed = True
            start = self.query_one("#start", Button)
            if self.plan.secrets:
                start.label = "Yes, trust it; then the secrets… (Enter)"
            else:
                start.label = "Yes, trust this config and start (Enter)"
            self.notify(
                "the project's config chooses what this run starts: press Start again to trust "
                "this version of it",
                severity="warning",
            )
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
