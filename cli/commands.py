"""The registry of CLI commands: each command's module, in ``--help`` order.

Modules are imported by name so that running one command imports only its own module: a
one-story ``inspect`` should not pay for the runner, the session or the app.
"""

from __future__ import annotations

import importlib
from types import ModuleType

COMMAND_MODULES: dict[str, str] = {
    "app": "app",
    "demo": "app",
    "stories": "stories",
    "doctor": "doctor",
    "inspect": "inspect",
    "compose": "compose",
    "plan": "plan",
    "run": "run",
    "runs": "runs",
    "show": "runs",
    "chat": "chat",
    "resume": "resume",
    "export": "export_ci",
    "import-runs": "import_runs",
    "diff": "diff",
    "capture": "capture",
    "trust": "trust",
}
"""Command name → the module (in this package) that registers it."""


def modules(command: str | None = None) -> list[ModuleType]:
    """The command modules to register: the one for ``command``, or all of them."""
    names = list(dict.fromkeys(COMMAND_MODULES.values()))
    if command is not None and command in COMMAND_MODULES:
        names = [COMMAND_MODULES[command]]
    return [importlib.import_module(f"{__package__}.{name}") for name in names]
