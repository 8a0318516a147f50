"""Which optional phases ``run --auto`` runs, and in which variant (seed 002).

Seed 002's party phases are opt-in (``--party-kickoff``, ``--party-failure``, ``--party-retro``)
and non-blocking:

- a kickoff that fails → the flow continues to dev (the insights help; they are not needed);
- a failure analysis is informational → the retry goes ahead whatever it recommends, unless
  ``[flow] honour_analysis`` lets a Skip or Escalate stop the flow;
- a retro that fails → a warning; the epic is complete all the same.

So ``--auto`` runs dev, review and (once the epic is done) UAT always, and kickoff, failure
analysis and retro only when asked: by a ``--party-<phase>`` flag (which also picks the party
variant), by ``--with <phase>`` (the workspace's default variant), or by ``[flow] auto_<phase>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import UsageError
from ..lean_dataclass import dataclass
from ..project.config import Config
from ..prompt.party import PARTY_PHASES, default_variant

AUTO_OPTIONAL = ("kickoff", "failure", "retro")
"""The phases ``--auto`` runs only when asked."""


@dataclass(frozen=True)
class AutoPlan:
    """What ``--auto`` runs beyond dev, review and UAT, and each phase's variant.

    Attributes:
        run: the optional phases asked for.
        variants: the variant of every party-capable phase (``standard`` or ``party``).
    """

    run: frozenset[str]
    variants: Mapping[str, str]

    @property
    def skip(self) -> frozenset[str]:
        """The optional phases passed over."""
        return frozenset(AUTO_OPTIONAL) - self.run

    def describe(self) -> str:
        """One line for the log: what runs, in which variant."""
        parts = []
        for phase in ("kickoff", "dev", "review", "failure", "uat", "retro"):
            if phase in self.skip:
                continue
            variant = self.variants.get(phase, "standard")
            parts.append(f"{phase} ({variant})" if variant == "party" else phase)
        return " → ".join(parts)


def parse_with(text: str | None) -> frozenset[str]:
    """``--with kickoff,retro`` → the phases named.

    Raises:
        UsageError: a name that is not an optional phase.
    """
    if not text:
        return frozenset()
    names = {part.strip() for part in text.split(",") if part.strip()}
    unknown = sorted(names - set(AUTO_OPTIONAL))
    if unknown:
        raise UsageError(
            f"--with {', '.join(unknown)}: expected some of {', '.join(AUTO_OPTIONAL)}"
        )
    return frozenset(names)


def auto_plan(
    config: Config,
    *,
    party: Iterable[str] = (),
    asked: Iterable[str] = (),
    standard: bool = False,
) -> AutoPlan:
    """The optional phases ``--auto`` runs and every phase's variant.

    Args:
        config: ``[flow] auto_<phase>`` and ``[party] <phase>`` defaults.
        party: phases given as ``--party-<phase>``: run (when optional) and in party variant.
        asked: phases given with ``--with``: run, in the default variant.
        standard: ``--standard``: phases not given a party flag are standard, whatever the
            config's default.
    """
    party = frozenset(party)
    run = {phase for phase in AUTO_OPTIONAL if getattr(config, f"flow_auto_{phase}")}
    run |= set(asked) | (party & set(AUTO_OPTIONAL))
    variants = {
        phase: "party"
        if phase in party
        else ("standard" if standard else default_variant(config, phase))
        for phase in PARTY_PHASES
    }
    return AutoPlan(frozenset(run), variants)
