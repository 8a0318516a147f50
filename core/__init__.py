"""promptdeck's engine: workspaces, stories, injection, prompts, runs. No UI import below here.

The public API is re-exported here; every face (the CLI, the app) calls these same functions.
The names are imported on first use (PEP 562): importing one module of the engine — the CLI's
``errors`` for ``promptdeck --version`` — does not import the whole engine, and a command pays
only for the modules it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import (
        ComposeError,
        ConfigError,
        InjectionTooLarge,
        PromptdeckError,
        StoryNotFound,
        UsageError,
        WorkspaceError,
    )
    from .injection.builder import (
        build_injection,
        build_prompt_system_append,
        build_story_injection,
    )
    from .injection.model import InjectedFile, Injection, Selection
    from .layers.composer import compose_messages, compose_system_instruction
    from .layers.input import ComposeInput
    from .layers.model import PromptLayer, signature
    from .phases.table import PHASES, SIGNAL_SPECS
    from .project.config import Config, load_config
    from .project.workspace import Workspace, find_root, open_workspace
    from .prompt.compose import compose_prompt
    from .prompt.request import ComposedPrompt, FailureInfo, PromptRequest
    from .stories.keys import name_matches_key, normalize_key
    from .stories.model import SkippedFile, Story, StoryCatalog, Task
    from .tokens.counter import ARGV_LIMIT_BYTES, Meter, TokenCounter, get_counter

_HOMES: dict[str, str] = {
    "ARGV_LIMIT_BYTES": "promptdeck.core.tokens.counter",
    "ComposeError": "promptdeck.core.errors",
    "ComposeInput": "promptdeck.core.layers.input",
    "ComposedPrompt": "promptdeck.core.prompt.request",
    "Config": "promptdeck.core.project.config",
    "ConfigError": "promptdeck.core.errors",
    "FailureInfo": "promptdeck.core.prompt.request",
    "InjectedFile": "promptdeck.core.injection.model",
    "Injection": "promptdeck.core.injection.model",
    "InjectionTooLarge": "promptdeck.core.errors",
    "Meter": "promptdeck.core.tokens.counter",
    "PHASES": "promptdeck.core.phases.table",
    "PromptLayer": "promptdeck.core.layers.model",
    "PromptRequest": "promptdeck.core.prompt.request",
    "PromptdeckError": "promptdeck.core.errors",
    "SIGNAL_SPECS": "promptdeck.core.phases.table",
    "Selection": "promptdeck.core.injection.model",
    "SkippedFile": "promptdeck.core.stories.model",
    "Story": "promptdeck.core.stories.model",
    "StoryCatalog": "promptdeck.core.stories.model",
    "StoryNotFound": "promptdeck.core.errors",
    "Task": "promptdeck.core.stories.model",
    "TokenCounter": "promptdeck.core.tokens.counter",
    "UsageError": "promptdeck.core.errors",
    "Workspace": "promptdeck.core.project.workspace",
    "WorkspaceError": "promptdeck.core.errors",
    "build_injection": "promptdeck.core.injection.builder",
    "build_prompt_system_append": "promptdeck.core.injection.builder",
    "build_story_injection": "promptdeck.core.injection.builder",
    "compose_messages": "promptdeck.core.layers.composer",
    "compose_prompt": "promptdeck.core.prompt.compose",
    "compose_system_instruction": "promptdeck.core.layers.composer",
    "find_root": "promptdeck.core.project.workspace",
    "get_counter": "promptdeck.core.tokens.counter",
    "load_config": "promptdeck.core.project.config",
    "name_matches_key": "promptdeck.core.stories.keys",
    "normalize_key": "promptdeck.core.stories.keys",
    "open_workspace": "promptdeck.core.project.workspace",
    "signature": "promptdeck.core.layers.model",
}
"""Each public name and the module that defines it."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


__all__ = [
    "ARGV_LIMIT_BYTES",
    "PHASES",
    "SIGNAL_SPECS",
    "ComposeError",
    "ComposeInput",
    "ComposedPrompt",
    "Config",
    "ConfigError",
    "FailureInfo",
    "InjectedFile",
    "Injection",
    "InjectionTooLarge",
    "Meter",
    "PromptLayer",
    "PromptRequest",
    "PromptdeckError",
    "Selection",
    "SkippedFile",
    "Story",
    "StoryCatalog",
    "StoryNotFound",
    "Task",
    "TokenCounter",
    "UsageError",
    "Workspace",
    "WorkspaceError",
    "build_injection",
    "build_prompt_system_append",
    "build_story_injection",
    "compose_messages",
    "compose_prompt",
    "compose_system_instruction",
    "find_root",
    "get_counter",
    "load_config",
    "name_matches_key",
    "normalize_key",
    "open_workspace",
    "signature",
]
