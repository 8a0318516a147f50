"""What the run confirmation shows, prepared off the UI thread: the prompt composed once more
(with the secret scan), the run folder and launch written, the plan described by core, and
the injection's events as notices.

No widget here: the run control calls :func:`prepare_confirmation` from a thread worker and
shows the result; the tests call it directly.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.project import ImageFile
from promptdeck.core.prompt import PromptRequest
from promptdeck.core.stories import StoryCatalog

from ..context import DeckContext

if TYPE_CHECKING:
    from promptdeck.core.run import PlannedRun, RunPlan


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
    why: str = "",
) -> Confirmation:
    """Compose ``request``, write its run folder and build what the confirmation shows
    (``why``: the flow's reason for the phase, when the flow chose it).

    What the confirmation shows is what starts: the argv is the real launch of the real run
    folder (with machine-specific parts named instead in stable mode).

    Raises:
        PromptdeckError: the compose or the plan failed (the message says why).
    """
    from promptdeck.core.prompt import compose_prompt
    from promptdeck.core.run import describe_plan, plan_run

    workspace = deck.workspace
    events: list[tuple[str, dict[str, Any]]] = []
    prompt = compose_prompt(
        workspace,
        catalog,
        request,
        counter=deck.counter,
        emit=lambda name, payload: events.append((name, payload)),
    )
    planned = plan_run(workspace, prompt, agent=deck.agent, images=images)
    plan = describe_plan(workspace, planned, agent=deck.agent, images=images, why=why)
    if deck.stable and planned.prepared is not None:
        # Snapshots and screencasts: the folder and interpreter differ on every machine.
        argv = stable_argv(
            plan.argv,
            {
                str(planned.prepared.record.dir): "<run-folder>",
                str(workspace.root): "<workspace>",
                sys.executable: "python",
            },
        )
        plan = replace(plan, argv=argv, run_folder="<run-folder>")
    notices = () if plan.blocked else tuple(injection_notices(events))
    return Confirmation(plan, planned, notices)


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
