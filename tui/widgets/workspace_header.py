"""The header: which workspace, encoding and agent, and which instructions and rules."""

from __future__ import annotations

from typing import ClassVar

from promptdeck.core.agent_names import agent_label
from promptdeck.core.layers import find_rules_path, rules_health
from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.prompt import ComposedPrompt
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ...core.terminal import printable_line
from ..context import DeckContext
from ..format import short_hash

COMPACT_BELOW = 110
"""Below this width the header drops the app name and shortens its labels."""


@dataclass(frozen=True)
class HeaderInfo:
    """What the header shows.

    Attributes:
        workspace: the workspace's folder name (never its full path: it may be temporary).
        encoding: the tokenizer of the token meters.
        agent: the backend phases run with.
        instructions_sha256: hash of the instructions in force (Layer-0A).
        rules_path: the workspace rules file, root-relative.
        rules_sha256: its hash, None when the file could not be read.
        rules_status: ``ok``, or why the rules are not in the prompt (``missing`` …).
        rules_alert: the rules could not be read for several injections in a row (an error).
    """

    workspace: str
    encoding: str
    agent: str
    instructions_sha256: str | None = None
    rules_path: str = ""
    rules_sha256: str | None = None
    rules_status: str = "ok"
    rules_alert: bool = False


def header_info(deck: DeckContext, prompt: ComposedPrompt | None = None) -> HeaderInfo:
    """What the header shows for the session, and for ``prompt`` once one is composed.

    The instructions and rules are read fresh at every compose: with a prompt, the header shows
    the ones in force for it. Before the first, it says only whether the rules file is there.
    """
    if prompt is None:
        rules_path = find_rules_path(deck.workspace)[0]
        return HeaderInfo(
            workspace=deck.workspace_label,
            encoding=deck.encoding,
            agent=agent_label(deck.agent),
            rules_path=rules_path,
            rules_status="found" if deck.workspace.path(rules_path).is_file() else "missing",
        )
    rules = prompt.rules
    instructions = prompt.instructions
    return HeaderInfo(
        workspace=deck.workspace_label,
        encoding=deck.encoding,
        agent=agent_label(deck.agent),
        instructions_sha256=instructions.sha256 if instructions else None,
        rules_path=rules.path if rules else find_rules_path(deck.workspace)[0],
        rules_sha256=rules.sha256 if rules else None,
        rules_status=rules.status if rules else "missing",
        rules_alert=rules_health(deck.workspace).alert,
    )


class WorkspaceHeader(Widget):
    """One line across the top of the main screen."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "workspace-header--title",
        "workspace-header--missing",
        "workspace-header--alert",
    }

    DEFAULT_CSS = """
    WorkspaceHeader {
        height: 1;
        background: $primary;
        color: $text;
        padding: 0 1;
        & > .workspace-header--title { text-style: bold; }
        & > .workspace-header--missing { color: $warning; text-style: bold; }
        & > .workspace-header--alert { color: $text; background: $error; text-style: bold; }
    }
    """

    info: reactive[HeaderInfo | None] = reactive(None)

    def render(self) -> Text:
        """``promptdeck · demo · o200k_base · agent replay · instructions 1a2b3c4d · rules …``."""
        info = self.info
        title = self.get_component_rich_style("workspace-header--title")
        if info is None:
            return Text("promptdeck", style=title)
        rules: Text | str
        if info.rules_status == "found" and info.rules_sha256 is None:
            # Present, not yet read into a prompt: no hash to show yet.
            rules = "rules found"
        elif info.rules_status != "ok" or info.rules_sha256 is None:
            missing = self.get_component_rich_style("workspace-header--missing")
            shown = printable_line(info.rules_path)
            rules = Text(f"rules {info.rules_status} ({shown})", style=missing)
        else:
            rules = f"rules {short_hash(info.rules_sha256)}"
        alert = (
            Text(
                " ✖ check the workspace ",
                style=self.get_component_rich_style("workspace-header--alert"),
            )
            if info.rules_alert
            else ""
        )
        if self.size.width < COMPACT_BELOW:
            if isinstance(rules, Text):
                rules = Text(f"rules {info.rules_status}", style=rules.style)
            return Text.assemble(
                (printable_line(info.workspace), title),
                f" · {info.encoding} · {info.agent}",
                f" · instr {short_hash(info.instructions_sha256)} · ",
                rules,
                " " if alert else "",
                alert,
            )
        return Text.assemble(
            ("promptdeck", title),
            " · ",
            (printable_line(info.workspace), title),
            f" · {info.encoding} · agent {info.agent}",
            f" · instructions {short_hash(info.instructions_sha256)} · ",
            rules,
            " " if alert else "",
            alert,
        )
