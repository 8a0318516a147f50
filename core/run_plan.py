"""The plan of a run: the run folder, prompt files and launch a confirmation shows, which are
then started as they are, so the argv a person approved is the argv that runs.

A plan that is not started is discarded: its folder holds no ``meta.json`` yet, so it was
never listed as a run, and it is removed.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

from .images import ImageFile
from .prompt import ComposedPrompt
from .records import next_attempt
from .runner import PreparedRun, prepare_run
from .workspace import Workspace


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
) -> PlannedRun:
    """Write the run folder and build the launch of ``prompt`` without starting it.

    Args:
        attempt: the attempt number (default: counted from the records, as ``start_run`` does).
        images: checked images sent with the user message (``--image``).

    Raises:
        UsageError: an unknown agent or an unusable command template.
    """
    number = attempt or next_attempt(workspace.root, prompt.story.id, prompt.request.phase)
    if prompt.injection.level == "error":
        return PlannedRun(prompt, number, None)
    prepared = prepare_run(workspace, prompt, agent=agent, attempt=number, images=images)
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
