"""promptdeck's engine: workspaces, stories, injection, prompts, runs. No UI import below here.

The public API is re-exported here; every face (the CLI, the app) calls these same functions.
The names are imported on first use (PEP 562): importing one module of the engine — the CLI's
``errors`` for ``promptdeck --version`` — does not import the whole engine, and a command pays
only for the modules it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .homes import lazy_names

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
    "ARGV_LIMIT_BYTES": ".tokens.counter",
    "ComposeError": ".errors",
    "ComposeInput": ".layers.input",
    "ComposedPrompt": ".prompt.request",
    "Config": ".project.config",
    "ConfigError": ".errors",
    "FailureInfo": ".prompt.request",
    "InjectedFile": ".injection.model",
    "Injection": ".injection.model",
    "InjectionTooLarge": ".errors",
    "Meter": ".tokens.counter",
    "PHASES": ".phases.table",
    "PromptLayer": ".layers.model",
    "PromptRequest": ".prompt.request",
    "PromptdeckError": ".errors",
    "SIGNAL_SPECS": ".phases.table",
    "Selection": ".injection.model",
    "SkippedFile": ".stories.model",
    "Story": ".stories.model",
    "StoryCatalog": ".stories.model",
    "StoryNotFound": ".errors",
    "Task": ".stories.model",
    "TokenCounter": ".tokens.counter",
    "UsageError": ".errors",
    "Workspace": ".project.workspace",
    "WorkspaceError": ".errors",
    "build_injection": ".injection.builder",
    "build_prompt_system_append": ".injection.builder",
    "build_story_injection": ".injection.builder",
    "compose_messages": ".layers.composer",
    "compose_prompt": ".prompt.compose",
    "compose_system_instruction": ".layers.composer",
    "find_root": ".project.workspace",
    "get_counter": ".tokens.counter",
    "load_config": ".project.config",
    "name_matches_key": ".stories.keys",
    "normalize_key": ".stories.keys",
    "open_workspace": ".project.workspace",
    "signature": ".layers.model",
}
"""Each public name and the module that defines it."""


__getattr__, __dir__ = lazy_names(__name__, _HOMES)


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
