"""A run before it starts: its folder, its exact prompt files and its launch, built but not
started.

:func:`prepare_run` is what a confirmation shows (the argv shown is the argv run) and what
``run --dry-run`` prints; :func:`promptdeck.core.run.runner.start_run` starts a prepared run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents.base import Agent, LaunchRequest, LaunchSpec
from ..agents.registry import get_agent, resolve_agent_name
from ..guard.scope import WriteScope, write_scope
from ..lean_dataclass import dataclass
from ..processes import resolve_program
from ..project.workspace import Workspace
from ..records.writer import RunRecord

if TYPE_CHECKING:
    from ..project.images import ImageFile
    from ..prompt.request import ComposedPrompt


@dataclass(frozen=True)
class PreparedRun:
    """A run folder with its prompt files written, and the launch built (not started)."""

    record: RunRecord
    agent: Agent
    spec: LaunchSpec
    request: LaunchRequest
    system_path: Path
    user_path: Path
    scope: WriteScope = field(default_factory=WriteScope)
    """What the agent may not change in the plan (checked and put back after it ends)."""


def check_size(prompt: ComposedPrompt) -> None:
    """Refuse a prompt whose injection is over the error line.

    Raises:
        InjectionTooLarge: over the size limit (exit 3).
    """
    injection = prompt.injection
    if injection.level == "error":
        raise injection.too_large()


_IMAGE_SUFFIX = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


def _confirmed_images(images: tuple[ImageFile, ...], root: Path, run_dir: Path) -> tuple[Path, ...]:
    """Each image's confirmed bytes, copied into the run folder: read again now (every phase
    of an ``--auto`` flow) and refused unless they are still what was confirmed, and what
    the agent reads is the copy — a file swapped after this check reaches no one.

    Raises:
        UsageError: an image changed since it was confirmed.
    """
    sent: list[Path] = []
    for number, image in enumerate(images, start=1):
        data = image.confirmed_bytes(root)
        copy = run_dir / f"image-{number}.{_IMAGE_SUFFIX.get(image.media_type, 'bin')}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with contextlib.suppress(FileNotFoundError):
            copy.unlink()  # a dry run's folder is reused
        with os.fdopen(os.open(copy, flags, 0o600), "wb") as handle:
            handle.write(data)
        sent.append(copy)
    return tuple(sent)


def with_resolved_program(spec: LaunchSpec, root: Path) -> LaunchSpec:
    """``spec`` with its program as the absolute path that will run (found only on absolute
    ``PATH`` entries outside the project), so the confirmation, ``--dry-run`` and ``meta.json``
    show it; unchanged when none is found (the start then fails: the supervisor resolves the
    same way and never lets the system search a relative entry)."""
    if not spec.argv:
        return spec
    program = resolve_program(spec.argv[0], root.resolve())
    if program is None:
        return spec
    return dataclasses.replace(spec, argv=(program, *spec.argv[1:]))


def prepare_run(
    workspace: Workspace,
    prompt: ComposedPrompt,
    *,
    agent: str | None = None,
    replay_script: str | None = None,
    dry_run: bool = False,
    attempt: int = 1,
    resume_session: str | None = None,
    turn: int = 0,
    user_text: str | None = None,
    images: tuple[ImageFile, ...] = (),
) -> PreparedRun:
    """Write the prompt files and build the launch, without starting anything.

    Args:
        user_text: send this user message instead of ``prompt.user`` (a chat turn).

    Raises:
        InjectionTooLarge: the injection is over the error line (exit 3).
        UsageError: an unknown agent, or an unusable ``command`` template.
    """
    check_size(prompt)
    backend = get_agent(
        resolve_agent_name(agent, workspace.config), workspace.config, replay_script=replay_script
    )
    story = prompt.story
    phase = prompt.request.phase
    if dry_run:
        record = RunRecord.dry_run()
    else:
        record = RunRecord.create(
            workspace.root, story.id, phase, stream_format=backend.stream_format
        )
    try:
        system_path, user_path = record.write_prompt(
            prompt.system, prompt.user if user_text is None else user_text
        )
    except BaseException:
        record.discard()
        raise
    try:
        sent_images = _confirmed_images(images, workspace.root, record.dir)
    except BaseException:
        record.discard()
        raise
    scope = write_scope(workspace, story, phase)
    request = LaunchRequest(
        run_dir=record.dir,
        root=workspace.root,
        story_id=story.id,
        phase=phase,
        # Where the prompt tells the agent to append its records (an OpenSpec story's own
        # records/group-<N>.md, not the change's shared tasks.md).
        story_path=story.record_path,
        epic=story.group,
        resume_session=resume_session,
        turn=turn,
        attempt=attempt,
        images=sent_images,
        protected_paths=scope.protected,
    )
    try:
        spec = backend.launch(request)
    except BaseException:
        record.discard()
        raise
    spec = with_resolved_program(spec, workspace.root)
    return PreparedRun(record, backend, spec, request, system_path, user_path, scope)
