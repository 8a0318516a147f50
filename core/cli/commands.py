"""The registry of CLI command modules, in ``--help`` order."""

from __future__ import annotations

from types import ModuleType

COMMANDS: list[ModuleType] = []
