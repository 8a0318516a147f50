"""The parts :func:`~promptdeck.core.prompt.compose_prompt` gathers for one phase.

The phase's injection (a story's own, or every story file of the epic), the transfers
(seed 002), the party variant's note, the retro's epic section and summaries (Layer-5), and
the user message.
"""

from __future__ import annotations

from collections.abc import Sequence

from .config import Config
from .injection import (
    Emit,
    Injection,
    Selection,
    build_injection,
    build_story_injection,
    source_project_context,
)
from .layer_templates import TemplateSet, render
from .layer_values import epic_label
from .party import Party
from .phases import Phase, retro_paths, uat_path
from .prompt_layers import JOINER
from .prompt_request import FailureInfo
from .records import RunInfo
from .retro_context import RetroPlan, epic_section, execution_summary
from .stories import Story, StoryCatalog
from .tokens import TokenCounter
from .workspace import Workspace


def epic_stories(catalog: StoryCatalog, story: Story) -> tuple[Story, ...]:
    """The stories of ``story``'s epic (at least ``story`` itself)."""
    return catalog.in_group(story.group) or (story,)


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
    """One injection of every story key and story file of ``epic``."""
    keys = tuple(s.id for s in epic if s.source == "bmad")
    nested = tuple(k for s in epic for k in s.nested_keys if k not in {m.key for m in epic})
    files: list[str] = []
    for member in epic:
        for name in (member.path, *member.files):
            if name and name not in files:
                files.append(name)
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
        counter=counter,
        count_tokens=count_tokens,
        scan_secrets=scan_secrets,
        emit=emit,
    )


def transfers_text(
    phase: Phase,
    story: Story,
    epic: tuple[Story, ...],
    failure: FailureInfo | None,
    templates: TemplateSet,
    config: Config,
    summarised: tuple[str, ...] = (),
    injected: frozenset[str] = frozenset(),
) -> str:
    """The phase's transfers (seed 002), from its template, for Layer-5."""
    retro, handoff = retro_paths(story.group, config.paths_retro, config.paths_handoff)
    record = story.record_path
    values = {
        "record_path": record or "(no story file yet)",
        "record_state": "is in `<file_injections>` below"
        if record in injected
        else "does not exist yet: create it when you first append to it",
        "story_id": story.id,
        "story_title": story.title,
        "story_path": story.path or "(no story file yet)",
        "epic_id": story.group,
        "epic_title": story.group_title or story.group,
        "story_count": str(len(epic)),
        "uat_path": uat_path(story.group),
        "retro_path": retro,
        "handoff_path": handoff,
        "summarised_note": (
            f" — except those of {', '.join(summarised)}, summarised above" if summarised else ""
        ),
        "failure_info": failure.render()
        if failure is not None
        else (
            "No failure information was given with this request. Read the story file's "
            "latest records to find which phase failed, the signal it printed and why."
        ),
    }
    name = phase.transfers_template
    if story.source == "openspec" and phase.scope == "story":
        # An OpenSpec story's records live in its own record file, not in a story file.
        name = name.replace(".md", "-openspec.md")
    return render(templates.get(name), values)


def variant_note(phase: Phase, party: Party | None, templates: TemplateSet) -> str:
    """Layer-5's note that this is the party variant (empty for the standard one)."""
    if party is None:
        return ""
    values = {
        "variant_title": f"Party {phase.title.lower()}",
        "phase": phase.name,
        "participants": party.participants,
        "persona_sources": ", ".join(party.sources),
    }
    return render(templates.get("transfers-party.md"), values) + JOINER


def retro_section(
    workspace: Workspace,
    story: Story,
    epic: tuple[Story, ...],
    runs: Sequence[RunInfo],
    plan: RetroPlan,
    templates: TemplateSet,
    warnings: list[str],
) -> str:
    """The retro's epic section, execution summary and story summaries (Layer-5)."""
    section = epic_section(workspace, story)
    if section is None:
        where = workspace.config.paths_planning
        warnings.append(f"retro: no section for epic {story.group} in the epics files of {where}")
        section_text = (
            f"No section for epic {story.group} was found in the planning epics files "
            f"(`{where}`). Work from the stories below."
        )
    elif section.whole_file and section.source in {f.path for f in plan.injection.included()}:
        # Each fact once: an OpenSpec change's proposal is already injected with its files.
        section_text = f"It is `{section.source}`, in `<file_injections>` below."
    else:
        section_text = f"From `{section.source}`:\n\n{section.text}"
    values = {
        "epic_section": section_text,
        "execution_summary": execution_summary(epic, runs).render(),
        "summaries_section": "",
    }
    if plan.summarised:
        warn = workspace.config.injection_warn_bytes
        warnings.append(
            f"retro: the story files of {', '.join(plan.summarised)} are summarised, not "
            f"injected whole: all {len(epic)} story files together are {plan.full_bytes:,} "
            f"bytes, over the {warn:,}-byte warning line"
        )
        values["summaries_section"] = render(
            templates.get("retro-summaries.md"),
            {
                "summarised_list": ", ".join(plan.summarised),
                "story_count": str(len(epic)),
                "warn_line": f"{warn:,}-byte",
                "summaries": plan.summaries,
            },
        )
    return render(templates.get("retro-context.md"), values)


def user_message(phase: Phase, story: Story) -> str:
    """The user turn: the phase's task for ``story``."""
    return phase.task.format(
        id=story.id, title=story.title, epic_label=epic_label(story.group, story.group_title)
    )
