"""The injection of one phase (seed 000): a story's own, or every story file of its epic.

The prompt's injection gatherer: :func:`phase_injection` picks the story's or the epic's
injection and :func:`epic_injection` builds the one of a whole epic (UAT and retro); both
build through :mod:`.builder`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..phases.table import Phase
from ..project.workspace import Workspace
from ..stories.model import Story
from ..tokens.counter import TokenCounter
from .builder import build_injection, build_story_injection, source_project_context
from .model import Emit, Injection, Selection
from .plan_rows import story_plan_rows

__all__ = ["epic_injection", "phase_injection"]


def phase_injection(
    workspace: Workspace,
    story: Story,
    phase: Phase,
    epic: tuple[Story, ...],
    selection: Selection,
    counter: TokenCounter,
    count_tokens: bool,
    scan_secrets: bool,
    emit: Emit | None = None,
) -> Injection:
    """The injection of one phase: the story's own, or (epic scope) every story file of the epic."""
    if phase.scope == "story":
        return build_story_injection(
            workspace,
            story,
            selection,
            command_name=phase.name,
            counter=counter,
            count_tokens=count_tokens,
            scan_secrets=scan_secrets,
            emit=emit,
        )
    return epic_injection(
        workspace, phase, epic, selection, counter, count_tokens, scan_secrets, emit
    )


def epic_injection(
    workspace: Workspace,
    phase: Phase,
    epic: Sequence[Story],
    selection: Selection,
    counter: TokenCounter,
    count_tokens: bool,
    scan_secrets: bool = True,
    emit: Emit | None = None,
) -> Injection:
    """One injection of every story key and story file of ``epic``, each story file's
    companions as rows of their own (a v4 project's always-load files are the dev agent's,
    for one story: not here)."""
    keys = tuple(s.id for s in epic if s.source == "bmad")
    nested = tuple(k for s in epic for k in s.nested_keys if k not in {m.key for m in epic})
    files: list[str] = []
    for member in epic:
        for name in (member.path, *member.files):
            if name and name not in files:
                files.append(name)
    rows = tuple(
        row
        for member in epic
        for row in story_plan_rows(member, selection, workspace.config, always_load=False)
    )
    return build_injection(
        workspace,
        phase.name,
        keys,
        include_project_context=selection.project_context,
        include_discovery=selection.discovery,
        include_tech_spec=selection.tech_spec,
        additional_files=selection.additional_files,
        story_files=tuple(files),
        project_context=source_project_context(workspace, epic[0]) if epic else None,
        nested_keys=nested,
        plan_rows=rows,
        counter=counter,
        count_tokens=count_tokens,
        scan_secrets=scan_secrets,
        emit=emit,
        excluded_files=selection.excluded,
        included_files=selection.included,
    )
