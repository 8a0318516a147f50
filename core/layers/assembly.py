"""The prompt's layers gatherer: the eight layers (seed 001), delivered and measured.

:func:`assemble_layers` has the composer build the layers from a :class:`ComposeInput`,
delivers them in the configured shape (``layered``: the layers as the system prompt;
otherwise :mod:`.delivery`'s split of system and user text) and measures what is sent: the
system prompt, the user turn and the joiners between the layers. The layers' token counts are
reused: only the stretches around the joiners are encoded again.
"""

from __future__ import annotations

from ..lean_dataclass import dataclass
from ..tokens.counter import Meter, TokenCounter
from .composer import compose_messages, compose_system_instruction
from .delivery import Delivered, check_delivery, deliver
from .input import ComposeInput
from .instructions import InstructionsFile
from .model import JOINER, PromptLayer, joiner_count, system_pieces, system_text
from .rules import RulesFile
from .templates import TemplateSet

__all__ = ["AssembledLayers", "assemble_layers"]


@dataclass(frozen=True)
class AssembledLayers:
    """The layers of one prompt and the exact system and user text an agent receives."""

    layers: tuple[PromptLayer, ...]
    system: str
    user: str
    messages: tuple[dict[str, str], ...]
    system_meter: Meter
    user_meter: Meter
    joiner: Meter
    delivered: Delivered


def _meter(text: str, counter: TokenCounter | None) -> Meter:
    data = len(text.encode("utf-8"))
    if counter is None:
        return Meter(data, None)
    return Meter(data, counter.count(text), counter.estimated)


def assemble_layers(
    compose_input: ComposeInput,
    task: str,
    delivery: str,
    *,
    instructions: InstructionsFile,
    rules: RulesFile,
    templates: TemplateSet,
    counter: TokenCounter | None,
) -> AssembledLayers:
    """Build, deliver and measure the eight layers of one prompt.

    Args:
        compose_input: the composer's input (phase, mode, profile, context envelope, policy).
        task: the user turn before delivery: the phase's task for the story.
        delivery: the delivery shape (``layered`` or one of :data:`.delivery.DELIVERIES`).
        instructions: the bundled instructions (Layer-0A).
        rules: the workspace rules (Layer-0B).
        templates: the bundled and overriding templates.
        counter: the token counter; None leaves every token count None.

    Raises:
        ComposeError: a required input or layer is missing, or a template is broken.
        UsageError: an unknown delivery.
    """
    layers = compose_system_instruction(
        compose_input,
        instructions=instructions,
        rules=rules,
        templates=templates,
        counter=counter,
    )
    shape = check_delivery(delivery)
    delivered = deliver(layers, compose_input, task, shape)
    if shape == "layered":
        user = task
        messages = compose_messages(input=compose_input, user_message=user, layers=layers)
        system = system_text(layers)
        pieces = system_pieces(layers)
    else:
        system, user = delivered.system_text, delivered.user_text
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        pieces = [segment.text for segment in delivered.system]
    system_meter = Meter(
        len(system.encode("utf-8")),
        None if counter is None else counter.count_joined(pieces, system),
        counter is not None and counter.estimated,
    )
    if shape == "layered":
        joiner_bytes = joiner_count(layers) * len(JOINER.encode("utf-8"))
        joiner_tokens = (
            None
            if system_meter.tokens is None
            else system_meter.tokens - sum(layer.tokens or 0 for layer in layers)
        )
    else:
        joiner_bytes = (
            system_meter.bytes
            + len(user.encode("utf-8"))
            - len(task.encode("utf-8"))
            - sum(layer.bytes for layer in layers)
        )
        joiner_tokens = None
    return AssembledLayers(
        layers=tuple(layers),
        system=system,
        user=user,
        messages=tuple(messages),
        system_meter=system_meter,
        user_meter=_meter(user, counter),
        joiner=Meter(joiner_bytes, joiner_tokens, system_meter.estimated),
        delivered=delivered,
    )
