"""The selected story's phases, apart from any screen: the flow read from the run records, the
variant chosen per phase, the request the preview shows and the rows of the phase list.

No widget here: the main screen reads the flow in a thread worker with :func:`read_flow`, keeps
a :class:`PhaseChoice`, and paints what it returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from promptdeck.core.injection import Selection
from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.phases import PHASE_NAMES
from promptdeck.core.project import Config, Workspace
from promptdeck.core.prompt import PARTY_PHASES, FailureInfo, PromptRequest, default_variant
from promptdeck.core.records import OpeningPhase, opening_phase
from promptdeck.core.run import StoryFlow, Suggestion, flow_for, last_failure
from promptdeck.core.stories import Story, StoryCatalog


@dataclass(frozen=True)
class PhaseRow:
    """One phase as the panel shows it (state and attempt come from the flow in core)."""

    name: str
    state: str
    attempt: int = 0


@dataclass(frozen=True)
class FlowReading:
    """What the run records say about one story.

    Attributes:
        story_id: the story.
        flow: its phase states and the suggested next phase.
        attempts: attempts so far per phase.
        failure: what the failure-analysis phase would be told, if anything failed.
        opening: the phase (and mode) the story opens on, and why.
    """

    story_id: str
    flow: StoryFlow
    attempts: Mapping[str, int]
    failure: FailureInfo | None
    opening: OpeningPhase


def read_flow(
    workspace: Workspace, catalog: StoryCatalog, story: Story, open_phase: str | None = None
) -> FlowReading:
    """Read ``story``'s flow, attempts, last failure and opening phase (blocking: it reads
    the run folders, once for all of them). ``open_phase``: the user's setting, if any."""
    from promptdeck.core.records import list_runs  # here: the app's opening needs no reader

    runs = list_runs(workspace.root)
    flow = flow_for(workspace, catalog, story, runs)
    attempts: dict[str, int] = {}
    for run in runs:
        if run.story.lower() == story.id.lower():
            attempts[run.phase] = run.attempt
    failure = last_failure(workspace, story.id, runs)
    opening = opening_phase(story, flow, runs, always=open_phase)
    return FlowReading(story.id, flow, attempts, failure, opening)


def phases_title(story: Story | None, phase: str, mode: str, *, solo: bool = False) -> str:
    """``Phases · 1-2 · dev · create``; alone on screen (``solo``) the phases must still say
    whose they are, so the story's title follows."""
    if story is None:
        return "Phases"
    title = f"Phases · {story.id} · {phase} · {mode}"
    return f"{title} · {story.title}" if solo else title


class PhaseChoice:
    """The flow of the selected story and the variant chosen per phase.

    Args:
        config: the workspace's config (its ``[party]`` defaults).
    """

    def __init__(self, config: Config, open_phase: str | None = None) -> None:
        self._config = config
        self.open_phase = open_phase
        """The user's ``open_phase`` setting: every story opens on it (None: the flow's)."""
        self.reading: FlowReading | None = None
        """The selected story's flow, once read (None while it is read)."""
        self.variants: dict[str, str] = {}
        """The variant chosen per phase (``v``); unset phases take ``[party]`` defaults."""

    @property
    def flow(self) -> StoryFlow | None:
        """The selected story's phase states and suggestion, once read."""
        return self.reading.flow if self.reading else None

    @property
    def suggestion(self) -> Suggestion | None:
        """The phase the flow suggests next, if any."""
        return self.reading.flow.suggestion if self.reading else None

    def variant_of(self, phase: str) -> str:
        """The variant ``phase`` runs in: the user's choice, else the workspace default."""
        return self.variants.get(phase) or default_variant(self._config, phase)

    def toggle_variant(self, phase: str) -> str | None:
        """Switch ``phase`` between standard and party; return the variant it now runs in
        (None, and nothing changed, for a phase without a party variant)."""
        if phase not in PARTY_PHASES:
            return None
        self.variants[phase] = "standard" if self.variant_of(phase) == "party" else "party"
        return self.variants[phase]

    def variant_toggled(self, phase: str) -> tuple[str, bool]:
        """``v`` on ``phase``: the toast's words, and whether the variant changed (a phase
        without a party variant keeps its own)."""
        variant = self.toggle_variant(phase)
        if variant is None:
            party = ", ".join(PARTY_PHASES)
            return f"the {phase} phase has no party variant (party phases: {party})", False
        return f"{phase}: {variant} variant", True

    def why_shown(self, phase: str, mode: str) -> str:
        """Why the preview shows ``phase`` in ``mode``: the opening's reason while it is the
        phase the story opened on, else ``chosen`` (the user moved to it)."""
        if self.reading is None:
            return ""
        opening = self.reading.opening
        if (opening.phase, opening.mode) == (phase, mode):
            return opening.why
        return "chosen"

    def why_nothing_suggested(self) -> str:
        """Why the flow suggests no phase: its note, or that it is still being read."""
        if self.reading is None:
            return "the phase flow is still loading"
        return self.reading.flow.note or "nothing to suggest"

    def request(self, story_id: str, phase: str, mode: str, selection: Selection) -> PromptRequest:
        """The request of ``phase`` in ``mode``: the flow's own when it suggests exactly that
        (it carries the retry reason and the failure), else a plain one."""
        variant = self.variant_of(phase)
        suggestion = self.suggestion
        if suggestion is not None and (suggestion.phase, suggestion.mode) == (phase, mode):
            return replace(suggestion.request(story_id, selection), variant=variant)
        failure = self.reading.failure if self.reading and phase == "failure" else None
        return PromptRequest(
            story_id=story_id,
            phase=phase,
            mode=mode,
            selection=selection,
            failure=failure,
            variant=variant,
        )

    def rows(self, running: str | None = None) -> list[PhaseRow]:
        """The phase list: each phase's state and attempt (``running``: the phase of this
        story running now)."""
        flow = self.flow
        attempts = self.reading.attempts if self.reading else {}
        rows = []
        for name in PHASE_NAMES:
            state = flow.states.get(name, "pending") if flow else "pending"
            attempt = attempts.get(name, 0)
            if flow and flow.suggestion and flow.suggestion.phase == name:
                attempt = flow.suggestion.attempt
            if running == name:
                state = "running"
            rows.append(PhaseRow(name, state, attempt))
        return rows

    def note(self) -> str:
        """What the status line says while nothing has run: the suggestion and why."""
        flow = self.flow
        if flow and flow.suggestion:
            return f"next: {flow.suggestion.phase} — {flow.suggestion.why}"
        if flow and flow.note:
            return flow.note
        return "no run yet"
