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

import codecs
import fnmatch
import os
import stat
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import BinaryIO

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
SEGMENT_CHARS = 16 * 1024
"""The most of one line the detectors see at once: a longer line is scanned in overlapping
windows of this size, so a key far along a minified or binary line is still seen and no regex
runs on megabytes at once (the time stays linear in the file's size)."""
SEGMENT_OVERLAP = 4 * 1024
"""How much consecutive windows of one line share: a credential shorter than this (every kind
the detectors know, a private key's header included) lies whole in one of them."""
_READ_BYTES = 1024 * 1024
_BLOCK_CHARS = 64 * 1024
"""The prefilter's anchors run over this much text at once; only the lines they mark are
handed to the detectors."""
_MAX_KEPT = 1000
"""Findings counted beyond this are not kept (the reason names the first and a count)."""


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
    """Credentials found in ``text``: (line number, kind) pairs — never the secret. Lines are
    numbered by ``\n``, and every line is scanned whole, however long."""
    return _scan_segments(_segments(iter((text,))))


def _segments(pieces: Iterator[str]) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of the text arriving in ``pieces``, a line longer
    than :data:`SEGMENT_CHARS` as overlapping windows; memory bounded by a piece and a window."""
    number = 1
    pending = ""
    for piece in pieces:
        parts = piece.split("\n")
        for index, part in enumerate(parts):
            pending += part
            ended = index < len(parts) - 1
            start = 0
            # A line still arriving keeps its last window's worth: it may continue a key.
            while len(pending) - start > SEGMENT_CHARS:
                yield number, pending[start : start + SEGMENT_CHARS]
                start += SEGMENT_CHARS - SEGMENT_OVERLAP
            pending = pending[start:]
            if ended:
                yield number, pending.rstrip("\r")
                number += 1
                pending = ""
    if pending:
        yield number, pending


def _scan_segments(segments: Iterator[tuple[int, str]]) -> list[tuple[int, str]]:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import get_plugins

    from .scan import candidate_lines

    found: dict[tuple[int, str], None] = {}
    with detectors(all_detectors() - _NOISY_DETECTORS):
        plugins = frozenset(type(plugin).__name__ for plugin in get_plugins())
        block: list[tuple[int, str]] = []
        size = 0

        def flush() -> None:
            wanted = candidate_lines([text for _, text in block], plugins)
            for index, (number, text) in enumerate(block, start=1):
                if wanted is not None and index not in wanted:
                    continue
                for secret in scan_line(text):
                    if len(found) < _MAX_KEPT:
                        found[(number, str(secret.type))] = None

        for segment in segments:
            block.append(segment)
            size += len(segment[1])
            if size >= _BLOCK_CHARS:
                flush()
                block, size = [], 0
        if block:
            flush()
    return list(found)


def _read_pieces(handle: BinaryIO) -> Iterator[str]:
    """The file's text, decoded as UTF-8 piece by piece: an undecodable byte is replaced and
    the rest still read, so a key in a binary file is still seen. NUL bytes are dropped, so a
    key in UTF-16 text (each ASCII letter followed or preceded by a NUL) reads as itself."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    while chunk := handle.read(_READ_BYTES):
        yield decoder.decode(chunk).replace("\0", "")
    yield decoder.decode(b"", final=True).replace("\0", "")


def secret_content_reason(path: str | os.PathLike[str]) -> str | None:
    """Why the regular file at ``path`` looks like it holds a credential, or None.

    Only a regular file is read (never through a symlink, never a FIFO or device), all of it,
    a megabyte at a time: a file that can be staged is checked whole, whatever its size, its
    lines' length or its bytes (a binary file's text is scanned too).
    """
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return None  # gone, or not a regular file any more: nothing to stage
    try:
        with os.fdopen(fd, "rb") as handle:
            found = _scan_segments(_segments(_read_pieces(handle)))
    except OSError as exc:
        # A file that could not be checked is never staged as if it were clean.
        return f"it could not be read to check it for credentials ({exc.strerror or exc})"
    if not found:
        return None
    line, kind = found[0]
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return f"it holds what looks like a credential ({kind}, line {line}{more})"
