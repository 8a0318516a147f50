"""The parts of a captured request: one row each, with its kind, bytes, tokens and share of
the model's context window as a bar, and the text it repeats of another part."""

from __future__ import annotations

from promptdeck.core.lean_dataclass import dataclass
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ...core.terminal import printable_line
from ...core.units import human_bytes, human_tokens
from ..format import share_bar

NAME_CELLS = 26
KIND_CELLS = 11
BYTES_CELLS = 10
TOKENS_CELLS = 7
SHARE_CELLS = 6
MIN_BAR_CELLS = 6
MAX_BAR_CELLS = 20


@dataclass(frozen=True)
class PartRow:
    """One row of the table, as the screen hands it down.

    Attributes:
        name: the part's name (``client system``, ``CLAUDE.md``, ``Layer-0B Workspace
            rules`` …).
        kind: ``client``, ``rules``, ``promptdeck``, ``user`` or ``envelope``.
        bytes: its bytes in the request body.
        tokens: its tokens (None for the JSON envelope, which is not text the model reads).
        flags: what to know about it: the text it repeats of another part, in words
            (``repeats CLAUDE.md (868 B)``), a cut the client made.
    """

    name: str
    kind: str
    bytes: int
    tokens: int | None
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class PartsTable:
    """Everything the table shows: the rows, the window they are shares of, the sum."""

    rows: tuple[PartRow, ...]
    window: int
    request_bytes: int


class CaptureParts(Widget):
    """The captured request, part by part; nothing until :attr:`table` is set."""

    DEFAULT_CSS = """
    CaptureParts {
        height: auto;
        padding: 0 1;
        background: $surface;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    table: reactive[PartsTable | None] = reactive(None, layout=True)

    def render(self) -> Text:
        """A header, one line per part, the sum; flags follow the bar and may be cut."""
        table = self.table
        if table is None:
            return Text("")
        width = max(self.size.width - 2, 40)
        fixed = NAME_CELLS + KIND_CELLS + BYTES_CELLS + TOKENS_CELLS + SHARE_CELLS + 4
        bar_cells = max(MIN_BAR_CELLS, min(MAX_BAR_CELLS, (width - fixed) // 3))
        text = Text(no_wrap=True, overflow="ellipsis")
        header = (
            f"{'part':<{NAME_CELLS}}{'kind':<{KIND_CELLS}}{'bytes':>{BYTES_CELLS}}"
            f"{'tokens':>{TOKENS_CELLS}} "
            f"{'window':<{bar_cells}}{'share':>{SHARE_CELLS}}  notes"
        )
        text.append(header + "\n", style="bold")
        for row in table.rows:
            tokens = human_tokens(row.tokens) if row.tokens is not None else "—"
            share = (row.tokens or 0) / table.window if table.window else 0.0
            name = printable_line(row.name)
            if len(name) > NAME_CELLS - 1:
                name = name[: NAME_CELLS - 2] + "…"
            text.append(f"{name:<{NAME_CELLS}}")
            text.append(f"{row.kind:<{KIND_CELLS}}", style="dim")
            text.append(f"{human_bytes(row.bytes):>{BYTES_CELLS}}{tokens:>{TOKENS_CELLS}} ")
            text.append(share_bar(row.tokens or 0, table.window, bar_cells), style="bold")
            text.append(f"{share:>{SHARE_CELLS}.1%}", style="dim")
            if row.flags:
                text.append("  ⚠ " + "; ".join(printable_line(f) for f in row.flags), "bold")
            text.append("\n")
        total = sum(row.bytes for row in table.rows)
        counted = sum(row.tokens or 0 for row in table.rows)
        share = counted / table.window if table.window else 0.0
        text.append(
            f"{'sum':<{NAME_CELLS + KIND_CELLS}}{human_bytes(total):>{BYTES_CELLS}}"
            f"{human_tokens(counted):>{TOKENS_CELLS}} "
            f"{share_bar(counted, table.window, bar_cells)}{share:>{SHARE_CELLS}.1%}",
            style="bold",
        )
        if total != table.request_bytes:
            text.append(f"  the request is {table.request_bytes:,} bytes", style="dim")
        return text
