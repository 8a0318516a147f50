"""The stories on the shelf: the catalog read (at start, after a run, when a plan file
changes outside the app), which story the screen shows once it is read, and the plan files
watched — decided apart from any screen.

:class:`StoryShelf` reads (blocking, in the screen's thread worker) and answers with a
:class:`Loaded`; told it, :meth:`StoryShelf.shelve` says what the screen shows: the story kept
(a reload keeps the story on screen, with fresh data), else the one the user left the app on
(:mod:`.last_place`), else the first; the marks on the tree and the notices to leave.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import field
from functools import partial
from typing import TYPE_CHECKING

from promptdeck.core.errors import PromptdeckError
from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.plans import (
    WATCH_LIMIT,
    PlanSnapshot,
    group_notes,
    load_catalog,
    plan_paths,
    take_snapshot,
)
from promptdeck.core.stories import Story, StoryCatalog

from ..context import DeckContext
from ..workers import WorkerHost
from .last_place import NOTICE_SOURCE, LastPlace, place_in

if TYPE_CHECKING:
    from promptdeck.core.project import Workspace
    from promptdeck.core.prompt import ComposedPrompt
    from promptdeck.core.records import RunResult

    from .opening import OpeningHelper
    from .story_phases import FlowReading

PROMPT_WAIT_SECONDS = 0.25
"""How long the catalog, once read, waits for the opening story's prompt composed beside it:
the tree and the preview with its meters are then painted in one frame (a slower count goes
the preview's own way, byte meters first)."""

Plan = tuple[list[str], PlanSnapshot]
"""The plan paths watched and how they looked when the catalog was last read."""

OpenFirst = Callable[[StoryCatalog], tuple["FlowReading", Future["ComposedPrompt"]]]
"""Starts, beside the first catalog read, the opening story's flow and prompt."""


@dataclass(frozen=True)
class Loaded:
    """A catalog read, with what came with it.

    Attributes:
        catalog: the stories.
        follow_flow: after a run: the story's flow is read again and followed.
        plan: the plan files watched, as they looked.
        finished: the run whose end started this read, if one did.
        unwritten: why that run's status could not be written back, if it could not.
        opening: the opening story's flow, read with the catalog at start.
        ready: the opening story's prompt, composed with the catalog at start.
    """

    catalog: StoryCatalog
    follow_flow: bool = False
    plan: Plan | None = None
    finished: RunResult | None = None
    unwritten: str | None = None
    opening: FlowReading | None = None
    ready: ComposedPrompt | None = None


@dataclass(frozen=True)
class Shelved:
    """What the screen shows once a catalog is read.

    Attributes:
        chosen: the story to show (None: the plan has none).
        kept: ``chosen`` is the story on screen before, with fresh data.
        flags: the tree's marks after a run (None: unchanged).
        notices: (source, lines) to leave on the notice board.
    """

    chosen: Story | None
    kept: bool = False
    flags: dict[str, str] | None = None
    notices: list[tuple[str, list[str]]] = field(default_factory=list)


class StoryShelf:
    """The catalog of one workspace as the screen shows it.

    Args:
        place: where the user left the app in this project, if anywhere (used once, for
            the first catalog).
        place_note: why the place kept could not be used, if it could not.
    """

    def __init__(self, place: LastPlace | None = None, place_note: str = "") -> None:
        self._host: WorkerHost | None = None
        self._deck: DeckContext | None = None
        self._shown: Callable[[Loaded], None] = lambda _: None
        self._failed: Callable[[str], None] = lambda _: None
        self.catalog: StoryCatalog | None = None
        """The stories, once read."""
        self.plan: Plan | None = None
        """The plan files watched."""
        self.finished_pending: RunResult | None = None
        """A finished run whose reload has not been applied yet (see :meth:`read`)."""
        self.place = place
        """Where the app opens, if the user left it somewhere (until the first catalog)."""
        self._place_note = place_note
        self._bound_said = False

    def host(
        self,
        host: WorkerHost,
        deck: DeckContext,
        shown: Callable[[Loaded], None],
        failed: Callable[[str], None],
    ) -> None:
        """Read in ``host``'s workers for ``deck``'s workspace: ``shown`` is handed each
        catalog read (on the UI thread), ``failed`` the message of a read that failed."""
        self._host, self._deck, self._shown, self._failed = host, deck, shown, failed

    def load(
        self,
        follow_flow: bool = False,
        finished: RunResult | None = None,
        helper: OpeningHelper | None = None,
        opening: OpenFirst | None = None,
    ) -> None:
        """Read the catalog in a worker (a newer read replaces an older one): the helper's
        answer when there is a helper and it answers, else read here (``opening``: how the
        first read starts the opening story beside it)."""
        assert self._host is not None, "host() first"
        step = partial(self._load, follow_flow, finished, helper, opening)
        self._host.worker(step, "catalog", "Loading stories")

    def _load(
        self,
        follow_flow: bool,
        finished: RunResult | None,
        helper: OpeningHelper | None,
        opening: OpenFirst | None,
    ) -> None:
        assert self._host is not None and self._deck is not None
        loaded = None if helper is None else self.from_helper(helper, PROMPT_WAIT_SECONDS)
        try:
            workspace = self._deck.workspace
            loaded = loaded or self.read(workspace, follow_flow, finished, opening)
        except PromptdeckError as exc:
            self._host.on_ui(self._failed, str(exc))
            return
        self._host.on_ui(self._shown, loaded)

    def poll(self) -> None:
        """Look for plan files changed outside the app, in a worker: one look at a time and
        none while the catalog is read (a look is never cancelled half-way; a slow one skips
        a beat)."""
        host = self._host
        if host is None or self.plan is None or host.busy(("catalog", "plan-watch")):
            return
        host.worker(partial(self._look, self.plan), "plan-watch", "Checking the plan files")

    def _look(self, plan: Plan) -> None:
        assert self._host is not None and self._deck is not None
        changed = self.plan_changed(self._deck.workspace, plan)
        if changed is not None and changed[1]:
            self._host.on_ui(self._refused, *changed)
        elif changed is not None:
            self._host.on_ui(self.load)

    def _refused(self, plan: Plan, refused: list[str]) -> None:
        assert self._deck is not None
        self._deck.board.add_notices("watching the plan", [self.refused(plan, refused)])

    def read(
        self,
        workspace: Workspace,
        follow_flow: bool = False,
        finished: RunResult | None = None,
        open_first: OpenFirst | None = None,
    ) -> Loaded:
        """Read the catalog (blocking). At the app's start (no catalog yet, no run),
        ``open_first`` starts the opening story's flow and prompt beside it, and the prompt is
        taken if it comes within :data:`PROMPT_WAIT_SECONDS`.

        Raises:
            PromptdeckError: the catalog cannot be read.
        """
        # A reload the plan watcher starts can replace (cancel) the one a finished run
        # started, even before its thread runs: the run's outcome waits here until a reload
        # applies it.
        pending = self.finished_pending
        if finished is None and pending is not None:
            finished, follow_flow = pending, True
        catalog = load_catalog(workspace)
        opening = ready = None
        if self.catalog is None and finished is None and catalog.stories and open_first:
            try:
                opening, composing = open_first(catalog)
            except Exception:  # the screen reads the flow and composes on its own
                opening = None
            else:
                ready = prompt_within(composing, PROMPT_WAIT_SECONDS)
        paths = plan_paths(workspace, catalog)
        plan = (paths, take_snapshot(workspace, paths))
        unwritten = None
        if finished is not None and finished.outcome == "success":
            from promptdeck.core.records import unwritten_status

            unwritten = unwritten_status(finished.run_dir, workspace.root)
        return Loaded(catalog, follow_flow, plan, finished, unwritten, opening, ready)

    @staticmethod
    def from_helper(helper: OpeningHelper, seconds: float) -> Loaded | None:
        """The catalog, flow and prompt the opening helper read (waiting for them; the prompt
        up to ``seconds``); None if the helper failed."""
        opening = helper.take_catalog()
        if opening is None:
            return None
        ready = helper.take_prompt(seconds)
        return Loaded(opening.catalog, plan=opening.plan, opening=opening.reading, ready=ready)

    def shelve(self, loaded: Loaded, current: Story | None, flags: Mapping[str, str]) -> Shelved:
        """Take ``loaded``: what to show, with ``current`` the story on screen and ``flags``
        the tree's marks."""
        first = self.catalog is None
        catalog = self.catalog = loaded.catalog
        self.plan = loaded.plan
        notices: list[tuple[str, list[str]]] = []
        plan = loaded.plan
        if plan is not None and plan[1].left_out and not self._bound_said:
            self._bound_said = True
            watched = f"{plan[1].total} plan files: changes to the first {WATCH_LIMIT} are followed"
            notices.append(("watching the plan", [watched]))
        finished = loaded.finished
        if finished is not None and finished is self.finished_pending:
            self.finished_pending = None
        new_flags = None
        if finished is not None:
            new_flags = {k: v for k, v in flags.items() if k != finished.story_id}
            if loaded.unwritten:
                new_flags[finished.story_id] = "status not written back"
                notices.append((f"run {finished.story_id}", [loaded.unwritten]))
        if first:
            # One toast for them all; the notices screen (w) keeps each of them, by kind.
            notes = [f"{g.kind}: {line}" for g in group_notes(catalog) for line in g.lines]
            notices.append(("loading the stories", list(notes)))
        kept = next((s for s in catalog.stories if current and s.id == current.id), None)
        if kept is not None:
            return Shelved(kept, True, new_flags, notices)
        placed = None
        if first:
            placed, note = place_in(catalog, self.place)
            note = self._place_note or note
            if note and catalog.stories:
                notices.append((NOTICE_SOURCE, [note]))
        self.place = None
        chosen = placed or (catalog.stories[0] if catalog.stories else None)
        return Shelved(chosen, False, new_flags, notices)

    @staticmethod
    def plan_changed(workspace: Workspace, plan: Plan) -> tuple[Plan, list[str]] | None:
        """Look at the plan files again (blocking): None when none changed; else the plan as
        it looks now and the lines of the changed files the guarded reader refused (none: the
        catalog is read again)."""
        paths, before = plan
        now = take_snapshot(workspace, paths)
        changed = now.changed_since(before)
        if not changed:
            return None
        refused = [line for line in now.problems() if line.split(": ", 1)[0] in changed]
        return (paths, now), refused

    def refused(self, plan: Plan, refused: list[str]) -> str:
        """The changed plan files were refused: the tree keeps its last good state (the refused
        state becomes the one compared against, so a fix is seen as a change). Returns the
        notice's line."""
        self.plan = plan
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        return f"{refused[0]}{more}; the tree keeps its last good state"


def prompt_within(composing: Future[ComposedPrompt], seconds: float) -> ComposedPrompt | None:
    """The compose's prompt if it lands within ``seconds``; None if it is slower or failed (the
    preview's own compose then takes it over and reports a failure)."""
    try:
        return composing.result(timeout=seconds)
    except Exception:  # FutureTimeout, or the compose's own error
        return None
