"""What every face shows and every agent receives: one composed prompt for a story's phase.

:func:`compose_prompt` gathers the inputs — the story from the catalog, the bundled
instructions, the workspace rules, the story prompt (seed 003), the phase's transfers (seed 002)
and the file injection (seed 000) — and has the composer build the eight layers. The preview,
``promptdeck compose`` and the bytes an agent receives all come from one :class:`ComposedPrompt`.

Layer-5 (Context) holds, in this order: the story context (the full story prompt for dev; a
brief without the dev instructions for kickoff, review and failure; the epic's story list for
UAT and retro), the phase's transfers, and the ``<file_injections>`` XML. UAT and retro inject
every story file of the epic (all its story keys and files in one injection).

``compose_prompt`` never raises for an oversized injection: ``injection.level`` says so, and
the caller decides (``compose`` and ``inspect`` exit 3, the app refuses to run).

A compose is one pass down the house, one named gatherer per room: the story
(:func:`~promptdeck.core.plans.catalog.gather_story`), its injection
(:mod:`promptdeck.core.injection.gather`; a retro's through its retro plan), the story context
and the phase's transfers (:mod:`.parts`), and the layers, delivered and measured
(:func:`~promptdeck.core.layers.assembly.assemble_layers`). The request and the composed
prompt are :mod:`.request`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..injection.choices import chosen_selection
from ..injection.gather import epic_injection, phase_injection
from ..injection.model import Emit, Injection
from ..layers.assembly import assemble_layers
from ..layers.input import ComposeInput, WritePolicy
from ..layers.instructions import load_instructions
from ..layers.model import signature
from ..layers.rules import RulesFile, read_rules
from ..layers.templates import TemplateSet
from ..phases.table import Phase
from ..plans.catalog import gather_story
from ..project.workspace import Workspace
from ..stories.model import Story, StoryCatalog
from ..tokens.counter import TokenCounter, get_counter
from ..vocabulary import RULES_LAYER
from .notes import story_file_warnings
from .parts import story_context, transfers_text, user_message, variant_note
from .party import Party, check_variant, default_variant, party_for
from .request import ComposedPrompt, PromptRequest, check_request
from .retro import RetroPlan, plan_retro
from .verify import Verification, resolve_verification

if TYPE_CHECKING:
    from ..records.reader import RunInfo

__all__ = ["compose_prompt"]

FLUSH_SECONDS = 5.0
"""How often, at most, a compose writes its new counts to the shared cache."""


def _gather_injection(
    workspace: Workspace,
    story: Story,
    phase: Phase,
    epic: tuple[Story, ...],
    request: PromptRequest,
    runs: Sequence[RunInfo],
    counter: TokenCounter,
    *,
    count_tokens: bool,
    scan_secrets: bool,
    emit: Emit | None,
) -> tuple[Injection, RetroPlan | None]:
    """The phase's injection; a retro's is planned (whole or summarised) by its retro plan."""
    if phase.name != "retro":
        injection = phase_injection(
            workspace,
            story,
            phase,
            epic,
            request.selection,
            counter,
            count_tokens,
            scan_secrets,
            emit,
        )
        return injection, None

    def build(stories: Sequence[Story], counted: bool) -> Injection:
        return epic_injection(
            workspace, phase, stories, request.selection, counter, counted, scan_secrets, emit
        )

    retro = plan_retro(workspace, epic, runs, build, count_tokens=count_tokens)
    return retro.injection, retro


def compose_prompt(
    workspace: Workspace,
    catalog: StoryCatalog | None,
    request: PromptRequest,
    *,
    counter: TokenCounter | None = None,
    count_tokens: bool = True,
    scan_secrets: bool = True,
    emit: Emit | None = None,
) -> ComposedPrompt:
    """Compose the prompt for one phase of one story.

    Args:
        workspace: the workspace (its config, rules, learnings and template overrides).
        catalog: the stories; when None, only what the phase needs is loaded.
        request: the story, phase, mode, selection, retry reason and failure.
        counter: token counter (default: the process-wide one for the configured encoding).
        count_tokens: False leaves every token count None, for an instant byte-only preview.
        scan_secrets: False skips the secret scan of the injected files (the instant preview
            only; whatever is run or shown as final is scanned).
        emit: receives the injection's events (``injection:warning``, ``injection:empty``,
            ``injection:skipped``; seed 000).

    Raises:
        StoryNotFound: no story matches ``request.story_id``.
        UsageError: an unknown phase or mode, or a retry reason outside optimize mode.
        ComposeError: a required input or layer is missing, or a template is broken.
        AssetMissing: the bundled instructions are missing.
    """
    # One piece: the order of its steps is the order of the warnings shown, and each step
    # reads the story, phase, request and injection settled by the ones before it.
    phase = check_request(request)
    story, epic = gather_story(
        workspace, catalog, request.story_id, whole_epic=phase.scope == "epic"
    )
    config = workspace.config
    # The story's remembered file choices are part of what is composed: every face sees them.
    selection, choice_notes = chosen_selection(workspace.root, story.id, request.selection)
    request = replace(request, selection=selection)
    counter = counter or get_counter(config.tokens_encoding)
    layer_counter = counter if count_tokens else None
    templates = TemplateSet(workspace.root, config.paths_templates, config.read_max_bytes)
    warnings: list[str] = list(choice_notes)
    variant = request.variant or default_variant(config, phase.name)
    check_variant(phase.name, variant)
    party = party_for(workspace, phase.name) if variant == "party" else None

    instructions = load_instructions()
    rules, verification = _rules_and_verification(workspace, request, phase, warnings)
    warnings.extend(_status_warnings(story, phase))

    runs = _runs_for(workspace, phase)
    injection, retro = _gather_injection(
        workspace,
        story,
        phase,
        epic,
        request,
        runs,
        counter,
        count_tokens=count_tokens,
        scan_secrets=scan_secrets,
        emit=emit,
    )
    warnings.extend(_own_file_warnings(injection, request))
    summarised = retro.summarised if retro is not None else ()
    injected = frozenset(f.path for f in injection.files if f.status in ("included", "duplicate"))
    # What the agent will not see of the story itself is the most serious note: first.
    warnings[:0] = story_file_warnings(story, phase, injection, summarised, config)

    context = story_context(
        workspace,
        story,
        phase,
        epic,
        request,
        verify_commands=verification.commands,
        retro=retro,
        runs=runs,
        injected=injected,
        templates=templates,
        warnings=warnings,
    )
    warnings.extend(_request_warnings(request, phase))
    transfers = variant_note(phase, party, templates) + transfers_text(
        phase, story, epic, request.failure, templates, config, summarised, injected
    )

    compose_input = _layers_input(
        phase, story, request, verification.commands, variant, party, context, transfers, injection
    )
    assembled = assemble_layers(
        compose_input,
        user_message(phase, story),
        request.delivery or config.delivery,
        instructions=instructions,
        rules=rules,
        templates=templates,
        counter=layer_counter,
    )
    if layer_counter is not None:
        warnings.extend(_finish_counting(layer_counter, injection))
    return ComposedPrompt(
        story=story,
        request=request,
        layers=assembled.layers,
        system=assembled.system,
        user=assembled.user,
        messages=assembled.messages,
        injection=injection,
        signature=signature(assembled.layers),
        system_meter=assembled.system_meter,
        user_meter=assembled.user_meter,
        warnings=tuple(warnings),
        joiner=assembled.joiner,
        instructions=instructions,
        rules=rules,
        compose_input=compose_input,
        verification=verification,
        variant=variant,
        summarised=summarised,
        delivered=assembled.delivered,
    )


def _rules_and_verification(
    workspace: Workspace, request: PromptRequest, phase: Phase, warnings: list[str]
) -> tuple[RulesFile, Verification]:
    """The rules file (left out when the request says so) and the verification commands;
    their notes join ``warnings``."""
    rules = read_rules(workspace)
    if RULES_LAYER in request.selection.left_out_layers:
        rules = rules.leave_out()
    if rules.warning:
        warnings.append(rules.warning)
    verification = resolve_verification(workspace)
    if verification.note and phase.apply_policy.requires_validation:
        warnings.append(verification.note)
    return rules, verification


def _status_warnings(story: Story, phase: Phase) -> list[str]:
    """A kickoff or dev of a story whose status is unknown, or already done, says so."""
    if phase.name not in ("kickoff", "dev"):
        return []
    warnings: list[str] = []
    if not story.status_known:
        warnings.append(
            f"story {story.id} has the status '{story.status}', which promptdeck does not know"
            + (f" ({story.status_source})" if story.status_source else "")
            + ": check that the work is not already done"
        )
    if story.status == "done":
        where = (
            "its tasks are all ticked"
            if story.source == "openspec"
            else f"{story.status_source or 'its tracking'} says so"
        )
        warnings.append(
            f"story {story.id} is already done ({where}): a {phase.name} run would redo "
            "finished work"
        )
    return warnings


def _runs_for(workspace: Workspace, phase: Phase) -> Sequence[RunInfo]:
    """The project's runs, which only a retro reads."""
    if phase.name != "retro":
        return []
    from ..records.reader import list_runs  # only a retro reads the runs

    return list_runs(workspace.root)


def _own_file_warnings(injection: Injection, request: PromptRequest) -> list[str]:
    """The story's own files the request leaves out stay in, and say so."""
    return [
        f"{f.path} is the story's own file: it stays in (leaving it out is not offered)"
        for f in injection.files
        if f.own_story_file and f.path in request.selection.excluded
    ]


def _request_warnings(request: PromptRequest, phase: Phase) -> list[str]:
    """Parts of the request the phase does not use: a retry reason, a missing failure."""
    warnings: list[str] = []
    if request.retry_reason and request.retry_reason.strip() and phase.name != "dev":
        warnings.append(f"the retry reason is used by the dev phase only, not by {phase.name}")
    if phase.name == "failure" and request.failure is None:
        warnings.append("failure analysis without failure information (phase, signal, message)")
    return warnings


def _finish_counting(counter: TokenCounter, injection: Injection) -> list[str]:
    """The counter's warning unless the injection already gave it; the new counts are written
    to the shared cache."""
    warning = counter.warning
    notes = [warning] if warning and warning not in injection.warnings else []
    # New counts reach the shared cache soon, not only at exit: another promptdeck
    # process (inspect in a second terminal) finds what the app has just counted.
    counter.flush(at_most_every=FLUSH_SECONDS)
    return notes


def _layers_input(
    phase: Phase,
    story: Story,
    request: PromptRequest,
    verify_commands: tuple[str, ...],
    variant: str,
    party: Party | None,
    context: str,
    transfers: str,
    injection: Injection,
) -> ComposeInput:
    """The composer's input: the phase, the story's profile and Layer-5's three parts."""
    return ComposeInput(
        entrypoint=phase.name,
        target_type=phase.scope,
        mode=request.mode,
        domain_profile={
            "storyId": story.id,
            "storyTitle": story.title,
            "epicId": story.group,
            "epicTitle": story.group_title or story.group,
            "source": story.source,
            "recordPath": story.record_path or "",
            "verifyCommands": list(verify_commands),
            "variant": variant,
            **(
                {
                    "personas": party.render_personas(),
                    "participants": party.participants,
                    "voices": party.render_voices(),
                }
                if party is not None
                else {}
            ),
        },
        context_envelope={
            "story": context,
            "transfers": transfers,
            "fileInjections": injection.text,
        },
        write_policy=WritePolicy(
            allow_apply=phase.apply_policy.allow_apply,
            requires_validation=phase.apply_policy.requires_validation,
        ),
    )
