"""The preview's compose logic, apart from any screen: when to wait (debounce), what to
compare against (the delta base), and the compose: one counted pass, with a byte-only pass
beside it only when counting is slow (the encoder still to be built).

It holds no widget and imports no Textual, so it is tested on its own; the main screen calls
it and hands what it composes to the preview pane.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

from promptdeck.core.project import Workspace
from promptdeck.core.prompt import ComposedPrompt, PromptRequest
from promptdeck.core.stories import StoryCatalog
from promptdeck.core.tokens import TokenCounter

from ..format import delta_text

COUNTED_GRACE_SECONDS = 0.25
"""How long the counted pass has before a byte-only pass is started beside it. With counts
remembered (in memory or in the user's cache) or the encoder built, a counted pass lands well
within it, so a change is composed once and painted once, with its token meters; only a count
that has to wait for the encoder to be built shows the byte meters first."""

FIRST_GRACE_SECONDS = 1.0
"""The same, for the first prompt of the session: its first frame has its token meters whenever
the counts are remembered, even on a busy machine where the cold first compose is slow."""

DEBOUNCE_SECONDS = 0.1
"""A change that follows another within this window waits this long before composing, so a
burst of key presses composes once; an isolated change composes at once."""


class PreviewComposer:
    """Debounce, delta tracking and the compose of the preview (counted, bytes first only when
    counting is slow).

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
        self._composed = False
        self._prepared: tuple[PromptRequest, Future[ComposedPrompt]] | None = None

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
            # Both figures are the composed prompt's (a file too large to read is in neither),
            # so the token change goes with the byte change.
            if counted and base.counted and now is not None and before is not None:
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
        # Taken now: a show cancelled while it waits drops it, so it is never used late.
        prepared, self._prepared = self._prepared, None
        if delay:
            await asyncio.sleep(delay)

        def quick(prompt: ComposedPrompt) -> None:
            on_pass(prompt, False, self.delta(prompt, counted=False))

        grace = COUNTED_GRACE_SECONDS if self._composed else FIRST_GRACE_SECONDS
        started = None
        if prepared is not None and prepared[0] == request:
            started = asyncio.wrap_future(prepared[1])
        final = await self.compose(
            workspace, catalog, request, counter, quick, grace, counted=started
        )
        self._composed = True
        on_pass(final, True, self.delta(final, counted=True))

    def prepare(
        self,
        workspace: Workspace,
        catalog: StoryCatalog,
        request: PromptRequest,
        counter: TokenCounter,
    ) -> Future[ComposedPrompt]:
        """Start composing ``request`` (counted) in a thread of its own, now, and return its
        future: the next :meth:`show` of that same request takes this compose instead of
        starting one (a show of another request drops it).

        The app opens this way: the first story's prompt is composed while the screen builds
        the story tree, instead of after it."""
        from promptdeck.core.prompt import compose_prompt

        future: Future[ComposedPrompt] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(
                    compose_prompt(workspace, catalog, request, counter=counter, count_tokens=True)
                )
            except BaseException as exc:  # handed over whole: show() raises it as it would
                future.set_exception(exc)

        self._prepared = (request, future)
        threading.Thread(target=run, name="promptdeck-opening-compose", daemon=True).start()
        return future

    def drop_prepared(self) -> None:
        """Forget the compose :meth:`prepare` started (its prompt was shown another way): the
        next :meth:`show` composes afresh, so it never shows a prompt older than a change
        that left the request as it was (a file choice remembered on disk)."""
        self._prepared = None

    @staticmethod
    async def compose(
        workspace: Workspace,
        catalog: StoryCatalog,
        request: PromptRequest,
        counter: TokenCounter,
        on_quick: Callable[[ComposedPrompt], None],
        grace: float = COUNTED_GRACE_SECONDS,
        *,
        counted: asyncio.Future[ComposedPrompt] | None = None,
    ) -> ComposedPrompt:
        """Compose ``request`` with its token counts and return it.

        The counted pass runs alone for ``grace`` seconds: two passes at once would share the
        interpreter and make the usual case (counts known, done in milliseconds) twice as slow.
        If it has not landed by then, a byte-only pass (no counts, no secret scan) is started
        beside it and handed to ``on_quick`` if it finishes first (tiktoken releases the GIL
        while it encodes, so both make progress). A
        :class:`~promptdeck.core.errors.PromptdeckError` of either pass propagates.
        ``counted``: the counted pass, already started (see :meth:`prepare`).
        """
        # Loaded with the first compose: an app handed its first prompt never waits for it.
        from promptdeck.core.prompt import compose_prompt

        if counted is None:
            counted = asyncio.ensure_future(
                asyncio.to_thread(
                    compose_prompt, workspace, catalog, request, counter=counter, count_tokens=True
                )
            )
        quick: asyncio.Future[ComposedPrompt] | None = None
        try:
            await asyncio.wait((counted,), timeout=grace)
            if counted.done():
                return counted.result()
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
            await asyncio.wait((quick, counted), return_when=asyncio.FIRST_COMPLETED)
            if not counted.done():
                on_quick(quick.result())
            return await counted
        finally:
            for future in (quick, counted):
                if future is not None and not future.done():
                    future.cancel()
            # A failed pass that nobody awaited must not be reported as never retrieved.
            for future in (quick, counted):
                if future is not None and future.done() and not future.cancelled():
                    future.exception()
