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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .catalog import load_catalog, load_story_catalog
from .composer import (
    JOINER,
    MODES,
    ComposeInput,
    PromptLayer,
    TemplateSet,
    WritePolicy,
    compose_messages,
    compose_system_instruction,
    epic_label,
    joiner_count,
    render,
    signature,
    system_pieces,
    system_text,
)
from .config import Config
from .errors import UsageError
from .injection import (
    Emit,
    Injection,
    Selection,
    build_injection,
    build_story_injection,
    source_project_context,
)
from .instructions import InstructionsFile, load_instructions
from .learnings import learnings_path
from .party import Party, check_variant, default_variant, party_for
from .phases import Phase, get_phase, retro_paths, uat_path
from .records import RunInfo, list_runs
from .retro_context import RetroPlan, epic_section, execution_summary, plan_retro
from .rules import RulesFile, read_rules
from .stories import Story, StoryCatalog
from .story_prompt import epic_brief, read_learnings, story_brief, story_prompt
from .tokens import Meter, TokenCounter, get_counter
from .verify import Verification, resolve_verification
from .workspace import Workspace

__all__ = [
    "ComposedPrompt",
    "FailureInfo",
    "PromptRequest",
    "compose_prompt",
]

FLUSH_SECONDS = 5.0
"""How often, at most, a compose writes its new counts to the shared cache."""

_FAILURE_SIGNALS = {"dev": "IMPLEMENTATION BLOCKED", "review": "REVIEW FAILED"}


@dataclass(frozen=True)
class FailureInfo:
    """What the failure-analysis phase is told about the failure (seed 002, transfer D).

    Attributes:
        phase: the phase that failed (``dev`` or ``review``; any phase name is accepted).
        signal: the signal it printed, e.g. ``IMPLEMENTATION BLOCKED``, or ``no signal``.
        message: the reason the signal gave, or what went wrong.
    """

    phase: str
    signal: str
    message: str

    @classmethod
    def for_phase(cls, phase: str, message: str, signal: str | None = None) -> FailureInfo:
        """A failure of ``phase``; the signal defaults to that phase's failure signal."""
        return cls(phase, signal or _FAILURE_SIGNALS.get(phase, "no signal"), message)

    def render(self) -> str:
        """The Markdown list the failure phase receives."""
        message = " ".join(self.message.split()) or "(no message)"
        return (
            f"- **Type**: {self.phase} phase\n"
            f"- **Signal**: {self.signal}\n"
            f'- **Message**: "{message}"'
        )


@dataclass(frozen=True)
class PromptRequest:
    """What to compose.

    Attributes:
        story_id: the story, as the user types it (``1-2``, ``1.2``, ``add-auth:2``).
        phase: ``kickoff``, ``dev``, ``review``, ``failure``, ``uat`` or ``retro``.
        mode: ``create`` or ``optimize``.
        selection: what the injection includes beyond the story's own files.
        retry_reason: optimize only: the previous attempt's FAILED / BLOCKED reason. None
            (or blank) after an abnormal termination: then there is no retry section.
        failure: the failure phase's input: the failed phase, its signal and message.
        variant: ``standard`` or ``party`` (kickoff, review, failure and retro only); None
            takes the workspace's default (``[party] <phase>``).
    """

    story_id: str
    phase: str = "dev"
    mode: str = "create"
    selection: Selection = field(default_factory=Selection)
    retry_reason: str | None = None
    failure: FailureInfo | None = None
    variant: str | None = None


@dataclass(frozen=True)
class ComposedPrompt:
    """One composed prompt: the eight layers, the exact system prompt and user message, the
    messages array, the injection, and their meters.

    ``system_meter.bytes`` equals the sum of the layers' bytes plus ``joiner.bytes`` exactly
    (the joiner row is the bytes of the blank lines between layers); token counts of the
    joiner row are the remainder, so the rows add up to the total in tokens too.
    """

    story: Story
    request: PromptRequest
    layers: tuple[PromptLayer, ...]
    system: str
    user: str
    messages: tuple[dict[str, str], ...]
    injection: Injection
    signature: str
    system_meter: Meter
    user_meter: Meter
    warnings: tuple[str, ...]
    joiner: Meter = field(default_factory=lambda: Meter(0, 0))
    instructions: InstructionsFile | None = None
    rules: RulesFile | None = None
    compose_input: ComposeInput | None = None
    verification: Verification | None = None
    variant: str = "standard"
    """The variant composed: ``standard`` or ``party``."""
    summarised: tuple[str, ...] = ()
    """Retro only: the stories whose files are summarised rather than injected whole."""

    @property
    def counted(self) -> bool:
        """True when token counts were made (``count_tokens=True``)."""
        return all(layer.tokens is not None for layer in self.layers)


def _check_request(request: PromptRequest) -> Phase:
    phase = get_phase(request.phase)
    if request.mode not in MODES:
        raise UsageError(f"unknown mode '{request.mode}' (one of: {', '.join(MODES)})")
    reason = request.retry_reason
    if reason is not None and reason.strip() and request.mode != "optimize":
        raise UsageError("a retry reason needs mode 'optimize' (the retry of a failed attempt)")
    return phase


def _epic_stories(catalog: StoryCatalog, story: Story) -> tuple[Story, ...]:
    return catalog.in_group(story.group) or (story,)


def _injection(
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
    return _epic_injection(
        workspace, phase, epic, selection, counter, count_tokens, scan_secrets, emit
    )


def _epic_injection(
    workspace: Workspace,
    phase: Phase,
    epic: Sequence[Story],
    selection: Selection,
    counter: TokenCounter,
    count_tokens: bool,
    scan_secrets: bool = True,
    emit: Emit | None = None,
) -> Injection:
    keys = tuple(s.id for s in epic if s.source == "bmad")
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
        counter=counter,
        count_tokens=count_tokens,
        scan_secrets=scan_secrets,
        emit=emit,
    )


def _transfers(
    phase: Phase,
    story: Story,
    epic: tuple[Story, ...],
    failure: FailureInfo | None,
    templates: TemplateSet,
    config: Config,
    summarised: tuple[str, ...] = (),
    injected: frozenset[str] = frozenset(),
) -> str:
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


def _variant_note(phase: Phase, party: Party | None, templates: TemplateSet) -> str:
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


def _retro_context(
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


def _user_message(phase: Phase, story: Story) -> str:
    return phase.task.format(
        id=story.id, title=story.title, epic_label=epic_label(story.group, story.group_title)
    )


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
    phase = _check_request(request)
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
    epic = _epic_stories(catalog, story) if phase.scope == "epic" else (story,)
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

    if story.status == "done" and phase.name in ("kickoff", "dev"):
        where = (
            "its tasks are all ticked"
            if story.source == "openspec"
            else ("sprint-status.yaml says so")
        )
        warnings.append(
            f"story {story.id} is already done ({where}): a {phase.name} run would redo "
            "finished work"
        )
    retro: RetroPlan | None = None
    runs = list_runs(workspace.root) if phase.name == "retro" else []
    if phase.name == "retro":

        def build(stories: Sequence[Story], counted: bool) -> Injection:
            return _epic_injection(
                workspace, phase, stories, request.selection, counter, counted, scan_secrets, emit
            )

        retro = plan_retro(workspace, epic, runs, build, count_tokens=count_tokens)
        injection = retro.injection
    else:
        injection = _injection(
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
    if story.path is None and phase.scope == "story":
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
            context += JOINER + _retro_context(
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
            "transfers": _variant_note(phase, party, templates)
            + _transfers(
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
    user = _user_message(phase, story)
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
