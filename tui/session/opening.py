"""The app's opening, prepared beside its start: the story catalog, the first story's flow and
its prompt, read and composed in a helper process while the app imports Textual and builds
its screen.

A fresh app spends its first second importing and building a screen of about seventy
widgets; reading a large plan and composing the first prompt is as much work again, and in the
app's own process it could only take turns with the screen (one interpreter lock). Forked at
launch, before Textual is imported, the helper does it on another core, and the screen takes
its answer when it mounts, so the first frame already shows the tree and the preview with its
meters. The helper runs the same core calls the screen would (:func:`read_opening`), so what
is shown is what the screen would have composed itself; the screen checks that the prompt is
the one it asks for before showing it.

The answer comes back pickled through a pipe, in three parts: the app's remembered
stylesheet first (:mod:`promptdeck.tui.styles_memory`: the app takes it as it is made, before
Textual parses anything), then the catalog, then the prompt. Anything that goes wrong — no
``fork`` on this platform, the helper failing or dying — leaves the screen to read the catalog
itself, as it does without a helper (in tests, and for every reload).
"""

from __future__ import annotations

import contextlib
import io
import pickle
import select
import time
import types
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from promptdeck.core.forked import Forked, fork_child, receive_message, send_message
from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.switches import ANSWER_CACHE, turned_off

if TYPE_CHECKING:
    from promptdeck.core.plans import PlanSnapshot
    from promptdeck.core.project import Workspace
    from promptdeck.core.prompt import ComposedPrompt, PromptRequest
    from promptdeck.core.records import OpeningPhase
    from promptdeck.core.stories import StoryCatalog

    from .last_place import LastPlace
    from .story_phases import FlowReading


@dataclass(frozen=True)
class Opening:
    """The catalog and the first story's flow and prompt, as the screen opens on them.

    Attributes:
        catalog: the stories.
        plan: the plan paths watched and how they looked once the catalog was read (the
            plan watcher compares later looks with it).
        reading: the first story's flow (None without stories).
        prompt: the first story's prompt, counted (None without stories, or if composing
            failed: the screen composes it again and shows why).
    """

    catalog: StoryCatalog
    plan: tuple[list[str], PlanSnapshot]
    reading: FlowReading | None = None
    prompt: ComposedPrompt | None = None


def read_opening(
    workspace: Workspace,
    encoding: str,
    open_phase: str | None,
    delivery: str,
    catalog_read: Callable[[Opening], None] | None = None,
    place: LastPlace | None = None,
) -> Opening:
    """Read the catalog, the first story's flow, and compose the prompt the screen opens on
    (the default inclusion, ``delivery``, counted with ``encoding``; the story and phase of
    ``place`` when it names them).

    ``catalog_read`` is handed the opening without its prompt as soon as the catalog and the
    flow are read (composing, with counts to make, takes longer).

    Raises:
        PromptdeckError: the catalog cannot be read.
    """
    from promptdeck.core.plans import load_catalog, plan_paths, take_snapshot
    from promptdeck.core.prompt import compose_prompt
    from promptdeck.core.tokens import get_counter

    catalog = load_catalog(workspace)
    paths = plan_paths(workspace, catalog)
    plan = (paths, take_snapshot(workspace, paths))
    if not catalog.stories:
        return Opening(catalog, plan)
    reading, request = opening_request(workspace, catalog, open_phase, delivery, place)
    if catalog_read is not None:
        catalog_read(Opening(catalog, plan, reading))
    try:
        prompt = compose_prompt(
            workspace, catalog, request, counter=get_counter(encoding), count_tokens=True
        )
    except Exception:  # the screen composes it again and says why
        prompt = None
    return Opening(catalog, plan, reading, prompt)


def opening_request(
    workspace: Workspace,
    catalog: StoryCatalog,
    open_phase: str | None,
    delivery: str,
    place: LastPlace | None = None,
) -> tuple[FlowReading, PromptRequest]:
    """The opening story's flow (blocking: it reads the run records) and the request the
    screen opens on: the phase the flow opens on, the default inclusion, ``delivery``.

    The opening story is the one ``place`` names (where the user left the app), else the
    first; it opens on the place's phase unless the user's ``open_phase`` setting names one.
    """
    from promptdeck.core.injection import Selection

    from .last_place import RESUMED, place_in
    from .story_phases import PhaseChoice, read_flow

    story, _ = place_in(catalog, place)
    reading = read_flow(workspace, catalog, story or catalog.stories[0], open_phase)
    if story is not None and place is not None and open_phase is None:
        reading = replace(reading, opening=opening_at(reading.opening, place, RESUMED))
    choice = PhaseChoice(workspace.config, open_phase)
    choice.reading = reading
    opening = reading.opening
    request = choice.request(reading.story_id, opening.phase, opening.mode, Selection())
    return reading, replace(request, delivery=delivery)


def opening_at(opening: OpeningPhase, place: LastPlace, why: str) -> OpeningPhase:
    """``opening`` moved to the phase and mode of ``place``, for ``why``; as it was when it
    is there already (its own reason kept)."""
    from promptdeck.core.records import OpeningPhase

    if (opening.phase, opening.mode) == (place.phase, place.mode):
        return opening
    return OpeningPhase(place.phase, place.mode, why)


_ROOM = 1 << 20
"""Room in the answer pipe (1 MiB, Linux's default limit): the catalog's part fits whole, so
the helper composes the prompt while the screen is still being built, not only once the screen
reads the catalog (a 10,000-file plan's catalog pickles to some 110 KB; the pipe's usual
64 KiB stopped the helper until then)."""


def _mapping_proxy(items: dict[Any, Any]) -> types.MappingProxyType[Any, Any]:
    return types.MappingProxyType(items)


class _Pickler(pickle.Pickler):
    """Pickles the read-only mappings the layers' input holds (plain pickle refuses them)."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.MappingProxyType):
            return _mapping_proxy, (dict(obj),)
        return NotImplemented


class OpeningHelper:
    """A helper process computing :func:`read_opening`; :meth:`start` forks it.

    Its answer comes in three parts: the remembered stylesheet (:meth:`take_styles`), the
    catalog and the first story's flow as soon as they are read (:meth:`take_catalog`), then
    the first story's prompt (:meth:`take_prompt`).

    Args:
        child: the forked helper and the pipe its answer comes through.
    """

    def __init__(self, child: Forked) -> None:
        self._child: Forked | None = child
        self._catalog: Opening | None = None
        self._styles: object = _NOT_TAKEN

    @classmethod
    def start(
        cls,
        workspace: Workspace,
        encoding: str,
        open_phase: str | None,
        delivery: str,
        theme: str | None = None,
    ) -> OpeningHelper | None:
        """Fork the helper now (None where the platform cannot fork, or the fork fails).
        ``theme``: the theme the app starts with (the helper sends its remembered styles).

        Call it before any thread is started: the helper is a copy of this process.
        """

        # Read before the fork: the helper opens where the screen will (it reads it too).
        from .last_place import load_last_place

        place, _ = load_last_place(workspace.root)

        def work(_requests: int | None, replies: int) -> None:
            _send_styles(replies, theme)
            _answer(replies, workspace, encoding, open_phase, delivery, place)

        try:
            child = fork_child(work, requests=False, close_inherited=True, reply_room=_ROOM)
            return cls(child)
        except OSError:
            return None

    @property
    def pid(self) -> int | None:
        """The helper's process id (None once it is stopped)."""
        return self._child.pid if self._child else None

    def wait(self, seconds: float | None) -> bool:
        """Wait up to ``seconds`` (None: as long as it takes) for the next part of the opening
        (the catalog, then the prompt); True once it can be taken without waiting (or the
        helper has gone: taking it then answers None). A stylesheet part not taken yet is
        taken on the way: it is never mistaken for the catalog."""
        deadline = None if seconds is None else time.monotonic() + seconds
        if not self._styles_taken(seconds):
            return False
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        return self._readable(left)

    def _readable(self, seconds: float | None) -> bool:
        if self._child is None:
            return True
        try:
            ready, _, _ = select.select([self._child.from_child], [], [], seconds)
        except (OSError, ValueError):
            return True
        return bool(ready)

    def take_styles(self, seconds: float) -> object:
        """The remembered stylesheet (:mod:`promptdeck.tui.styles_memory`) if it comes within
        ``seconds``, else None; asked once, before the catalog (it is the helper's first
        part)."""
        return self._styles if self._styles_taken(seconds) else None

    def _styles_taken(self, seconds: float | None) -> bool:
        """Take the first part if it is not taken yet and comes within ``seconds``; True once
        it is taken."""
        if self._styles is _NOT_TAKEN:
            if not self._readable(seconds):
                return False
            self._styles = self._part()
        return True

    def take_catalog(self) -> Opening | None:
        """The catalog and the first story's flow (no prompt yet), waiting for them if need
        be; None if the helper failed (the helper is then stopped)."""
        self._styles_taken(None)  # the first part, not taken at start: passed over
        if self._catalog is None:
            part = self._part()
            self._catalog = part if isinstance(part, Opening) else None
            if self._catalog is None:
                self.close()
        return self._catalog

    def take_prompt(self, seconds: float | None) -> ComposedPrompt | None:
        """The first story's prompt if it comes within ``seconds``; None if not (or if the
        helper could not compose it). The helper is stopped either way."""
        try:
            if self.take_catalog() is None or not self.wait(seconds):
                return None
            from promptdeck.core.prompt import ComposedPrompt

            prompt = self._part()
            stories = self._catalog.catalog.stories if self._catalog else ()
            if not isinstance(prompt, ComposedPrompt) or not stories:
                return None
            # Pickled apart from the catalog: the story shown is the catalog's own.
            story = next((s for s in stories if s.id == prompt.story.id), None)
            return replace(prompt, story=story) if story is not None else None
        finally:
            self.close()

    def close(self) -> None:
        """Drop what was not taken: the helper is stopped and reaped."""
        child, self._child = self._child, None
        if child is not None:
            child.stop()

    def _part(self) -> object:
        """The next part: one message (its pickle), read whole and never read ahead of, so
        that waiting for the next one is waiting on the pipe (:meth:`wait`)."""
        if self._child is None:
            return None
        try:
            body = receive_message(self._child.from_child)
            return pickle.loads(body) if body else None
        except Exception:  # a helper cut short mid-answer
            return None


_NOT_TAKEN = object()
"""The helper's first part (the remembered styles) before it is read."""


def _send_styles(replies: int, theme: str | None) -> None:  # pragma: no cover - in the helper
    """The helper's first part: the stylesheet remembered for ``theme`` as it was pickled
    then, or an empty part (the app parses its stylesheet itself)."""
    from ..styles_memory import remembered

    send_message(replies, remembered(theme) or b"")


MEMORY_KIND = "app-opening"
"""The result store's kind for remembered openings (:func:`_answer`)."""


def opening_key(
    workspace: Workspace,
    encoding: str,
    open_phase: str | None,
    delivery: str,
    place: LastPlace | None = None,
) -> bytes:
    """What a remembered opening is filed under: the workspace and its settings (read before
    the helper starts, so no recorded path covers them), what the screen opens with, the
    interpreter (the parts are its pickles) and promptdeck's code and environment."""
    import sys

    from promptdeck.core.tokens import inputs_key

    words = ["app opening", str(workspace.root), repr(workspace.config), encoding]
    return inputs_key([*words, repr(open_phase), delivery, repr(place), sys.version])


def _answer(
    replies: int,
    workspace: Workspace,
    encoding: str,
    open_phase: str | None,
    delivery: str,
    place: LastPlace | None = None,
) -> None:  # pragma: no cover - runs in the forked helper (tests see what it sends)
    """The helper's work: the catalog's part as soon as it is read, then the prompt's.

    An opening read before, whose every input is unchanged, is sent as it was pickled then
    (:func:`~promptdeck.core.tokens.remembered_parts`: one ``stat`` per path it read, a seal
    that proves it is this user's own): the helper then imports no engine and reads no plan,
    and leaves the CPU to the screen being built beside it. Otherwise it reads, with its reads
    recorded, and remembers what it sent.
    """
    from promptdeck.core.tokens import (
        ReadRecorder,
        own_cache_files,
        remember_parts,
        remembered_parts,
    )

    key = opening_key(workspace, encoding, open_phase, delivery, place)
    memory = not turned_off(ANSWER_CACHE)  # off with the CLI's remembered answers
    try:
        remembered = remembered_parts(MEMORY_KIND, key) if memory else None
    except Exception:  # a memory that cannot be looked up is no memory: read
        remembered = None
    if remembered is not None:
        for body in remembered:
            send_message(replies, body)
        return
    sent: list[bytes] = []

    def send(part: object, *, last: bool = False) -> None:
        buffer = io.BytesIO()
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(part)
        sent.append(buffer.getvalue())
        if last and memory and part is not None:
            # Before the last part is sent, not after: once the screen has it, the helper is
            # stopped (on a start that reads, some 25 ms of a few hundred).
            with contextlib.suppress(Exception):  # not remembered: read again next time
                remember_parts(MEMORY_KIND, key, sent, recorder)
        send_message(replies, sent[-1])

    parts: list[Opening] = []

    def catalog_read(opening: Opening) -> None:
        send(opening)
        parts.append(opening)

    recorder = ReadRecorder(own_cache_files())
    try:
        with recorder.recording():
            opening = read_opening(workspace, encoding, open_phase, delivery, catalog_read, place)
    except Exception:
        send(None)
    else:
        # Without stories there is no flow and no prompt: the opening is the only part.
        send(opening.prompt if parts else opening, last=True)
