"""The eight system layers (seed 001): the composer, its input, the layer model and signature,
the bundled and overridable templates and what fills them, the instructions (Layer-0A) and
the workspace rules (Layer-0B).
"""

from __future__ import annotations

from .composer import compose_system_instruction
from .delivery import DELIVERIES
from .input import MODES, ComposeInput
from .model import PromptLayer, signature
from .rules import find_rules_path, rules_health

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
