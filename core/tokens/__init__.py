"""Tokens: exact meters (bytes at once, tokens with tiktoken, offline) and the count cache that
remembers counts across processes by content hash.

tiktoken is imported when an encoder is first built, never at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .answers import Answer, ReadRecorder, answer_key, remember, remembered
    from .cache import default_path
    from .counter import ARGV_LIMIT_BYTES, Meter, TokenCounter, get_counter
    from .pricing import priced_model
    from .results import results_path, shared_results

_HOMES = {
    "Answer": ".answers",
    "ReadRecorder": ".answers",
    "answer_key": ".answers",
    "remember": ".answers",
    "remembered": ".answers",
    "default_path": ".cache",
    "ARGV_LIMIT_BYTES": ".counter",
    "Meter": ".counter",
    "TokenCounter": ".counter",
    "get_counter": ".counter",
    "priced_model": ".pricing",
    "results_path": ".results",
    "shared_results": ".results",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "ARGV_LIMIT_BYTES",
    "Answer",
    "Meter",
    "ReadRecorder",
    "TokenCounter",
    "answer_key",
    "default_path",
    "get_counter",
    "priced_model",
    "remember",
    "remembered",
    "results_path",
    "shared_results",
]
