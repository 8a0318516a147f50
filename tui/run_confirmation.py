"""What the run confirmation shows, prepared off the UI thread: the prompt composed once more
(with the secret scan), the run folder and launch written, the size advice and the budget,
and the injection's events as notices.

No widget here: the main screen calls :func:`prepare_confirmation` from a thread worker and
shows the result; the tests call it directly.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from promptdeck.core.agents.base import agent_label
from promptdeck.core.budget import check_budget
from promptdeck.core.images import ImageFile
from promptdeck.core.prompt import PromptRequest, compose_prompt
from promptdeck.core.run_plan import PlannedRun, plan_run
from promptdeck.core.stories import StoryCatalog

from .context import DeckContext
from .format import human_bytes
from .screens.confirm_run import RunPlan
from .size_advice import SizeOption, size_options


@dataclass(frozen=True)
class Confirmation:
    """A run ready to be asked about.

    Attributes:
        plan: what the confirmation screen shows.
        planned: the run folder and launch that start if the answer is yes (discarded if no).
        notices: the injection's events as (text, severity), to show while asking (none for a
            blocked plan: its refusal already says all of it).
    """

    plan: RunPlan
    planned: PlannedRun
    notices: tuple[tuple[str, str], ...]


def prepare_confirmation(
    deck: DeckContext,
    catalog: StoryCatalog | None,
    request: PromptRequest,
    images: tuple[ImageFile, ...] = (),
) -> Confirmation:
    """Compose ``request``, write its run folder and build what the confirmation shows.

    What the confirmation shows is what starts: the argv is the real launch of the real run
    folder (with machine-specific parts named instead in stable mode).

    Raises:
        PromptdeckError: the compose or the plan failed (the message says why).
    """
    workspace = deck.workspace
    events: list[tuple[str, dict[str, Any]]] = []
    prompt = compose_prompt(
        workspace,
        catalog,
        request,
        counter=deck.counter,
        emit=lambda name, payload: events.append((name, payload)),
    )
    injection = prompt.injection
    options: tuple[SizeOption, ...] = ()
    if injection.level == "error":
        options = tuple(size_options(workspace, prompt.story, request.selection, injection))
    planned = plan_run(workspace, prompt, agent=deck.agent, images=images)
    budget = check_budget(prompt, workspace.config)
    folder = ""
    argv = planned.argv
    if planned.prepared is not None:
        folder = workspace.relative(planned.prepared.record.dir)
        if deck.stable:
            # Snapshots and screencasts: the folder and interpreter differ on every machine.
            argv = stable_argv(
                argv,
                {
                    str(planned.prepared.record.dir): "<run-folder>",
                    str(workspace.root): "<workspace>",
                    sys.executable: "python",
                },
            )
            folder = "<run-folder>"
    plan = RunPlan(
        story_id=prompt.story.id,
        phase=request.phase,
        mode=request.mode,
        agent=agent_label(deck.agent),
        argv=argv,
        system_bytes=prompt.system_meter.bytes,
        system_tokens=prompt.system_meter.tokens,
        user_bytes=prompt.user_meter.bytes,
        injection_bytes=injection.size_bytes,
        level=injection.level,
        error_bytes=injection.error_bytes,
        largest=tuple(injection.largest()),
        options=options,
        notes=tuple(prompt.warnings),
        attempt=planned.attempt,
        run_folder=folder,
        variant=prompt.variant,
        budget=budget.describe() if budget.budget else "",
        over_budget=budget.refusal() if budget.over else "",
        secrets=tuple(str(finding) for finding in injection.secrets),
        images=tuple(describe_image(image) for image in images),
    )
    notices = () if plan.blocked else tuple(injection_notices(events))
    return Confirmation(plan, planned, notices)


def describe_image(image: ImageFile) -> str:
    """``shots/ui.png (image/png, 12.0 KiB)``: an attached image as the app names it."""
    return f"{image.path} ({image.media_type}, {human_bytes(image.bytes)})"


def injection_notices(events: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    """The injection's events (seed 000) as app notices: (text, severity)."""
    notices: list[tuple[str, str]] = []
    skipped = [p for name, p in events if name == "injection:skipped"]
    for name, payload in events:
        if name == "injection:warning":
            notices.append((f"injection: {payload.get('message', '')}", "warning"))
        elif name == "injection:empty":
            keys = ", ".join(payload.get("story_keys") or ())
            notices.append((f"injection: no file injected for {keys}", "warning"))
    if skipped:
        shown = "; ".join(
            f"{p.get('path')} ({p.get('reason') or p.get('status')})" for p in skipped
        )
        notices.append((f"injection: {len(skipped)} file(s) skipped: {shown}", "information"))
    return notices


def stable_argv(argv: tuple[str, ...], replacements: dict[str, str]) -> tuple[str, ...]:
    """``argv`` with machine-specific parts named instead (stable mode only)."""
    shown = []
    for word in argv:
        for old, new in replacements.items():
            word = word.replace(old, new)
        shown.append(word)
    return tuple(shown)
