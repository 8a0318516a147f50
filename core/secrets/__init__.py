"""Secrets: the scan of injected files, what is never staged as a secret, and the one
lock-guarded door to detect-secrets' process-wide settings.

detect-secrets is imported inside the functions that scan, never at import time.
"""

from __future__ import annotations

from .detectors import all_detectors
from .paths import secret_content_reason, secret_name_reason
from .scan import SecretFinding

__all__ = [
    "SecretFinding",
    "all_detectors",
    "secret_content_reason",
    "secret_name_reason",
]
