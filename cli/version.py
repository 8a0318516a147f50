"""The program's name and installed version, apart from the parser: ``promptdeck --version``
and the parser's ``--version`` action both read them, and neither imports the other."""

from __future__ import annotations

import os
import sys

PROG = "promptdeck"
DISTRIBUTION = "promptdeck"
"""The installed distribution whose version ``promptdeck --version`` prints."""


def installed_version() -> str:
    """The version of the installed ``promptdeck`` distribution (its metadata, not a constant).

    Read from the package metadata so it is the version pip installed, editable or not;
    ``unknown`` when promptdeck runs from files that were never installed. The metadata file
    is looked for on ``sys.path`` first (a directory listing per entry); only if that finds
    nothing is ``importlib.metadata`` asked, whose import alone costs more than the rest of
    ``promptdeck --version``.
    """
    found = _metadata_version()
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


def _metadata_version() -> str | None:
    """The ``Version:`` of the first ``promptdeck-*.dist-info/METADATA`` on ``sys.path``."""
    prefix = f"{DISTRIBUTION}-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not (name.startswith(prefix) and name.endswith(".dist-info")):
                continue
            try:
                with open(os.path.join(entry, name, "METADATA"), encoding="utf-8") as handle:
                    for line in handle:
                        if line.startswith("Version:"):
                            return line.split(":", 1)[1].strip() or None
                        if not line.strip():
                            break  # the headers end at the first blank line
            except OSError:
                continue
    return None
