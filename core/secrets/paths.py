"""Which files a phase wrote must never be staged because they look like secrets.

Two checks, each giving a reason a person can act on (never the secret itself):

- the *path*: ``.env`` and ``.env.*`` files, SSH private keys (``id_rsa``, ``id_ed25519`` …,
  not their ``.pub``), key and certificate stores (``*.pem``, ``*.key``, ``*.p12``, ``*.pfx``,
  ``*.jks``, ``*.keystore``), ``.netrc``, ``.pgpass``, ``.npmrc``, ``.pypirc``;
- the *content*: the credential detectors of the maintained ``detect-secrets`` library (AWS,
  OpenAI, GitHub, GitLab, Slack, Stripe, private keys, JWTs, basic-auth URLs …). Its
  high-entropy and keyword detectors are left out: they flag lock files and hashes, and a
  false alarm here would silently keep a phase's real work out of its commit.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from pathlib import PurePosixPath

from .detectors import all_detectors, detectors

SECRET_NAME_PATTERNS = (
    ".env",
    ".env.*",
    "*.env",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_rsa_*",
    "id_ed25519_*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
)
"""File names (matched case-insensitively) that are secrets whatever they hold."""

_NOISY_DETECTORS = frozenset(
    {"Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector", "IPPublicDetector"}
)
CONTENT_SCAN_MAX_BYTES = 2 * 1024 * 1024
"""Content beyond this is not scanned (the staging size limit is usually lower)."""


def secret_name_reason(relpath: str) -> str | None:
    """Why the file at ``relpath`` is a secret by its name alone, or None."""
    name = PurePosixPath(relpath).name.lower()
    if name.endswith(".pub"):
        return None
    for pattern in SECRET_NAME_PATTERNS:
        if fnmatch.fnmatchcase(name, pattern):
            return f"its name looks like a secret ({pattern})"
    return None


def scan_text(text: str) -> list[tuple[int, str]]:
    """Credentials found in ``text``: (line number, kind) pairs — never the secret."""
    from detect_secrets.core.scan import scan_line

    found: list[tuple[int, str]] = []
    with detectors(all_detectors() - _NOISY_DETECTORS):
        for number, line in enumerate(text.splitlines(), start=1):
            if len(line) > 10_000:
                line = line[:10_000]
            for secret in scan_line(line):
                found.append((number, str(secret.type)))
    return found


def secret_content_reason(path: str | os.PathLike[str]) -> str | None:
    """Why the regular file at ``path`` looks like it holds a credential, or None.

    Only a regular file is read (never through a symlink, never a FIFO or device), and only
    its first :data:`CONTENT_SCAN_MAX_BYTES`.
    """
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(CONTENT_SCAN_MAX_BYTES)
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None  # binary: the detectors read text
    found = scan_text(data.decode("utf-8", "replace"))
    if not found:
        return None
    line, kind = found[0]
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return f"it holds what looks like a credential ({kind}, line {line}{more})"
