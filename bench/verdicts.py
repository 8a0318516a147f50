"""What the budget sections share: the programs they time and the verdict lines they print
(``budgets.py`` and its sections in other files import it; none imports another section)."""

from __future__ import annotations

import statistics
from pathlib import Path

from versus import PYTHON

HERE = Path(__file__).resolve().parent
PROMPTDECK = str(Path(PYTHON).with_name("promptdeck"))
REPOMIX = HERE.parent / ".tools" / "npm" / "node_modules" / ".bin" / "repomix"

Samples = list[tuple[float, int]]


class Verdicts:
    """The budget lines of the run, and whether any was missed."""

    def __init__(self) -> None:
        self.missed: list[str] = []

    def ratio(
        self, label: str, mine: Samples, reference: Samples, budget: float, *, faster: bool
    ) -> None:
        """``mine / reference`` per round (or ``reference / mine`` when ``faster``)."""
        ratios = [
            (r[0] / m[0]) if faster else (m[0] / r[0]) for m, r in zip(mine, reference, strict=True)
        ]
        median = statistics.median(ratios)
        ok = median >= budget if faster else median <= budget
        goal = f"≥ {budget}×" if faster else f"≤ {budget}×"
        self._line(label, f"{median:.2f}× (min {min(ratios):.2f}, max {max(ratios):.2f})", goal, ok)

    def absolute(self, label: str, value: float, budget: float, unit: str) -> None:
        self._line(label, f"{value:.1f} {unit}", f"≤ {budget:g} {unit}", value <= budget)

    def failed(self, label: str, why: str) -> None:
        """A measure that could not be taken counts as missed, with the reason."""
        print(f"  => {label}: NOT MEASURED: {why}", flush=True)
        self.missed.append(f"{label} (not measured)")

    def _line(self, label: str, figure: str, goal: str, ok: bool) -> None:
        mark = "met" if ok else "MISSED"
        print(f"  => {label}: {figure}  budget {goal}  {mark}", flush=True)
        if not ok:
            self.missed.append(label)


def ms(samples: Samples) -> str:
    values = [s * 1000 for s, _ in samples]
    return (
        f"median {statistics.median(values):7.1f} ms (min {min(values):.1f}, max {max(values):.1f})"
    )
