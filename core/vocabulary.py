"""promptdeck's typed vocabulary: the words a run, a flow and a composition are made of.

Each set is a ``Literal`` alias, defined once here, with the tuple of its values derived from
it, so mypy checks every use and a face can match a value exhaustively (``assert_never``).
The values are the strings written into run records and shown to the user: they never change
spelling.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

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
]
"""How a run ends. Only the first two come from a signal; ``git-failed`` is a success whose
git step failed or was refused (exit 6), ``unsaved`` a run whose record could not be written
(exit 7): neither is a success."""
OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)

SUCCESS: Final = "success"
"""The outcome of a run whose deciding signal passed; also a success signal's outcome."""
FAILURE: Final = "failure"
"""The outcome of a run whose deciding signal failed; also a failure signal's outcome."""

SignalOutcome = Literal["success", "failure", "info"]
"""What one signal says: ``info`` is a failure analysis's verdict, never a run's outcome."""
SIGNAL_OUTCOMES: Final[tuple[SignalOutcome, ...]] = get_args(SignalOutcome)
