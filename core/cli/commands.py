"""The registry of CLI command modules, in ``--help`` order."""

from __future__ import annotations

from types import ModuleType

from . import app, compose, inspect, stories
from . import chat as chat_command
from . import run as run_command
from . import runs as runs_command

COMMANDS: list[ModuleType] = [app, stories, inspect, compose]
COMMANDS += [run_command, runs_command, chat_command]
