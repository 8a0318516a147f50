"""promptdeck's engine: workspaces, stories, injection, prompts, runs. No UI import below here.

The public API is re-exported here; every face (the CLI, the app) calls these same functions.
"""

from __future__ import annotations

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
from .keys import name_matches_key, normalize_key
from .stories import SkippedFile, Story, StoryCatalog, Task
from .tokens import ARGV_LIMIT_BYTES, Meter, TokenCounter, get_counter
from .workspace import Workspace, find_root, open_workspace

__all__ = [
    "ARGV_LIMIT_BYTES",
    "ComposeError",
    "Config",
    "ConfigError",
    "InjectionTooLarge",
    "Meter",
    "PromptdeckError",
    "SkippedFile",
    "Story",
    "StoryCatalog",
    "StoryNotFound",
    "Task",
    "TokenCounter",
    "UsageError",
    "Workspace",
    "WorkspaceError",
    "find_root",
    "get_counter",
    "load_config",
    "name_matches_key",
    "normalize_key",
    "open_workspace",
]
