"""The eight-layer prompt composer (seed 001, with its frozen contract).

:func:`compose_system_instruction` turns a :class:`ComposeInput` into exactly eight
:class:`PromptLayer` objects in the fixed order ``Layer-0A, 0B, 1, 2, 3, 4, 5, 6``;
:func:`compose_messages` wraps them as ``[system, *prior, user]``. The composer only assembles
what it is given (seed 001: no database reads);
:func:`promptdeck.core.prompt.compose.compose_prompt` gathers a story's inputs and calls it.

Layer texts are templates bundled in the package (``core/templates/``), overridable per
workspace in ``config.paths_templates``; a layer built from an override names that file as its
source. Placeholders are ``$name``; an unknown placeholder is a :class:`ComposeError`, never a
blank. A line holding only a placeholder whose value is empty is dropped with the blank line
after it, which is how optional sections (learnings, retry) come and go.

Determinism: the same input gives the same layers and :func:`signature` in any process — no
set or dict-order effects (mapping keys are rendered in a fixed or sorted order), no clock, no
absolute paths in sources.

Its parts live beside it: the input in :mod:`.input`, the layers and how the system
prompt is joined from them in :mod:`.model`, the templates in :mod:`.templates`
and what fills them in :mod:`.values`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ComposeError
from ..phases.table import PHASE_NAMES
from ..tokens.counter import TokenCounter
from .input import ComposeInput
from .instructions import InstructionsFile, load_instructions
from .model import JOINER, PromptLayer, system_text
from .rules import RulesFile
from .templates import BUNDLED, TemplateSet, render
from .values import (
    apply_policy_values,
    as_text,
    context_pieces,
    contract_template,
    entry_template,
    template_values,
)

__all__ = [
    "SCHEMA_FIRST",
    "compose_messages",
    "compose_system_instruction",
]

SCHEMA_FIRST = """\
### Schema-first self-check

Before you print any structured output — a signal line, a record section, JSON — check it
against its contract:
- `required`: every required field is present and not empty;
- `type`: every value has the type the contract gives (text, number, list, object);
- `enum`: where the contract allows a fixed set of values, use one of them, spelled exactly;
- no extra fields: nothing the contract does not name.

If you are not sure what a field must hold, read more context first — the story file, the
code, the specs — instead of guessing. Never invent a value to fill a field."""
"""Fixed Layer-1 text (seed 001 AC-4). Appended in code, so no template override drops it."""


def _rules_layer(rules: RulesFile | None, counter: TokenCounter | None) -> PromptLayer:
    if rules is None or not rules.present:
        source = rules.path if rules is not None else "none"
        left_out = rules is not None and rules.left_out
        return PromptLayer.build(
            "Layer-0B", "", source, counter=counter, missing=True, left_out=left_out
        )
    content = (
        f"## Workspace rules\n\nThese are the rules of this workspace, from `{rules.path}`.\n\n"
        + rules.text.strip("\n")
    )
    return PromptLayer.build("Layer-0B", content, rules.path, counter=counter)


def compose_system_instruction(
    input: ComposeInput | None = None,  # seed 001 froze this keyword
    *,
    compose_input: ComposeInput | None = None,
    instructions: InstructionsFile | None = None,
    rules: RulesFile | None = None,
    templates: TemplateSet | None = None,
    counter: TokenCounter | None = None,
) -> list[PromptLayer]:
    """Compose the eight layers for ``input``, in the fixed order.

    ``input`` is seed 001's frozen keyword (``compose_system_instruction(input=…)``);
    ``compose_input`` is the same argument under the name the helpers use. Give one.

    Args:
        input: what to compose.
        compose_input: an alias of ``input``.
        instructions: Layer-0A; the bundled asset is read when None.
        rules: Layer-0B; None (or a rules file that is not present) leaves it missing.
        templates: where layer templates come from; bundled only when None.
        counter: counts each layer's tokens; tokens are None when not given.

    Raises:
        ComposeError: a required input or layer is missing or empty, or a template names an
            unknown placeholder.
        AssetMissing: the bundled instructions are missing.
        TypeError: neither or both of ``input`` and ``compose_input`` are given.
    """
    chosen = input if input is not None else compose_input
    if chosen is None or (input is not None and compose_input is not None):
        raise TypeError("compose_system_instruction takes one ComposeInput: input=…")
    compose_input = chosen
    compose_input.validate()
    templates = templates or BUNDLED
    instructions = instructions or load_instructions()
    values = template_values(compose_input)

    layers = [
        PromptLayer.build(
            "Layer-0A", instructions.text.strip("\n"), instructions.source, counter=counter
        ),
        _rules_layer(rules, counter),
    ]

    guard = templates.get("layer-1-guardrails.md")
    layers.append(
        PromptLayer.build(
            "Layer-1", render(guard, values) + JOINER + SCHEMA_FIRST, guard.source, counter=counter
        )
    )

    contract = contract_template(compose_input, values, templates)
    layers.append(
        PromptLayer.build("Layer-2", render(contract, values), contract.source, counter=counter)
    )

    entry = templates.get(entry_template(compose_input, values))
    layers.append(
        PromptLayer.build("Layer-3", render(entry, values), entry.source, counter=counter)
    )

    mode = templates.get(f"layer-4-mode-{compose_input.mode}.md")
    layers.append(PromptLayer.build("Layer-4", render(mode, values), mode.source, counter=counter))

    if compose_input.entrypoint in PHASE_NAMES and not as_text(
        compose_input.context_envelope.get("story", "")
    ):
        raise ComposeError(
            f"contextEnvelope.story is required for the {compose_input.entrypoint} entry (Layer-5)"
        )
    pieces = context_pieces(compose_input)
    if not pieces:
        raise ComposeError("contextEnvelope is empty: Layer-5 (Context) is required")
    layers.append(
        PromptLayer.build(
            "Layer-5", "".join(pieces), "input:contextEnvelope", counter=counter, pieces=pieces
        )
    )

    apply_values = apply_policy_values(compose_input, values)
    apply = templates.get("layer-6-apply-policy.md")
    layers.append(
        PromptLayer.build("Layer-6", render(apply, apply_values), apply.source, counter=counter)
    )
    return layers


def compose_messages(
    *,
    input: ComposeInput,
    user_message: str,
    prior_messages: list[dict[str, str]] | None = None,
    layers: Sequence[PromptLayer] | None = None,
) -> list[dict[str, str]]:
    """``[system, *prior_messages, user]`` for ``input`` (seed 001 AC-3).

    ``input`` is the seed's keyword, kept for its callers; the helpers say ``compose_input``.

    Args:
        input: what to compose.
        user_message: the user turn (the phase's task).
        prior_messages: earlier turns, each ``{"role", "content"}``; copied, never aliased.
        layers: the already-composed layers of ``input`` (composed with bundled templates
            when None).

    Raises:
        ComposeError: the user message is empty or a prior message is malformed.
    """
    if not user_message.strip():
        raise ComposeError("user message is empty")
    if layers is None:
        layers = compose_system_instruction(input)
    prior: list[dict[str, str]] = []
    for index, message in enumerate(prior_messages or ()):
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant") or not isinstance(content, str):
            raise ComposeError(
                f"prior_messages[{index}] must be {{'role': 'user'|'assistant', 'content': str}}"
            )
        prior.append({"role": role, "content": content})
    return [
        {"role": "system", "content": system_text(layers)},
        *prior,
        {"role": "user", "content": user_message},
    ]
