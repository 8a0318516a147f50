"""The parts :func:`~promptdeck.core.prompt.compose.compose_prompt` gathers in the prompt room.

The story's Layer-5 context (:func:`story_context`: the story prompt, a brief, or the epic's
stories with the retro's epic section and summaries), the transfers (seed 002), the party
variant's note, and the user message. The injection is gathered in
:mod:`promptdeck.core.injection.gather`, the layers in :mod:`promptdeck.core.layers.assembly`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..layers.model import JOINER
from ..layers.templates import TemplateSet, render
from ..layers.values import epic_label
from ..phases.table import Phase, retro_paths, uat_path
from ..project.config import Config
from ..project.workspace import Workspace
from ..stories.model import Story
from .learnings import learnings_path
from .party import Party
from .request import FailureInfo, PromptRequest
from .retro import RetroPlan, epic_section, execution_summary
from .story import epic_brief, read_learnings, story_brief, story_prompt

if TYPE_CHECKING:
    from ..records.reader import RunInfo


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


def story_context(
    workspace: Workspace,
    story: Story,
    phase: Phase,
    epic: tuple[Story, ...],
    request: PromptRequest,
    *,
    verify_commands: tuple[str, ...],
    retro: RetroPlan | None,
    runs: Sequence[RunInfo],
    injected: frozenset[str],
    templates: TemplateSet,
    warnings: list[str],
) -> str:
    """The story part of Layer-5: the epic's stories (with the retro's section), the full
    story prompt (dev), or a brief without the dev instructions (kickoff, review, failure).

    ``retro`` is the retro's plan (retro only), ``runs`` the epic's runs, ``injected`` the
    paths the injection holds. Warnings (missing learnings, no epic section) go to ``warnings``.
    """
    if phase.scope == "epic":
        text = epic_brief(story.group, story.group_title or story.group, epic, templates=templates)
        if retro is not None:
            text += JOINER + retro_section(workspace, story, epic, runs, retro, templates, warnings)
        return text
    if phase.name == "dev":
        learnings = read_learnings(workspace, learnings_path(workspace, story))
        if learnings.warning:
            warnings.append(learnings.warning)
        return story_prompt(
            story,
            verify_commands=verify_commands,
            learnings=learnings,
            retry_reason=request.retry_reason if request.mode == "optimize" else None,
            templates=templates,
            injected=injected,
        )
    return story_brief(story, templates=templates, injected=injected)
