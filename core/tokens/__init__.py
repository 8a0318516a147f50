"""Tokens: exact meters (bytes at once, tokens with tiktoken, offline) and the count cache that
remembers counts across processes by content hash.

tiktoken is imported when an encoder is first built, never at import time.
"""

from __future__ import annotations

from .context_window import ContextUse, context_use, rules_read_twice
from .counter import ARGV_LIMIT_BYTES, Meter, TokenCounter, get_counter

__all__ = [
    "ARGV_LIMIT_BYTES",
    "ContextUse",
    "Meter",
    "TokenCounter",
    "context_use",
    "get_counter",
    "rules_read_twice",
]
