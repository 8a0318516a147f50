"""The preview's compose logic, apart from any screen: when to wait (debounce), what to
compare against (the delta base), and the two compose passes (bytes first, then tokens).

It holds no widget and imports no Textual, so it is tested on its own; the main screen calls
it and hands what it composes to the preview pane.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from promptdeck.core.project import Workspace
from promptdeck.core.prompt import ComposedPrompt, PromptRequest, compose_prompt
from promptdeck.core.stories import StoryCatalog
from promptdeck.core.tokens import TokenCounter

from ..format import delta_text

COUNTED_GRACE_SECONDS = 0.1
"""How long the byte-only pass, done first, waits for the counted one before it is painted:
with counts and scans remembered the counted pass lands within it, so the first frame of a
prompt already has its token meters instead of ``…`` followed by a second paint."""

DEBOUNCE_SECONDS = 0.1
"""A change that follows another within this window waits this long before composing, so a
burst of key presses composes once; an isolated change composes at once."""


def _fully_read(prompt: ComposedPrompt) -> bool:
    """Every byte the injection's size counts is in the prompt (no file was too large)."""
    return prompt.injection.size_bytes <= prompt.injection.total.bytes


class PreviewComposer:
    """Debounce, delta tracking and the two-pass compose of the preview.

    Args:
        debounce: the burst window, in seconds (also the wait of a change inside a burst).
        clock: a monotonic clock in seconds (the real one unless a test steps its own).
    """

    def __init__(
        self,
        debounce: float = DEBOUNCE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.debounce = debounce
        self._clock = clock
        self._last_request_at: float | None = None
        self._delta_base: ComposedPrompt | None = None

    @property
    def delta_base(self) -> ComposedPrompt | None:
        """The prompt the next shown one is compared with, if any."""
        return self._delta_base

    def forget_delta(self) -> None:
        """No delta across this change (a new story, or the flow moving on after a run)."""
        self._delta_base = None

    def request(self, shown: ComposedPrompt | None, *, story_changed: bool = False) -> float:
        """Note a change and return how long its compose should wait (0 for an isolated one).

        The first change after a settled preview keeps the prompt ``shown`` as the delta base,
        so every pass until the counted one shows the difference from what was on screen.
        """
        now = self._clock()
        last = self._last_request_at
        burst = last is not None and now - last < self.debounce
        self._last_request_at = now
        if story_changed:
            self._delta_base = None
        elif shown is not None and self._delta_base is None:
            self._delta_base = shown
        return self.debounce if burst else 0.0

    def delta(self, prompt: ComposedPrompt, *, counted: bool) -> str:
        """The change from the delta base to ``prompt``, as shown (``""`` when none applies).

        A counted ``prompt`` settles the change: the base is dropped after it.
        """
        base = self._delta_base
        text = ""
        if base is not None and base.story.id == prompt.story.id:
            token_delta = None
            now, before = prompt.system_meter.tokens, base.system_meter.tokens
            # A file too large to read is in the byte figure but not in the count: no token
            # change can be given across it (it would be the change of the files read only).
            if (
                counted
                and base.counted
                and now is not None
                and before is not None
                and _fully_read(prompt)
                and _fully_read(base)
            ):
                token_delta = now - before
            text = delta_text(prompt.system_meter.bytes - base.system_meter.bytes, token_delta)
        if counted:
            self._delta_base = None
        return text

    async def show(
        self,
        workspace: Workspace,
        catalog: StoryCatalog,
        request: PromptRequest,
        counter: TokenCounter,
        delay: float,
        on_pass: Callable[[ComposedPrompt, bool, str], None],
    ) -> None:
        """Wait ``delay``, then compose ``request`` and hand each pass shown to ``on_pass``
        with whether it is counted and its delta (the counted pass settles the delta).

        Cancelled while it waits, it composes nothing: that is the debounce. A
        :class:`~promptdeck.core.errors.PromptdeckError` of either pass propagates.
        """
        if delay:
            await asyncio.sleep(delay)

        def quick(prompt: ComposedPrompt) -> None:
            on_pass(prompt, False, self.delta(prompt, counted=False))

        final = await self.compose(workspace, catalog, request, counter, quick)
        on_pass(final, True, self.delta(final, counted=True))

    @staticmethod
    async def compose(
        workspace: Workspace,
        catalog: StoryCatalog,
        request: PromptRequest,
        counter: TokenCounter,
        on_quick: Callable[[ComposedPrompt], None],
    ) -> ComposedPrompt:
        """Compose ``request`` twice at once and return the counted prompt.

        The byte-only pass is handed to ``on_quick`` if it finishes before the counted one and
        the counted one is not done within :data:`COUNTED_GRACE_SECONDS` after it (tiktoken
        releases the GIL while it encodes, so both run together). A
        :class:`~promptdeck.core.errors.PromptdeckError` of either pass propagates.
        """
        quick = asyncio.ensure_future(
            asyncio.to_thread(
                compose_prompt,
                workspace,
                catalog,
                request,
                counter=counter,
                count_tokens=False,
                scan_secrets=False,
            )
        )
        counted = asyncio.ensure_future(
            asyncio.to_thread(
                compose_prompt, workspace, catalog, request, counter=counter, count_tokens=True
            )
        )
        try:
            done, _pending = await asyncio.wait(
                (quick, counted), return_when=asyncio.FIRST_COMPLETED
            )
            if counted not in done:
                await asyncio.wait((counted,), timeout=COUNTED_GRACE_SECONDS)
            if not counted.done():
                on_quick(quick.result())
            return await counted
        finally:
            for future in (quick, counted):
                if not future.done():
                    future.cancel()
            # A failed pass that nobody awaited must not be reported as never retrieved.
            if quick.done() and not quick.cancelled():
                quick.exception()
