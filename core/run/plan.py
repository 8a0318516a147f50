"""The plan of a run: the run folder, prompt files and launch a confirmation shows, which are
then started as they are, so the argv a person approved is the argv that runs.

A plan that is not started is discarded: its folder holds no ``meta.json`` yet, so it was
never listed as a run, and it is removed.

What the confirmation says is decided here, once: :func:`describe_plan` gathers its fields
(:class:`RunPlan`) and :func:`confirmation_blocks` words them, block by block, as plain text.
The app's confirmation lays the blocks out and adds its buttons; ``promptdeck run --dry-run``
prints them. Neither face words a line of its own.
"""

from __future__ import annotations

import os
import shlex
import shutil
from typing import Any, Literal

from ..agent_names import agent_label
from ..capture.session import installed_version
from ..cost.client_model import ResolvedModel, resolve_model
from ..cost.prediction import PhaseCost, cost_line
from ..cost.relation import run_prediction
from ..fit.advice import SizeOption, size_options
from ..flight.forecast import PhaseForecast, phase_forecast
from ..guard.scope import WriteScope
from ..injection.choices import LEFT_OUT_REASON, TAKEN_IN_REASON
from ..lean_dataclass import dataclass
from ..project.images import ImageFile
from ..project.trust import config_trust
from ..project.workspace import Workspace
from ..prompt.budget import check_budget
from ..prompt.request import ComposedPrompt
from ..records.reader import next_attempt
from ..terminal import printable_line
from ..units import human_bytes, human_tokens
from .prepare import PreparedRun, prepare_run


@dataclass(frozen=True)
class PlannedRun:
    """A phase run ready to start.

    Attributes:
        prompt: the composed prompt it sends.
        attempt: the attempt number it runs as.
        prepared: its run folder and launch; None when the injection is over the error line
            (the run cannot start).
    """

    prompt: ComposedPrompt
    attempt: int
    prepared: PreparedRun | None

    @property
    def argv(self) -> tuple[str, ...]:
        """The exact argv the run will launch (empty when it cannot start)."""
        return tuple(self.prepared.spec.argv) if self.prepared is not None else ()

    @property
    def blocked(self) -> bool:
        """True when the injection is over the error line."""
        return self.prepared is None


def plan_run(
    workspace: Workspace,
    prompt: ComposedPrompt,
    *,
    agent: str | None = None,
    attempt: int | None = None,
    images: tuple[ImageFile, ...] = (),
    replay_script: str | None = None,
    dry_run: bool = False,
) -> PlannedRun:
    """Write the run folder and build the launch of ``prompt`` without starting it.

    Args:
        attempt: the attempt number (default: counted from the records, as ``start_run`` does).
        images: checked images sent with the user message (``--image``).
        replay_script: the replay agent's outcomes (``--replay-script``).
        dry_run: write the prompt files to a fresh temporary folder outside the project
            (never listed as a run) rather than to a new run folder.

    Raises:
        UsageError: an unknown agent or an unusable command template.
    """
    number = attempt or next_attempt(workspace.root, prompt.story.id, prompt.request.phase)
    if prompt.injection.level == "error":
        return PlannedRun(prompt, number, None)
    prepared = prepare_run(
        workspace,
        prompt,
        agent=agent,
        attempt=number,
        images=images,
        replay_script=replay_script,
        dry_run=dry_run,
    )
    return PlannedRun(prompt, number, prepared)


def discard_plan(plan: PlannedRun) -> None:
    """Remove the folder of a plan that was not started (a started run keeps its record)."""
    prepared = plan.prepared
    if prepared is None:
        return
    folder = prepared.record.dir
    if (folder / "meta.json").exists():
        return
    shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class RunPlan:
    """Everything a run's confirmation shows; all of it from core.

    Attributes:
        story_id: the story.
        phase: the phase to run.
        mode: create or optimize.
        agent: the backend as named on screen (``replay (simulation)``).
        argv: the exact argv the run will launch (empty when it cannot start).
        system_bytes: bytes of the system prompt.
        system_tokens: its tokens, None when not counted yet.
        user_bytes: bytes of the user message.
        injection_bytes: the injection size the thresholds compare.
        level: ``ok``, ``warning`` or ``error``.
        error_bytes: the error line.
        largest: the largest injected files (path, bytes).
        options: what would bring an oversized injection under the line.
        notes: anything else worth saying (dirty files, a missing binary…).
        variant: ``standard`` or ``party``.
        budget: the phase's token budget against the prompt, or "" when none is set.
        over_budget: why the prompt is refused for its budget, or "" when within it.
        secrets: the secret scan's findings, ``path:line: kind`` (never the secret itself).
        untrusted: the settings of the project's untrusted config that choose what this run
            starts, ``key = value`` (see :mod:`~promptdeck.core.project.trust`).
        images: the images sent with the user message, described (``--image``).
        choices: the files left out or taken in by the user's per-file choices, with why.
        attempt: the attempt number the run is recorded as.
        run_folder: the run's folder, relative to the workspace (a dry run's temporary one,
            outside it, whole).
        cost: the predicted cost of the run's prompt (see
        :mod:`~promptdeck.core.cost.prediction`);
            None when not predicted.
        model: the model the run will use and where that came from (see
            :mod:`~promptdeck.core.cost.client_model`); None when not resolved.
        why: why this phase is the one to run when the flow chose it (``n``, ``run --auto``),
            e.g. ``status 'review' (sprint-status.yaml:12): the work is implemented``; empty
            when the user named the phase.
        scope: what the agent may not change in the plan (checked and put back after it
            ends); None when the run cannot start.
        forecast: the whole phase's cost, requests and peak context from this project's
            finished real runs of the phase on this model (p50/p90 with n), or the first
            request's estimate alone, labelled so (see :mod:`~promptdeck.core.flight.forecast`);
            None when not forecast.
    """

    story_id: str
    phase: str
    mode: str
    agent: str
    argv: tuple[str, ...]
    system_bytes: int
    system_tokens: int | None
    user_bytes: int
    injection_bytes: int
    level: str
    error_bytes: int
    largest: tuple[tuple[str, int], ...] = ()
    options: tuple[SizeOption, ...] = ()
    notes: tuple[str, ...] = ()
    variant: str = "standard"
    budget: str = ""
    over_budget: str = ""
    secrets: tuple[str, ...] = ()
    untrusted: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    attempt: int = 1
    run_folder: str = ""
    cost: PhaseCost | None = None
    choices: tuple[str, ...] = ()
    why: str = ""
    scope: WriteScope | None = None
    model: ResolvedModel | None = None
    forecast: PhaseForecast | None = None

    @property
    def blocked(self) -> bool:
        """True when the run must not start (over the error line or the token budget)."""
        return self.level == "error" or bool(self.over_budget)

    def to_dict(self) -> dict[str, Any]:
        """The plan's fields as JSON (``run --dry-run --json``), ``blocked`` with them."""
        return {
            "story": self.story_id,
            "phase": self.phase,
            "mode": self.mode,
            "variant": self.variant,
            "attempt": self.attempt,
            "why": self.why or None,
            "agent": self.agent,
            "argv": list(self.argv),
            "run_folder": self.run_folder or None,
            "system_bytes": self.system_bytes,
            "system_tokens": self.system_tokens,
            "user_bytes": self.user_bytes,
            "injection_bytes": self.injection_bytes,
            "level": self.level,
            "error_bytes": self.error_bytes,
            "largest": [{"path": path, "bytes": size} for path, size in self.largest],
            "options": [
                {
                    "action": option.action,
                    "saving": option.saving,
                    "size_after": option.size_after,
                    "fits": option.fits,
                    "paths": list(option.paths),
                    "proof": option.proof,
                }
                for option in self.options
            ],
            "budget": self.budget or None,
            "over_budget": self.over_budget or None,
            "secrets": list(self.secrets),
            "untrusted": list(self.untrusted),
            "images": list(self.images),
            "choices": list(self.choices),
            "notes": list(self.notes),
            "cost": None if self.cost is None else self.cost.to_dict(),
            "model": None if self.model is None else self.model.to_dict(),
            "scope": None if self.scope is None else self.scope.to_dict(),
            "forecast": None if self.forecast is None else self.forecast.to_dict(),
            "blocked": self.blocked,
        }


def describe_image(image: ImageFile) -> str:
    """``docs/a.png (image/png, 1.2 KiB)``: an image as the confirmation lists it."""
    return f"{image.path} ({image.media_type}, {human_bytes(image.bytes)})"


CLIENT_VERSION_TIMEOUT = 5.0
"""How long the client's ``--version`` may take when its default model is needed."""


def run_model(workspace: Workspace, agent: str) -> ResolvedModel:
    """The model a run of ``agent`` will use (the client's ``--version`` is asked only when
    nothing else names the model)."""
    return resolve_model(
        workspace,
        agent,
        version=lambda: installed_version(
            workspace.config, agent, timeout=CLIENT_VERSION_TIMEOUT, root=workspace.root
        ),
    )


def _program_notes(argv: tuple[str, ...]) -> tuple[str, ...]:
    """A note when the program is not found: argv[0] is then not the absolute path that would
    run, because there is none (only absolute PATH entries outside the project are searched)."""
    if not argv or os.path.isabs(argv[0]):
        return ()
    return (
        f"{printable_line(argv[0])}: not found on an absolute PATH entry outside the project "
        "(relative entries such as ./bin are never searched); the run would fail to start",
    )


def describe_plan(
    workspace: Workspace,
    planned: PlannedRun,
    *,
    agent: str,
    images: tuple[ImageFile, ...] = (),
    why: str = "",
) -> RunPlan:
    """What the confirmation of ``planned`` shows.

    Over the error line, this builds the injection again without each optional inclusion (see
    :func:`~promptdeck.core.fit.advice.size_options`): blocking, call it off the UI thread.
    The files the user left out or took in by hand are listed with why (``choices``).

    Args:
        agent: the backend's name (shown with its simulation mark).
        images: the images the run sends.
        why: why the flow chose this phase (its suggestion's reason), when it did.
    """
    prompt = planned.prompt
    request = prompt.request
    injection = prompt.injection
    options: tuple[SizeOption, ...] = ()
    if injection.level == "error":
        options = tuple(size_options(workspace, prompt))
    budget = check_budget(prompt, workspace.config)
    trust = config_trust(workspace, agent)
    folder = ""
    launch_warnings = planned.prepared.spec.warnings if planned.prepared is not None else ()
    if planned.prepared is not None:
        run_dir = planned.prepared.record.dir
        # A dry run's folder is a temporary one outside the project: named whole.
        folder = workspace.relative(run_dir) if workspace.contains(run_dir) else str(run_dir)
    model = run_model(workspace, agent)
    cost = run_prediction(workspace, prompt, model.model, model_source=model.source)[0]
    forecast = phase_forecast(
        workspace.root.resolve(),
        request.phase,
        model.model,
        cost.dollars if cost is not None else None,
    )
    return RunPlan(
        story_id=prompt.story.id,
        phase=request.phase,
        mode=request.mode,
        agent=agent_label(agent),
        argv=planned.argv,
        system_bytes=prompt.system_meter.bytes,
        system_tokens=prompt.system_meter.tokens,
        user_bytes=prompt.user_meter.bytes,
        injection_bytes=injection.size_bytes,
        level=injection.level,
        error_bytes=injection.error_bytes,
        largest=tuple(injection.largest()),
        options=options,
        notes=(*prompt.warnings, *launch_warnings, *_program_notes(planned.argv)),
        attempt=planned.attempt,
        run_folder=folder,
        variant=prompt.variant,
        budget=budget.describe() if budget.budget else "",
        over_budget=budget.refusal() if budget.over else "",
        secrets=tuple(str(finding) for finding in injection.secrets),
        untrusted=trust.settings if trust.needed else (),
        images=tuple(describe_image(image) for image in images),
        cost=cost,
        model=model,
        choices=file_choice_lines(prompt),
        why=why,
        scope=planned.prepared.scope if planned.prepared is not None else None,
        forecast=forecast,
    )


def file_choice_lines(prompt: ComposedPrompt) -> tuple[str, ...]:
    """``left out by you: a.md (3.3 KiB)``: each file the user's choices moved, and why."""
    lines = []
    for item in prompt.injection.files:
        if item.reason in (LEFT_OUT_REASON, TAKEN_IN_REASON):
            lines.append(f"{item.reason}: {item.path} ({human_bytes(item.bytes)})")
    if prompt.rules is not None and prompt.rules.left_out:
        lines.append(f"{LEFT_OUT_REASON}: Layer-0B, the workspace rules ({prompt.rules.path})")
    return tuple(lines)


def refusal_lines(plan: RunPlan) -> list[str]:
    """Why a blocked plan cannot run, and, over the error line, what would bring it under."""
    if plan.level != "error":
        return [
            f"Cannot run: {plan.over_budget}.",
            "Leave files out of the injection, or raise the budget in .promptdeck/config.toml.",
        ]
    over = plan.injection_bytes - plan.error_bytes
    lines = [
        f"Cannot run: the injection is {human_bytes(plan.injection_bytes)} "
        f"({plan.injection_bytes:,} bytes), {human_bytes(over)} over the "
        f"{human_bytes(plan.error_bytes)} error line.",
    ]
    if plan.largest:
        top = ", ".join(
            f"{printable_line(path)} ({human_bytes(size)})" for path, size in plan.largest
        )
        lines.append(f"Largest files: {top}.")
    if plan.options:
        lines.append("What would bring it under (the fewest files to leave out):")
        for option in plan.options:
            lines.append(f"  • {printable_line(option.describe())}")
            if option.proof:
                lines.append(f"    {printable_line(option.proof)}")
    else:
        lines.append(
            "  • no set of files it may leave out brings it under: the story's own files are "
            "too large; trim them, or raise [injection] error_bytes in .promptdeck/config.toml"
        )
    return lines


BlockKind = Literal[
    "title",
    "sizes",
    "why",
    "cost",
    "budget",
    "images",
    "choices",
    "notes",
    "trust",
    "secrets",
    "scope",
    "refusal",
    "command",
    "argv",
]
"""What a block of the confirmation says; the app places and colours each kind."""


@dataclass(frozen=True)
class ConfirmationBlock:
    """One block of a run's confirmation, as plain text safe for a terminal.

    Attributes:
        kind: what it says.
        lines: its lines. The ``argv`` block is one line, the shell-quoted argv (the app
            wraps the same words to its width).
        strong: for the title, its parts in order, each with True when shown in bold; their
            text joined is ``lines[0]``.
    """

    kind: BlockKind
    lines: tuple[str, ...]
    strong: tuple[tuple[str, bool], ...] = ()

    @property
    def text(self) -> str:
        """The lines joined by newlines."""
        return "\n".join(self.lines)


def _title(plan: RunPlan) -> ConfirmationBlock:
    parts = (
        ("Run ", True),
        (plan.phase, True),
        (" for story ", False),
        (printable_line(plan.story_id), True),
        (f" ({plan.mode}", False),
        (", party variant" if plan.variant == "party" else "", False),
        (f", attempt {plan.attempt}) with the ", False),
        (printable_line(plan.agent), True),
        (" agent", False),
    )
    return ConfirmationBlock("title", ("".join(text for text, _ in parts),), parts)


def _cost_lines(plan: RunPlan) -> tuple[str, ...]:
    """The first request's predicted cost, then the whole phase's forecast: its p50/p90 with n
    from recorded runs, or, with none, the first request's estimate labelled as all there is."""
    lines = []
    if plan.cost is not None:
        lines.append(cost_line(plan.cost, plan.model))
    forecast = plan.forecast
    # With no history and no priced first request, the forecast would say nothing new.
    if forecast is not None and (forecast.n or forecast.first_request is not None):
        lines.append(printable_line(forecast.describe()))
    return tuple(lines)


def confirmation_blocks(plan: RunPlan) -> tuple[ConfirmationBlock, ...]:
    """The confirmation of ``plan``, block by block, in the order it reads.

    Always a title and the sizes; then why the flow chose the phase, the predicted cost, the
    budget, images and notes when there are any; the untrusted config's choices and the secret
    scan's findings when the plan could start; and last either why it cannot start (with what
    would bring it under) or the command that will run.
    """
    blocks = [
        _title(plan),
        ConfirmationBlock(
            "sizes",
            (
                f"system {human_bytes(plan.system_bytes)} · "
                f"{human_tokens(plan.system_tokens)} tok · user "
                f"{human_bytes(plan.user_bytes)} · injection "
                f"{human_bytes(plan.injection_bytes)} ({plan.level})",
            ),
        ),
    ]
    if plan.why:
        blocks.append(
            ConfirmationBlock("why", (printable_line(f"next: {plan.phase} — {plan.why}"),))
        )
    cost = _cost_lines(plan)
    if cost:
        blocks.append(ConfirmationBlock("cost", cost))
    if plan.budget:
        blocks.append(ConfirmationBlock("budget", (printable_line(plan.budget),)))
    if plan.images:
        shown = tuple(f"  {printable_line(image)}" for image in plan.images)
        blocks.append(ConfirmationBlock("images", ("images:", *shown)))
    if plan.choices:
        shown = tuple(f"  {printable_line(choice)}" for choice in plan.choices)
        blocks.append(ConfirmationBlock("choices", ("your file choices:", *shown)))
    if plan.notes:
        blocks.append(ConfirmationBlock("notes", tuple(printable_line(n) for n in plan.notes)))
    if plan.untrusted and not plan.blocked:
        lines = ["⚠ The project's .promptdeck/config.toml chooses what this run starts:"]
        lines.extend(f"  • {printable_line(setting)}" for setting in plan.untrusted)
        lines.append(
            "Read it: start twice to trust this version of the file (or `promptdeck trust`)."
        )
        blocks.append(ConfirmationBlock("trust", tuple(lines)))
    if plan.secrets and not plan.blocked:
        lines = [f"⚠ The secret scan flagged {len(plan.secrets)} likely secret(s):"]
        lines.extend(f"  • {printable_line(finding)}" for finding in plan.secrets)
        lines.append("They would be sent to the agent. Start twice to send them anyway.")
        blocks.append(ConfirmationBlock("secrets", tuple(lines)))
    if plan.scope is not None and not plan.blocked:
        blocks.append(ConfirmationBlock("scope", plan.scope.lines()))
    if plan.blocked:
        blocks.append(ConfirmationBlock("refusal", tuple(refusal_lines(plan))))
    else:
        where = f" (run folder {printable_line(plan.run_folder)})" if plan.run_folder else ""
        blocks.append(ConfirmationBlock("command", (f"The command that will run{where}:",)))
        blocks.append(ConfirmationBlock("argv", (printable_line(shlex.join(plan.argv)),)))
    return tuple(blocks)
