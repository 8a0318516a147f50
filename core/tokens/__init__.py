"""Tokens: exact meters (bytes at once, tokens with tiktoken, offline) and the count cache that
remembers counts across processes by content hash.

tiktoken is imported when an encoder is first built, never at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .answers import (
        Answer,
        ReadRecorder,
        answer_key,
        inputs_key,
        own_cache_files,
        remember,
        remember_parts,
        remembered,
        remembered_parts,
    )
    from .cache import default_path
    from .context_window import ContextUse, context_use, rules_read_twice
    from .counter import ARGV_LIMIT_BYTES, Meter, TokenCounter, get_counter
    from .encoder_process import (
        release_encoder_processes,
        start_encoder_process,
        stop_encoder_processes,
    )
    from .generated_code import install_code_memory, save_code_memory
    from .pricing import priced_model
    from .results import results_path, shared_results

_HOMES = {
    "Answer": ".answers",
    "answer_key": ".answers",
    "inputs_key": ".answers",
    "own_cache_files": ".answers",
    "ReadRecorder": ".answers",
    "remember": ".answers",
    "remember_parts": ".answers",
    "remembered": ".answers",
    "remembered_parts": ".answers",
    "default_path": ".cache",
    "context_use": ".context_window",
    "ContextUse": ".context_window",
    "rules_read_twice": ".context_window",
    "ARGV_LIMIT_BYTES": ".counter",
    "get_counter": ".counter",
    "Meter": ".counter",
    "TokenCounter": ".counter",
    "release_encoder_processes": ".encoder_process",
    "start_encoder_process": ".encoder_process",
    "stop_encoder_processes": ".encoder_process",
    "install_code_memory": ".generated_code",
    "save_code_memory": ".generated_code",
    "priced_model": ".pricing",
    "results_path": ".results",
    "shared_results": ".results",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "ARGV_LIMIT_BYTES",
    "Answer",
    "ContextUse",
    "Meter",
    "ReadRecorder",
    "TokenCounter",
    "answer_key",
    "context_use",
    "default_path",
    "get_counter",
    "inputs_key",
    "install_code_memory",
    "own_cache_files",
    "priced_model",
    "release_encoder_processes",
    "remember",
    "remember_parts",
    "remembered",
    "remembered_parts",
    "results_path",
    "rules_read_twice",
    "save_code_memory",
    "shared_results",
    "start_encoder_process",
    "stop_encoder_processes",
]
