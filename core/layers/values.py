"""What the layer templates are filled with: values drawn from a :class:`ComposeInput`.

Each layer's values (the scope, the contract's signal lines or schema, the apply policy's
words) and the pieces of Layer-5 (Context), rendered in a fixed order so the same input gives
the same text in any process.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import ComposeError
from ..phases.table import PHASE_NAMES, get_phase
from .input import CONTEXT_ORDER, ComposeInput
from .model import JOINER
from .templates import TemplateSet, TemplateText


def as_text(value: Any) -> str:
    """A context value as text: a string as it is (without outer newlines), else sorted JSON."""
    if isinstance(value, str):
        return value.strip("\n")
    return json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2)


def epic_label(epic_id: str, title: str | None) -> str:
    """``epic 1: Statement import``, or just ``epic 1`` when the title adds nothing."""
    title = (title or "").strip()
    if not title or title.lower() in (epic_id.lower(), f"epic {epic_id}".lower()):
        return f"epic {epic_id}"
    return f"epic {epic_id}: {title}"


def template_values(compose_input: ComposeInput) -> dict[str, str]:
    """Template values from the input; phases need their story or epic."""
    profile = compose_input.domain_profile
    values = {
        "entrypoint": compose_input.entrypoint,
        "target_type": compose_input.target_type,
        "mode": compose_input.mode,
    }
    for key, name in (
        ("storyId", "story_id"),
        ("storyTitle", "story_title"),
        ("epicId", "epic_id"),
        ("epicTitle", "epic_title"),
        ("source", "source"),
    ):
        value = profile.get(key)
        if value is not None:
            values[name] = str(value)
    if compose_input.entrypoint in PHASE_NAMES:
        phase = get_phase(compose_input.entrypoint)
        needed = ("epicId",) if phase.scope == "epic" else ("storyId", "storyTitle")
        for key in needed:
            if not str(profile.get(key) or "").strip():
                raise ComposeError(
                    f"domainProfile.{key} is required for the {compose_input.entrypoint} entry"
                )
        values.setdefault("epic_title", values.get("epic_id", ""))
        values["epic_label"] = epic_label(values.get("epic_id", ""), values["epic_title"])
        if phase.scope == "epic":
            values["scope"] = values["epic_label"]
        else:
            values["scope"] = f"story {values['story_id']}: {values['story_title']}"
        values["phase"] = phase.name
        values["phase_title"] = phase.title
        record = str(profile.get("recordPath") or "")
        # Where records go is part of each workflow's contract: a BMAD story's own file, or
        # an OpenSpec story's record file (its tasks.md is shared by every story of the change).
        values["record_file"] = (
            f"the story's record file `{record}`"
            if values.get("source") == "openspec" and record
            else "the story file"
        )
    else:
        values["scope"] = f"the {compose_input.target_type} named in the context"
    return values


def entry_template(compose_input: ComposeInput, values: dict[str, str]) -> str:
    """Layer-3's template: the phase's own, or its party variant (``domainProfile.variant``),
    whose participants come rendered in ``domainProfile.personas`` / ``voices``."""
    variant = str(compose_input.domain_profile.get("variant") or "standard")
    if variant == "standard":
        return f"layer-3-entry-{compose_input.entrypoint}.md"
    if variant != "party":
        raise ComposeError(f"domainProfile.variant '{variant}' is not one of standard|party")
    for key, name in (
        ("personas", "personas"),
        ("participants", "participants"),
        ("voices", "voices"),
    ):
        text = str(compose_input.domain_profile.get(key) or "")
        if not text.strip():
            raise ComposeError(f"domainProfile.{key} is required for a party entry")
        values[name] = text
    return f"layer-3-entry-party-{compose_input.entrypoint}.md"


def _verify_commands(compose_input: ComposeInput) -> tuple[str, ...]:
    raw = compose_input.domain_profile.get("verifyCommands") or ()
    if isinstance(raw, str) or not all(isinstance(item, str) for item in raw):
        raise ComposeError("domainProfile.verifyCommands must be a list of strings")
    return tuple(raw)


def contract_template(
    compose_input: ComposeInput, values: dict[str, str], templates: TemplateSet
) -> TemplateText:
    """Layer-2's template, with its values added to ``values``: a phase's signal lines, or
    the output schema of the seed's entries."""
    if compose_input.entrypoint in PHASE_NAMES:
        phase = get_phase(compose_input.entrypoint)
        ident = values["epic_id"] if phase.scope == "epic" else values["story_id"]
        specs = phase.contract_signals(values.get("source", ""))
        values["signal_id"] = ident
        # Promise tags carry no id: the check names one only when a signal line has it.
        values["signal_id_check"] = (
            f" the id `{ident}`," if any("{id}" in spec.template for spec in specs) else ""
        )
        values["signal_lines"] = "\n".join(
            f"- `{spec.display(ident)}`\n  when {spec.when}" for spec in specs
        )
        return templates.get("layer-2-contract.md")
    schema = compose_input.domain_profile.get("outputSchema")
    if schema is None:
        target = compose_input.target_type
        values["schema"] = (
            f"No schema was given for this {target}. Follow the structure of the "
            f"existing {target}s in the context; read more of them rather than "
            "guess at a field."
        )
    else:
        values["schema"] = "```json\n" + as_text(schema) + "\n```"
    return templates.get("layer-2-contract-artifact.md")


def apply_policy_values(compose_input: ComposeInput, values: Mapping[str, str]) -> dict[str, str]:
    """Layer-6's values: ``values`` (left as they are) and the write policy's words."""
    policy = compose_input.write_policy
    commands = _verify_commands(compose_input)
    if compose_input.entrypoint in PHASE_NAMES:
        apply = get_phase(compose_input.entrypoint).apply_policy
        writes, stage = apply.writes, apply.stage[:1].upper() + apply.stage[1:]
        if compose_input.domain_profile.get("variant") == "party" and apply.party_writes:
            writes = apply.party_writes
        record_file = values.get("record_file", "the story file")
        writes = writes.replace("the story file", record_file)
    else:
        writes = (
            f"You may write the {compose_input.target_type} files your output names."
            if policy.allow_apply
            else "Do not change any file: return your output only."
        )
        stage = "Stage nothing and do not commit."
    if not policy.allow_apply:
        writes = "Do not change any file: return your output only."
    if policy.requires_validation:
        if commands:
            listed = "\n".join(f"  - `{command}`" for command in commands)
            validation = (
                "Run these verification commands and make them pass before you print a "
                f"success signal:\n{listed}"
            )
        else:
            validation = (
                "No verification commands are configured for this workspace: run the "
                "project's own tests and checks, if it has any, before you print a success "
                "signal."
            )
    else:
        validation = "No verification is required in this phase."
    return {
        **values,
        "allow_apply": "yes" if policy.allow_apply else "no",
        "requires_validation": "yes" if policy.requires_validation else "no",
        "writes": writes,
        "stage": stage,
        "validation": validation,
    }


def context_pieces(compose_input: ComposeInput) -> list[str]:
    """Layer-5's pieces: the envelope's parts with the joiners between them."""
    envelope = compose_input.context_envelope
    keys = [key for key in CONTEXT_ORDER if key in envelope]
    keys += sorted(key for key in envelope if key not in CONTEXT_ORDER)
    parts: list[str] = []
    for key in keys:
        value = envelope[key]
        text = as_text(value)
        if not text.strip():
            continue
        if isinstance(value, str):
            parts.append(text)
        else:
            parts.append(f"### {key}\n\n```json\n{text}\n```")
    pieces: list[str] = []
    for part in parts:
        if pieces:
            pieces.append(JOINER)
        pieces.append(part)
    return pieces
