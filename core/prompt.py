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

The request and the composed prompt are :mod:`.prompt_request`'s (re-exported here); the
phase's injection, transfers and retro section are gathered by :mod:`.prompt_parts`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .catalog import load_catalog, load_story_catalog
from .compose_input import ComposeInput, WritePolicy
from .composer import compose_messages, compose_system_instruction
from .injection import Emit, Injection
from .instructions import load_instructions
from .layer_templates import TemplateSet
from .learnings import learnings_path
from .party import check_variant, default_variant, party_for
from .prompt_layers import JOINER, joiner_count, signature, system_pieces, system_text
from .prompt_parts import (
    epic_injection,
    epic_stories,
    phase_injection,
    retro_section,
    transfers_text,
    user_message,
    variant_note,
)
from .prompt_request import ComposedPrompt, FailureInfo, PromptRequest, check_request
from .records import list_runs
from .retro_context import RetroPlan, plan_retro
from .rules import read_rules
from .stories import Story, StoryCatalog
from .story_prompt import epic_brief, read_learnings, story_brief, story_prompt
from .tokens import Meter, TokenCounter, get_counter
from .verify import resolve_verification
from .workspace import Workspace

# The request and the composed prompt are re-exported: this module is where callers have
# always found them.
__all__ = [
    "ComposedPrompt",
    "FailureInfo",
    "PromptRequest",
    "compose_prompt",
]

FLUSH_SECONDS = 5.0
"""How often, at most, a compose writes its new counts to the shared cache."""


def _meter(text: str, counter: TokenCounter | None) -> Meter:
    data = len(text.encode("utf-8"))
    if counter is None:
        return Meter(data, None)
    return Meter(data, counter.count(text), counter.estimated)


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
    phase = check_request(request)
    if catalog is None:
        # An epic-scope phase needs every story of the epic; a story phase needs only its own.
        if phase.scope == "epic":
            catalog = load_catalog(workspace)
        else:
            catalog = load_story_catalog(workspace, request.story_id)
    story = catalog.find(request.story_id)
    config = workspace.config
    counter = counter or get_counter(config.tokens_encoding)
    layer_counter = counter if count_tokens else None
    templates = TemplateSet(workspace.root, config.paths_templates, config.read_max_bytes)
    epic = epic_stories(catalog, story) if phase.scope == "epic" else (story,)
    warnings: list[str] = []
    variant = request.variant or default_variant(config, phase.name)
    check_variant(phase.name, variant)
    party = party_for(workspace, phase.name) if variant == "party" else None

    instructions = load_instructions()
    rules = read_rules(workspace)
    if rules.warning:
        warnings.append(rules.warning)
    verification = resolve_verification(workspace)
    if verification.note and phase.apply_policy.requires_validation:
        warnings.append(verification.note)

    if not story.status_known and phase.name in ("kickoff", "dev"):
        warnings.append(
            f"story {story.id} has the status '{story.status}', which promptdeck does not know"
            + (f" ({story.status_source})" if story.status_source else "")
            + ": check that the work is not already done"
        )
    if story.status == "done" and phase.name in ("kickoff", "dev"):
        where = (
            "its tasks are all ticked"
            if story.source == "openspec"
            else f"{story.status_source or 'its tracking'} says so"
        )
        warnings.append(
            f"story {story.id} is already done ({where}): a {phase.name} run would redo "
            "finished work"
        )
    retro: RetroPlan | None = None
    runs = list_runs(workspace.root) if phase.name == "retro" else []
    if phase.name == "retro":

        def build(stories: Sequence[Story], counted: bool) -> Injection:
            return epic_injection(
                workspace, phase, stories, request.selection, counter, counted, scan_secrets, emit
            )

        retro = plan_retro(workspace, epic, runs, build, count_tokens=count_tokens)
        injection = retro.injection
    else:
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
    summarised = retro.summarised if retro is not None else ()
    injected = frozenset(f.path for f in injection.files if f.status in ("included", "duplicate"))
    if story.path is None and phase.scope == "story" and story.layout not in ("classic", "spec"):
        warnings.append(
            f"story {story.id} has no file of its own yet ({story.layout}): the agent gets its "
            "id, title and the files listed for it"
        )
    elif story.path is None and phase.scope == "story":
        warnings.append(
            f"story {story.id} has no story file (no {config.paths_artifacts.rstrip('/')}/"
            f"{story.key}-*.md, no file headed '# Story {story.id}:'): the agent gets its id "
            "and title only"
        )
    elif story.path is not None and story.id not in summarised and story.source == "bmad":
        shown = {f.path: f for f in injection.files}
        entry = shown.get(story.path)
        if entry is None or entry.status not in ("included", "duplicate"):
            status = entry.status if entry is not None else "not matched"
            warnings.append(
                f"story file {story.path} is not in the injection ({status}): the agent will "
                "not see it"
            )

    if phase.scope == "epic":
        context = epic_brief(
            story.group, story.group_title or story.group, epic, templates=templates
        )
        if retro is not None:
            context += JOINER + retro_section(
                workspace, story, epic, runs, retro, templates, warnings
            )
    elif phase.name == "dev":
        learnings = read_learnings(workspace, learnings_path(workspace, story))
        if learnings.warning:
            warnings.append(learnings.warning)
        context = story_prompt(
            story,
            verify_commands=verification.commands,
            learnings=learnings,
            retry_reason=request.retry_reason if request.mode == "optimize" else None,
            templates=templates,
            injected=injected,
        )
    else:
        context = story_brief(story, templates=templates, injected=injected)
    if request.retry_reason and request.retry_reason.strip() and phase.name != "dev":
        warnings.append(f"the retry reason is used by the dev phase only, not by {phase.name}")
    if phase.name == "failure" and request.failure is None:
        warnings.append("failure analysis without failure information (phase, signal, message)")

    compose_input = ComposeInput(
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
            "verifyCommands": list(verification.commands),
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
            "transfers": variant_note(phase, party, templates)
            + transfers_text(
                phase, story, epic, request.failure, templates, config, summarised, injected
            ),
            "fileInjections": injection.text,
        },
        write_policy=WritePolicy(
            allow_apply=phase.apply_policy.allow_apply,
            requires_validation=phase.apply_policy.requires_validation,
        ),
    )
    layers = compose_system_instruction(
        compose_input,
        instructions=instructions,
        rules=rules,
        templates=templates,
        counter=layer_counter,
    )
    user = user_message(phase, story)
    messages = compose_messages(input=compose_input, user_message=user, layers=layers)
    system = system_text(layers)
    # The layers' counts are reused: only the stretches around the joiners are encoded.
    system_meter = Meter(
        len(system.encode("utf-8")),
        None
        if layer_counter is None
        else layer_counter.count_joined(system_pieces(layers), system),
        layer_counter is not None and layer_counter.estimated,
    )
    joiner_bytes = joiner_count(layers) * len(JOINER.encode("utf-8"))
    joiner_tokens = (
        None
        if system_meter.tokens is None
        else system_meter.tokens - sum(layer.tokens or 0 for layer in layers)
    )
    if (
        layer_counter is not None
        and layer_counter.warning
        and layer_counter.warning not in (injection.warnings)
    ):
        warnings.append(layer_counter.warning)
    if layer_counter is not None:
        # New counts reach the shared cache soon, not only at exit: another promptdeck
        # process (inspect in a second terminal) finds what the app has just counted.
        layer_counter.flush(at_most_every=FLUSH_SECONDS)
    return ComposedPrompt(
        story=story,
        request=request,
        layers=tuple(layers),
        system=system,
        user=user,
        messages=tuple(messages),
        injection=injection,
        signature=signature(layers),
        system_meter=system_meter,
        user_meter=_meter(user, layer_counter),
        warnings=tuple(warnings),
        joiner=Meter(joiner_bytes, joiner_tokens, system_meter.estimated),
        instructions=instructions,
        rules=rules,
        compose_input=compose_input,
        verification=verification,
        variant=variant,
        summarised=summarised,
    )
