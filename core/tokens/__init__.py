"""Tokens: exact meters (bytes at once, tokens with tiktoken, offline) and the count cache that
remembers counts across processes by content hash.

tiktoken is imported when an encoder is first built, never at import time.
"""

from __future__ import annotations

from .answers import Answer, ReadRecorder, answer_key, remember, remembered
from .cache import default_path
from .context_window import ContextUse, context_use, rules_read_twice
from .counter import ARGV_LIMIT_BYTES, Meter, TokenCounter, get_counter
from .pricing import priced_model
from .results import results_path, shared_results

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
    "priced_model",
    "remember",
    "remembered",
    "results_path",
    "rules_read_twice",
    "shared_results",
]
