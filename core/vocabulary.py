"""promptdeck's typed vocabulary: the words a run, a flow and a composition are made of.

Each set is a ``Literal`` alias, defined once here, with the tuple of its values derived from
it, so mypy checks every use and a face can match a value exhaustively (``assert_never``).
The values are the strings written into run records and shown to the user: they never change
spelling.
"""

from __future__ import annotations

from typing import Final, Literal, TypeGuard, get_args

Outcome = Literal[
    "success",
    "failure",
    "no-signal",
    "timeout",
    "cancelled",
    "crashed",
    "launch-failed",
    "git-failed",
    "unsaved",
    "status-failed",
    "scope-violated",
]
"""How a run ends. Only the first two come from a signal; ``git-failed`` is a success whose
git step failed or was refused (exit 6), ``unsaved`` a run whose record could not be written
(exit 7), ``status-failed`` a success whose status write-back could not be done (a symlink
in the status file's place, a file changed since it was read; exit 11), ``scope-violated`` a
run whose agent changed a file outside its phase's write scope (restored; exit 13): none is a
success."""
OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)

SUCCESS: Final = "success"
"""The outcome of a run whose deciding signal passed; also a success signal's outcome."""
FAILURE: Final = "failure"
"""The outcome of a run whose deciding signal failed; also a failure signal's outcome."""

SignalOutcome = Literal["success", "failure", "info"]
"""What one signal says: ``info`` is a failure analysis's verdict, never a run's outcome."""
SIGNAL_OUTCOMES: Final[tuple[SignalOutcome, ...]] = get_args(SignalOutcome)

PhaseName = Literal["kickoff", "dev", "review", "failure", "uat", "retro"]
"""The six phases, in flow order (``failure`` is the failure analysis)."""
PHASE_NAMES: Final[tuple[PhaseName, ...]] = get_args(PhaseName)

Mode = Literal["create", "optimize"]
"""How a prompt is composed: write the thing, or improve an existing one."""
MODES: Final[tuple[Mode, ...]] = get_args(Mode)

LayerId = Literal[
    "Layer-0A",
    "Layer-0B",
    "Layer-1",
    "Layer-2",
    "Layer-3",
    "Layer-4",
    "Layer-5",
    "Layer-6",
]
"""The system prompt's layers, in their fixed order (seed 001, frozen decision 1)."""
LAYER_IDS: Final[tuple[LayerId, ...]] = get_args(LayerId)
RULES_LAYER: Final = "Layer-0B"
"""The workspace rules layer."""
OPTIONAL_LAYERS: Final[tuple[LayerId, ...]] = (RULES_LAYER,)
"""The layers a user may leave out: the workspace rules only (seed 001: the others are
required; seed 004: the rules are not)."""


def optional_layer(text: str) -> LayerId | None:
    """``0B``, ``layer-0b`` or ``Layer-0B`` as the id of a layer that may be left out; None
    when ``text`` names no such layer (a required layer, or none)."""
    name = text.strip()
    wanted = name.lower().removeprefix("layer-")
    return next((layer for layer in OPTIONAL_LAYERS if layer.lower() == f"layer-{wanted}"), None)


FileStatus = Literal[
    "included",
    "duplicate",
    "excluded",
    "missing",
    "unreadable",
    "not-utf8",
    "outside-project",
    "too-large",
]
"""What became of one candidate file of the injection: the first three are choices, the
rest are reasons it could not be read."""
FILE_STATUSES: Final[tuple[FileStatus, ...]] = get_args(FileStatus)

InjectionLevel = Literal["ok", "warning", "error"]
"""How the injection's size stands against the configured thresholds."""

PhaseState = Literal["pending", "suggested", "running", "done", "failed", "skipped"]
"""What a phase can be for a story."""
PHASE_STATES: Final[tuple[PhaseState, ...]] = get_args(PhaseState)

RunEventKind = Literal["line", "signal", "usage", "session", "notice", "end"]
"""What the runner tells its listener: an output line, a signal, a usage update, the
agent's session id, one of promptdeck's own notices, or the end of the run."""

Stream = Literal["stdout", "stderr", "promptdeck"]
"""Where a run event's text came from."""


def is_outcome(value: object) -> TypeGuard[Outcome]:
    """True when ``value`` is one of the run outcomes (a record's ``outcome`` read back)."""
    return value in OUTCOMES


RunState = Outcome | Literal["running", "interrupted", "unknown"]
"""What a recorded run is: its outcome once settled; ``running`` while its promptdeck is
alive, ``interrupted`` when it died first; ``unknown`` for a result that names no outcome."""
RUN_STATES: Final[tuple[RunState, ...]] = (*OUTCOMES, "running", "interrupted", "unknown")

CompanionKind = Literal["context", "retro", "report", "validation", "review", "proposal"]
"""What a file written about a story, not the story itself, is: its context (BMAD's story
context), a retrospective, a run or result report, a validation, a review, a change proposal.
The injection lists each as a row of that category
(:func:`~promptdeck.core.stories.companions.companion_kind` tells them)."""
COMPANION_KINDS: Final[tuple[CompanionKind, ...]] = get_args(CompanionKind)
