"""The eight system layers (seed 001): the composer, its input, the layer model and signature,
the bundled and overridable templates and what fills them, the instructions (Layer-0A) and
the workspace rules (Layer-0B).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .composer import compose_system_instruction
    from .delivery import DELIVERIES
    from .input import MODES, ComposeInput
    from .model import PromptLayer, signature
    from .rules import find_rules_path, rules_health

_HOMES = {
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
    "compose_system_instruction",
    "find_rules_path",
    "rules_health",
    "signature",
]
