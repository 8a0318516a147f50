"""promptdeck's engine: workspaces, stories, injection, prompts, runs. No UI import below here.

The public API is re-exported here; every face (the CLI, the app) calls these same functions.
"""

from __future__ import annotations

from .errors import (
    ComposeError,
    ConfigError,
    InjectionTooLarge,
    PromptdeckError,
    StoryNotFound,
    UsageError,
    WorkspaceError,
)
from .injection.builder import build_injection, build_prompt_system_append, build_story_injection
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
