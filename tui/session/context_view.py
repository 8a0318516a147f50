"""The context-window view of the Composition tab, decided apart from any screen, like Claude
Code's ``/context``: the prompt, the client's own overhead, what is free before the client
compacts the conversation, and what the client keeps back (its output reserve and auto-compact
buffer).

A capture of the session's client kept in the user's cache folder replaces two estimates: its
overhead (the client's system text, tools and the rules files it loaded) and its window (the
one the client reported). :func:`kept_overhead` says which capture that is (client, version,
and outside a stable session when) and what it left out (MCP servers not started, rules files
not loaded at the start); :func:`window_use` places a prompt in that window; the fit (``f``)
takes the same window (:func:`captured_window`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptdeck.core.lean_dataclass import dataclass

if TYPE_CHECKING:
    from promptdeck.core.capture import Capture
    from promptdeck.core.project import Config
    from promptdeck.core.tokens import ContextUse


@dataclass(frozen=True)
class KeptOverhead:
    """The session client's overhead and window as its kept capture measured them.

    Attributes:
        client: the client captured.
        tokens: the client's overhead in tokens (its system text, tools, context, the rules
            files it loaded, the envelope).
        window: the context window the capture reported.
        origin: which capture (``claude 2.1.197, captured 2026-11-29 04:12 UTC``).
        held: what the overhead holds, by kind (``client 14,210 · rules 312``).
        left_out: what the capture left out that a run would load, one line each.
    """

    client: str
    tokens: int
    window: int
    origin: str
    held: str
    left_out: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """What the view says of the measure: where it comes from, then what it left out."""
        said = f"measured, {self.origin}" if self.origin else "measured"
        first = f"{said}: {self.held}" if self.held else said
        return [first, *(f"left out of that capture: {note}" for note in self.left_out)]


def kept_overhead(capture: Capture, origin: str) -> KeptOverhead:
    """The figures of ``capture`` the context view shows; ``origin`` says which capture it is
    (:func:`~.views.capture_origin`)."""
    from promptdeck.core.capture import capture_summary

    summary = capture_summary(capture)
    held = " · ".join(
        f"{total.kind} {total.tokens:,}"
        for total in summary.kinds
        if total.kind in ("client", "rules") and total.tokens
    )
    return KeptOverhead(
        client=capture.client,
        tokens=summary.overhead_tokens,
        window=capture.window,
        origin=origin,
        held=held,
        left_out=tuple(capture.notes),
    )


def captured_window(kept: KeptOverhead | None, agent: str) -> int | None:
    """The window ``agent``'s kept capture reported; None (the configured one) when there is
    no capture of that client."""
    return kept.window if kept is not None and kept.client == agent and kept.window else None


def window_use(
    prompt_tokens: int, config: Config, agent: str, kept: KeptOverhead | None
) -> ContextUse:
    """Where a prompt of ``prompt_tokens`` stands in ``agent``'s window: the kept capture's
    overhead and window when it is of that client, else the estimate and the configured
    window."""
    from promptdeck.core.tokens import context_use

    mine = kept if kept is not None and kept.client == agent else None
    return context_use(
        prompt_tokens,
        config,
        agent,
        client_overhead=mine.tokens if mine else None,
        captured_window=captured_window(mine, agent),
    )


def kept_back_line(use: ContextUse, *, from_capture: bool) -> str:
    """What the client keeps back of the window, and where the window's size comes from
    (``""`` for an agent that keeps none back)."""
    held = use.kept_back
    if held is None:
        return ""
    window = "the kept capture" if from_capture else "the workspace's setting"
    back = held.output_reserve + held.autocompact_buffer
    return (
        f"kept back {back:,}: output reserve {held.output_reserve:,} · auto-compact buffer "
        f"{held.autocompact_buffer:,}; free is what is left before the client compacts "
        f"({held.reserve_source}); window from {window}"
    )


def context_notes(use: ContextUse, kept: KeptOverhead | None, agent: str) -> tuple[str, ...]:
    """The lines under the view's figures: which capture measured the overhead and what it
    left out (``▒``), then what the client keeps back of the window (``▓``)."""
    mine = kept if kept is not None and kept.client == agent and use.overhead_measured else None
    measured = [f"▒ {line}" for line in mine.lines()] if mine else []
    back = kept_back_line(use, from_capture=captured_window(mine, agent) is not None)
    return (*measured, *([f"▓ {back}"] if back else []))
