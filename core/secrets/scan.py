"""The secret scan of every injected file, with the ``detect-secrets`` library.

A cloned repository may hold an API key in a file promptdeck would send to the model. Each
file's text is scanned before it is shown as part of a prompt; a finding names the file, the
line and the kind of secret (``AWS Access Key``, ``Private Key`` …) — never the secret itself.

Every plugin of detect-secrets is on, with the library's default filters (placeholders,
templated values, UUIDs, indirect references …), as ``detect-secrets scan`` runs them — with one
change of order: the indirect-reference filter (``secret = get_key()``) runs a regex that costs
milliseconds on every long prose line before any plugin looks at it, which made a 150 KB story
take seconds; it is applied here to the lines with a finding only, with the same verdict.

detect-secrets keeps its settings in a process-wide object, shared with the staging check of
:mod:`.paths`: every scan goes through :func:`.detectors.detectors`. Results are
cached by the text's hash, so a file is scanned once per content (about a millisecond per line).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .detectors import all_detectors, detectors

_CACHE_SIZE = 512
_LOCK = threading.Lock()
_CACHE: OrderedDict[tuple[str, str], tuple[SecretFinding, ...]] = OrderedDict()


@dataclass(frozen=True)
class SecretFinding:
    """One likely credential in a file.

    Attributes:
        path: the file, as shown in the injection.
        line: the 1-based line number.
        kind: detect-secrets' name for the kind of secret (never the secret itself).
    """

    path: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of one finding."""
        return {"path": self.path, "line": self.line, "kind": self.kind}


_INDIRECT_REFERENCE = "detect_secrets.filters.heuristic.is_indirect_reference"


def _scan(path: str, text: str) -> tuple[SecretFinding, ...]:
    from detect_secrets.core.scan import scan_file
    from detect_secrets.filters.heuristic import is_indirect_reference

    # detect-secrets scans a file by name (its transformers pick a parser by extension), so
    # the text already read is written to a private temporary copy: the workspace file is
    # never opened a second time.
    suffix = Path(path).suffix if Path(path).suffix.isascii() else ""
    found: set[tuple[int, str]] = set()
    with tempfile.TemporaryDirectory(prefix="promptdeck-scan-") as folder:
        copy = os.path.join(folder, "scanned" + suffix)
        with open(copy, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        with detectors(all_detectors(), frozenset({_INDIRECT_REFERENCE})):
            for secret in scan_file(copy):
                found.add((secret.line_number, secret.type))
    lines = text.splitlines()
    return tuple(
        SecretFinding(path, line, kind)
        for line, kind in sorted(found)
        if not (0 < line <= len(lines) and is_indirect_reference(lines[line - 1].rstrip()))
    )


def scan_text(path: str, text: str) -> tuple[SecretFinding, ...]:
    """The likely credentials in ``text``, the content of the file shown as ``path``.

    Never raises for the content: a scanner failure is reported as one finding of kind
    ``scan failed``, so a file that could not be checked is never passed as clean.
    """
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    key = (digest, Path(path).suffix)
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return tuple(SecretFinding(path, f.line, f.kind) for f in cached)
        try:
            findings = _scan(path, text)
        except Exception as exc:  # the scanner is third-party code: never let it crash a build
            findings = (SecretFinding(path, 0, f"scan failed ({type(exc).__name__})"),)
        _CACHE[key] = findings
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return findings
