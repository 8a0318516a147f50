"""Secrets: the scan of injected files, what is never staged as a secret, and the one
lock-guarded door to detect-secrets' process-wide settings.

detect-secrets is imported inside the functions that scan, never at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .commits import drop_commit_hashes
    from .detectors import all_detectors
    from .paths import secret_content_reason, secret_name_reason
    from .scan import SecretFinding

_HOMES = {
    "all_detectors": ".detectors",
    "drop_commit_hashes": ".commits",
    "secret_content_reason": ".paths",
    "secret_name_reason": ".paths",
    "SecretFinding": ".scan",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "SecretFinding",
    "all_detectors",
    "drop_commit_hashes",
    "secret_content_reason",
    "secret_name_reason",
]
