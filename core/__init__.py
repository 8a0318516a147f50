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
    from .composer import (
        ComposeInput,
        PromptLayer,
        compose_messages,
        compose_system_instruction,
        signature,
    )
    from .config import Config, load_config
    from .errors import (
        ComposeError,
        ConfigError,
        InjectionTooLarge,
        PromptdeckError,
        StoryNotFound,
        UsageError,
        WorkspaceError,
    )
    from .injection import (
        InjectedFile,
        Injection,
        Selection,
        build_injection,
        build_prompt_system_append,
        build_story_injection,
    )
    from .keys import name_matches_key, normalize_key
    from .phases import PHASES, SIGNAL_SPECS
    from .prompt import ComposedPrompt, FailureInfo, PromptRequest, compose_prompt
    from .stories import SkippedFile, Story, StoryCatalog, Task
    from .tokens import ARGV_LIMIT_BYTES, Meter, TokenCounter, get_counter
    from .workspace import Workspace, find_root, open_workspace

_HOMES: dict[str, str] = {
    "ARGV_LIMIT_BYTES": "promptdeck.core.tokens",
    "ComposeError": "promptdeck.core.errors",
    "ComposeInput": "promptdeck.core.composer",
    "ComposedPrompt": "promptdeck.core.prompt",
    "Config": "promptdeck.core.config",
    "ConfigError": "promptdeck.core.errors",
    "FailureInfo": "promptdeck.core.prompt",
    "InjectedFile": "promptdeck.core.injection",
    "Injection": "promptdeck.core.injection",
    "InjectionTooLarge": "promptdeck.core.errors",
    "Meter": "promptdeck.core.tokens",
    "PHASES": "promptdeck.core.phases",
    "PromptLayer": "promptdeck.core.composer",
    "PromptRequest": "promptdeck.core.prompt",
    "PromptdeckError": "promptdeck.core.errors",
    "SIGNAL_SPECS": "promptdeck.core.phases",
    "Selection": "promptdeck.core.injection",
    "SkippedFile": "promptdeck.core.stories",
    "Story": "promptdeck.core.stories",
    "StoryCatalog": "promptdeck.core.stories",
    "StoryNotFound": "promptdeck.core.errors",
    "Task": "promptdeck.core.stories",
    "TokenCounter": "promptdeck.core.tokens",
    "UsageError": "promptdeck.core.errors",
    "Workspace": "promptdeck.core.workspace",
    "WorkspaceError": "promptdeck.core.errors",
    "build_injection": "promptdeck.core.injection",
    "build_prompt_system_append": "promptdeck.core.injection",
    "build_story_injection": "promptdeck.core.injection",
    "compose_messages": "promptdeck.core.composer",
    "compose_prompt": "promptdeck.core.prompt",
    "compose_system_instruction": "promptdeck.core.composer",
    "find_root": "promptdeck.core.workspace",
    "get_counter": "promptdeck.core.tokens",
    "load_config": "promptdeck.core.config",
    "name_matches_key": "promptdeck.core.keys",
    "normalize_key": "promptdeck.core.keys",
    "open_workspace": "promptdeck.core.workspace",
    "signature": "promptdeck.core.composer",
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
