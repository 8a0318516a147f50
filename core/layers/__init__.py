"""The eight system layers (seed 001): the composer, its input, the layer model and signature,
the bundled and overridable templates and what fills them, the instructions (Layer-0A) and
the workspace rules (Layer-0B), and where the layers go.

:mod:`.assembly` is the prompt's layers gatherer: it has :mod:`.composer` build the eight
layers from a frozen :class:`ComposeInput` (:mod:`.input`), delivers them (:mod:`.delivery`:
``layered``, the seeds' order and the default, or ``cache-aware``, the phase-invariant layers
and the injected files first) and measures the system prompt, the user turn and the joiners.
:mod:`.model` holds ``PromptLayer``, the layer ids and the ``signature`` (SHA-256 over the
ordered layer hashes); :mod:`.templates` and :mod:`.values` the bundled and overridable
templates (``core/templates/``) and what fills them; :mod:`.instructions` Layer-0A (a package
asset); :mod:`.rules` Layer-0B, the workspace rules file and its health.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .composer import compose_messages, compose_system_instruction
    from .delivery import DELIVERIES
    from .input import MODES, ComposeInput
    from .model import PromptLayer, signature
    from .rules import find_rules_path, rules_health

_HOMES = {
    "compose_messages": ".composer",
    "compose_system_instruction": ".composer",
    "DELIVERIES": ".delivery",
    "MODES": ".input",
    "ComposeInput": ".input",
    "PromptLayer": ".model",
    "signature": ".model",
    "find_rules_path": ".rules",
    "rules_health": ".rules",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "DELIVERIES",
    "MODES",
    "ComposeInput",
    "PromptLayer",
    "compose_messages",
    "compose_system_instruction",
    "find_rules_path",
    "rules_health",
    "signature",
]
