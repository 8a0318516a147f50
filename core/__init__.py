"""promptdeck's engine: workspaces, stories, injection, prompts, runs. No UI import below here.

The public API is re-exported here; every face (the CLI, the app) calls these same functions.
"""

from __future__ import annotations

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
