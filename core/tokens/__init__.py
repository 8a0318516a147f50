"""Tokens: exact meters (bytes at once, tokens with tiktoken, offline) and the count cache that
remembers counts across processes by content hash.

tiktoken is imported when an encoder is first built, never at import time.
"""

from __future__ import annotations

from .counter import ARGV_LIMIT_BYTES, Meter, TokenCounter, get_counter

__all__ = [
    "ARGV_LIMIT_BYTES",
    "Meter",
    "TokenCounter",
    "get_counter",
]
