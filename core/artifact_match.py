"""Which files of the artifacts folder belong to a story: the injection's key match.

A name belongs to a story when it holds the story's key on key boundaries (see
:mod:`.keys`); its shape then says of what kind it is (story, discovery, tech-spec). Listing a
big artifacts folder is most of an injection's cost, so the matches are cached per folder.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from .keys import artifact_category, key_pattern, normalize_key, part_pattern
from .listing import Entry, folder_names, sorted_entries

ArtifactMatch = tuple[str, str, str, str]
"""A file name in the artifacts folder, its path, the story key it belongs to, and its
category (see :func:`~promptdeck.core.keys.artifact_category`)."""

_MATCH_CACHE: dict[tuple[str, tuple[str, ...]], tuple[int, list[ArtifactMatch]]] = {}
_MATCH_CACHE_SIZE = 256
_RACY_SECONDS = 2.0
"""A listing is cached only once its folder's mtime is this old: a file created in the same
clock tick as the listing would otherwise leave the mtime unchanged and the listing stale."""


def matching_artifacts(
    folder: Path,
    keys: list[str],
    extensions: tuple[str, ...] = (".md", ".yaml", ".yml", ".txt"),
    nested: tuple[str, ...] = (),
) -> list[ArtifactMatch]:
    """The regular files (links followed) directly in ``folder`` that belong to one of
    ``keys``, sorted case-insensitively, each with the first key it belongs to and its
    category.

    ``nested`` are the known story keys under ``keys`` (``10-1-5`` under ``10-1``): a name
    starting with one is that story's, never a file of ``keys``.

    Only names ending in one of ``extensions`` (case-insensitive) are candidates, and hidden
    names never are: a ``1-4-deploy.env`` or ``.1-4-notes`` is not a planning document.

    Listing a folder of thousands of artifacts is most of an injection's cost, so the matches
    are cached until the folder's mtime changes (a file added, removed or renamed). Only the
    names are cached: every file is still stat-ed and read fresh at each build.
    """
    wanted = tuple(ext.lower() for ext in extensions)
    try:
        mtime_ns = folder.stat().st_mtime_ns
    except OSError:
        return []
    cache_key = (str(folder), (*keys, "\0", *extensions, "\0", *nested))
    cached = _MATCH_CACHE.get(cache_key)
    if cached is not None and cached[0] == mtime_ns:
        return cached[1]
    names = folder_names(folder)
    if names is None:
        return []
    # One pass finds the few names that hold a key at all; the name's shape then says whose
    # file it is and of what kind (a name starting with another story's key is not this one's).
    # Only visible text documents of the planning kinds are candidates.
    names = [n for n in names if not n.startswith(".") and n.lower().endswith(wanted)]
    held = names_holding_keys(names, keys)
    matches: list[ArtifactMatch] = []
    for entry in sorted_entries(folder, held):
        for key in keys:
            category = artifact_category(entry.name, key, nested)
            if category is not None:
                if _is_file(entry):
                    matches.append((entry.name, entry.path, key, category))
                break
    if time.time() - mtime_ns / 1e9 > _RACY_SECONDS:
        if len(_MATCH_CACHE) >= _MATCH_CACHE_SIZE:
            _MATCH_CACHE.clear()
        _MATCH_CACHE[cache_key] = (mtime_ns, matches)
    return matches


def _is_file(entry: Entry) -> bool:
    try:
        return entry.is_file()
    except OSError:  # a symlink loop, a permission error: not a candidate
        return False


def names_holding_keys(names: list[str], keys: list[str]) -> dict[str, str]:
    """The names holding one of ``keys`` on key boundaries (as :func:`.keys.key_pattern`
    finds them), each with the first key it holds.

    One pass over all the names at once, case-folded, with a plain pattern the regex engine
    can skip ahead on, finds the few candidates; each is then checked with the exact key
    pattern. An order of magnitude faster than a case-insensitive search per name. NUL
    cannot occur in a file name, so it separates them (and no key holds it).
    """
    # Case folding may change a name's length, never its count of NULs: indexes stay right.
    # Two letters a case-insensitive pattern matches with "i" fold to something else: the
    # dotless i (left alone) and the dotted capital İ (to "i" and a combining dot). Both
    # become a plain "i" first; the other such letters (ſ, the Kelvin sign) fold to s and k.
    blob = "\0".join(names).replace("\u0130", "i").casefold().replace("\u0131", "i")
    candidates: set[int] = set()
    for key in keys:
        parts = [part_pattern(part.casefold()) for part in normalize_key(key).split("-") if part]
        index = 0
        counted_to = 0
        for match in re.finditer(r"[-._]".join(parts), blob):
            index += blob.count("\0", counted_to, match.start())
            counted_to = match.start()
            candidates.add(index)
    found: dict[str, str] = {}
    for index in sorted(candidates):
        name = names[index]
        for key in keys:
            if key_pattern(key).search(name) is not None:
                found[name] = key
                break
    return found
