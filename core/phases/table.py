"""The six phases of a story's life (seed 002), as frozen definitions.

Each phase runs as a fresh agent process. What a phase is told comes from here: its entry
(Layer-3, a template named by :attr:`Phase.entry_template`), its contract (Layer-2: the exact
signal lines it prints), its apply policy (Layer-6) and the transfers it receives (Layer-5).

Two signal families exist (DESIGN.md → Reconciling the seeds): seed 002's lines
(``IMPLEMENTATION COMPLETE: 1-2``) and seed 003's ``<promise>…</promise>`` tags. The dev phase
of an OpenSpec story is *told* the promise tags (seed 003 is the OpenSpec story prompt); every
other phase, and the dev phase of a BMAD story, is told seed 002's lines. The dev phase
*accepts* both families whatever the story's source, so an agent that answers in the other
family is still understood. Seed 002 names no UAT signal; ``UAT COMPLETE: Epic {id}`` is
promptdeck's, in the style of ``RETRO COMPLETE: Epic {id}``.
"""

from __future__ import annotations

import re
from functools import cached_property

from ..errors import UsageError
from ..lean_dataclass import dataclass
from ..vocabulary import PhaseName, SignalOutcome

RECOMMENDATIONS = ("Retry", "Skip", "Escalate")

_ID = r"(?P<id>\S+)"
_REASON = r"(?P<reason>\S.*?)"


@dataclass(frozen=True)
class SignalSpec:
    """One signal a phase may print, as the signal parser matches it.

    Attributes:
        phase: the phase that prints it.
        kind: a stable machine name, e.g. ``implementation-blocked``.
        template: the line with placeholders: ``{id}`` (story id, or epic id for
            ``Epic {id}``), ``{reason}``, ``{count}``, ``{recommendation}``.
        regex: the full-line pattern (leading and trailing blanks allowed, nothing else).
        outcome: ``success``, ``failure`` or ``info``.
        family: ``phase`` (seed 002 lines) or ``promise`` (seed 003 tags).
        when: when the agent prints it, in words (shown in the contract).
    """

    phase: str
    kind: str
    template: str
    regex: str
    outcome: SignalOutcome
    family: str
    when: str

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """:attr:`regex`, compiled."""
        return re.compile(self.regex)

    def display(self, ident: str) -> str:
        """The line as the contract shows it, with the id filled in.

        ``{reason}`` stays a placeholder; ``{count}`` shows as ``N`` and ``{recommendation}``
        as ``Retry|Skip|Escalate``, as seed 002 writes them.
        """
        return (
            self.template.replace("{id}", ident)
            .replace("{count}", "N")
            .replace("{recommendation}", "|".join(RECOMMENDATIONS))
        )

    def example(self, ident: str) -> str:
        """A concrete line the pattern matches (used by tests and the replay agent)."""
        return (
            self.template.replace("{id}", ident)
            .replace("{reason}", "the build fails")
            .replace("{count}", "2")
            .replace("{recommendation}", RECOMMENDATIONS[0])
        )


def _line(body: str) -> str:
    return rf"^\s*{body}\s*$"


SIGNAL_SPECS: tuple[SignalSpec, ...] = (
    SignalSpec(
        "kickoff",
        "kickoff-complete",
        "KICKOFF COMPLETE: {id}",
        _line(rf"KICKOFF COMPLETE: {_ID}"),
        "success",
        "phase",
        "your insights are appended to the story file.",
    ),
    SignalSpec(
        "dev",
        "implementation-complete",
        "IMPLEMENTATION COMPLETE: {id}",
        _line(rf"IMPLEMENTATION COMPLETE: {_ID}"),
        "success",
        "phase",
        "every task of this story is done, verification passes and your changes are staged.",
    ),
    SignalSpec(
        "dev",
        "implementation-blocked",
        "IMPLEMENTATION BLOCKED: {id} - {reason}",
        _line(rf"IMPLEMENTATION BLOCKED: {_ID} - {_REASON}"),
        "failure",
        "phase",
        "you cannot complete the story; {reason} says briefly what is in the way.",
    ),
    SignalSpec(
        "dev",
        "promise-complete",
        "<promise>COMPLETE</promise>",
        _line(r"<promise>COMPLETE</promise>"),
        "success",
        "promise",
        "every task of this story is done and verification passes.",
    ),
    SignalSpec(
        "dev",
        "promise-failed",
        "<promise>FAILED: {reason}</promise>",
        _line(rf"<promise>FAILED:\s*{_REASON}</promise>"),
        "failure",
        "promise",
        "verification fails and you cannot fix it, or you cannot complete the story; "
        "{reason} says briefly what went wrong.",
    ),
    SignalSpec(
        "review",
        "review-passed",
        "REVIEW PASSED: {id}",
        _line(rf"REVIEW PASSED: {_ID}"),
        "success",
        "phase",
        "you found no issue that needed a fix.",
    ),
    SignalSpec(
        "review",
        "review-passed-with-fixes",
        "REVIEW PASSED WITH FIXES: {id} - Fixed {count} issues",
        _line(rf"REVIEW PASSED WITH FIXES: {_ID} - Fixed (?P<count>\d+) issues?"),
        "success",
        "phase",
        "you fixed and staged N issues and none that needs a fix is left.",
    ),
    SignalSpec(
        "review",
        "review-failed",
        "REVIEW FAILED: {id} - {reason}",
        _line(rf"REVIEW FAILED: {_ID} - {_REASON}"),
        "failure",
        "phase",
        "issues remain that you could not fix; {reason} names the most serious one.",
    ),
    SignalSpec(
        "failure",
        "analysis-complete",
        "ANALYSIS COMPLETE: {id} - {recommendation}",
        _line(rf"ANALYSIS COMPLETE: {_ID} - (?P<recommendation>Retry|Skip|Escalate)"),
        "info",
        "phase",
        "your analysis is appended to the story file; end with exactly one of Retry, Skip "
        "or Escalate.",
    ),
    SignalSpec(
        "uat",
        "uat-complete",
        "UAT COMPLETE: Epic {id}",
        _line(rf"UAT COMPLETE: Epic {_ID}"),
        "success",
        "phase",
        "the UAT plan is written.",
    ),
    SignalSpec(
        "retro",
        "retro-complete",
        "RETRO COMPLETE: Epic {id}",
        _line(rf"RETRO COMPLETE: Epic {_ID}"),
        "success",
        "phase",
        "the retrospective and the handoff are written.",
    ),
)
"""Every signal of every phase, for the signal parser; order is stable."""


@dataclass(frozen=True)
class ApplyPolicy:
    """What a phase may write (Layer-6).

    Attributes:
        allow_apply: the phase may change files at all.
        requires_validation: the verification commands must pass before a success signal.
        writes: what it may write, in words.
        stage: what it stages, in words (``git add -A`` or nothing).
    """

    allow_apply: bool
    requires_validation: bool
    writes: str
    stage: str
    party_writes: str = ""
    """What the party variant writes, where it differs (the Party Review Record)."""


@dataclass(frozen=True)
class Phase:
    """One phase: what it is told, what it prints, what it may write, what it receives.

    Attributes:
        name: ``kickoff``, ``dev``, ``review``, ``failure``, ``uat`` or ``retro``.
        title: a readable title.
        scope: ``story`` or ``epic`` (UAT and retro work on a whole epic or change).
        required: part of every story's flow (dev, review) rather than an extra.
        blocking: a failure stops the flow; the optional phases never block (seed 002).
        apply_policy: Layer-6.
        transfers: what reaches the phase from earlier phases (Layer-5), in words.
        task: the user message, with ``{id}``, ``{title}`` and ``{epic_label}``.
    """

    name: PhaseName
    title: str
    scope: str
    required: bool
    blocking: bool
    apply_policy: ApplyPolicy
    transfers: tuple[str, ...]
    task: str

    @property
    def entry_template(self) -> str:
        """The Layer-3 template name, e.g. ``layer-3-entry-dev.md``."""
        return f"layer-3-entry-{self.name}.md"

    @property
    def transfers_template(self) -> str:
        """The Layer-5 transfers template name, e.g. ``transfers-review.md``."""
        return f"transfers-{self.name}.md"

    @property
    def signals(self) -> tuple[SignalSpec, ...]:
        """Every signal this phase's output is matched against (both families for dev)."""
        return tuple(spec for spec in SIGNAL_SPECS if spec.phase == self.name)

    def contract_signals(self, source: str) -> tuple[SignalSpec, ...]:
        """The signals the contract tells the agent to print, for a story of ``source``."""
        family = "promise" if self.name == "dev" and source == "openspec" else "phase"
        return tuple(spec for spec in self.signals if spec.family == family)


_STAGE_ALL = "stage every change with `git add -A` when you are done. Do not commit."
_NO_STAGE = "stage nothing and do not commit."

PHASES: tuple[Phase, ...] = (
    Phase(
        name="kickoff",
        title="Story kickoff",
        scope="story",
        required=False,
        blocking=False,
        apply_policy=ApplyPolicy(
            allow_apply=True,
            requires_validation=False,
            writes="Append your insights to the end of the story file; change no other file.",
            stage=_NO_STAGE,
        ),
        transfers=("the story file",),
        task="Run the kickoff of story {id}: {title}.",
    ),
    Phase(
        name="dev",
        title="Implementation",
        scope="story",
        required=True,
        blocking=True,
        apply_policy=ApplyPolicy(
            allow_apply=True,
            requires_validation=True,
            writes="Change the code, tests and docs the story needs, tick its tasks, and append "
            "your Dev Agent Record to the story file.",
            stage=_STAGE_ALL,
        ),
        transfers=("the story file, with any kickoff insights",),
        task="Implement story {id}: {title}.",
    ),
    Phase(
        name="review",
        title="Code review",
        scope="story",
        required=True,
        blocking=True,
        apply_policy=ApplyPolicy(
            allow_apply=True,
            requires_validation=True,
            writes="Fix the issues you find, and append your Code Review Record to the story file.",
            party_writes="Fix the issues the party agrees on, and append one unified Party "
            "Review Record to the story file.",
            stage="stage your fixes with `git add -A`. Do not commit: promptdeck commits after "
            "a passed review.",
        ),
        transfers=(
            "the story file, with its Dev Agent Record",
            "the staged changes (`git diff --staged`)",
        ),
        task="Review the staged implementation of story {id}: {title}.",
    ),
    Phase(
        name="failure",
        title="Failure analysis",
        scope="story",
        required=False,
        blocking=False,
        apply_policy=ApplyPolicy(
            allow_apply=True,
            requires_validation=False,
            writes="Append your Failure Analysis Record to the end of the story file; change no "
            "other file.",
            stage=_NO_STAGE,
        ),
        transfers=("the story file", "the failure: phase, signal and message"),
        task="Analyse why story {id}: {title} did not succeed, and recommend Retry, Skip or "
        "Escalate.",
    ),
    Phase(
        name="uat",
        title="UAT plan",
        scope="epic",
        required=False,
        blocking=False,
        apply_policy=ApplyPolicy(
            allow_apply=True,
            requires_validation=False,
            writes="Write new files only: the UAT plan. Change no existing file.",
            stage=_NO_STAGE,
        ),
        transfers=("every story file of the epic",),
        task="Write the UAT plan for {epic_label}.",
    ),
    Phase(
        name="retro",
        title="Retrospective",
        scope="epic",
        required=False,
        blocking=False,
        apply_policy=ApplyPolicy(
            allow_apply=True,
            requires_validation=False,
            writes="Write new files only: the retrospective and the handoff. Change no existing "
            "file.",
            stage=_NO_STAGE,
        ),
        transfers=("every story file of the epic (read-only)",),
        task="Run the retrospective of {epic_label}.",
    ),
)
"""The six phases, in flow order."""

PHASE_NAMES: tuple[PhaseName, ...] = tuple(phase.name for phase in PHASES)
_BY_NAME: dict[str, Phase] = {phase.name: phase for phase in PHASES}


def get_phase(name: str) -> Phase:
    """The phase called ``name``.

    Raises:
        UsageError: no such phase.
    """
    phase = _BY_NAME.get(name)
    if phase is None:
        raise UsageError(f"unknown phase '{name}' (one of: {', '.join(PHASE_NAMES)})")
    return phase


def signal_specs(phase: str | None = None) -> tuple[SignalSpec, ...]:
    """The signal specs of one phase, or of all phases when ``phase`` is None."""
    if phase is None:
        return SIGNAL_SPECS
    return get_phase(phase).signals


def uat_path(epic_id: str) -> str:
    """Where the UAT phase writes its plan (seed 002)."""
    return f"docs/uat/epic-{epic_id}-uat.md"


def retro_paths(
    epic_id: str,
    retro: str = "docs/sprints/epic-{id}-retro.md",
    handoff: str = "docs/handoffs/epic-{id}-handoff.md",
) -> tuple[str, str]:
    """Where the retro phase writes its retrospective and handoff: seed 002's paths by
    default, or ``[paths] retro`` / ``handoff`` with ``{id}`` the epic."""
    return retro.replace("{id}", epic_id), handoff.replace("{id}", epic_id)
