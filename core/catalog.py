"""The story catalog: both sources side by side, and the text-file checks they share.

:func:`load_catalog` asks each adapter (``sources/bmad.py``, ``sources/openspec.py``) for its
stories and the files it passed over, and returns them as one :class:`StoryCatalog`: BMAD
stories first, in natural key order (``1-10`` after ``1-9``), then OpenSpec changes
alphabetically with their task groups in ``tasks.md`` order.

:func:`read_text_file` and :func:`read_text_head` answer "is this UTF-8 text?" the same way
everywhere: a file is ``empty`` (no bytes, or only whitespace), ``binary`` (holds a NUL byte),
``not-utf8``, ``unreadable``, ``missing``, ``outside-project`` or ``too-large`` — or it is
text. Both go through :mod:`.textfiles`, the one guarded reader: regular files only, inside the
project root, under the size limit, checked from ``stat`` before a byte is read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .stories import SkippedFile, Story, StoryCatalog
from .textfiles import DEFAULT_READ_LIMIT as DEFAULT_READ_LIMIT
from .textfiles import TextProblem as TextProblem
from .textfiles import decode_text, read_file_bytes
from .workspace import Workspace

HEAD_BYTES = 4096
"""How much of a file :func:`read_text_head` reads by default: enough for a first heading."""


def printable_name(name: str) -> str:
    """``name`` as valid text: the bytes of a non-UTF-8 file name shown as U+FFFD.

    Returns ``name`` itself when it is valid UTF-8, so ``printable_name(n) != n`` tells that a
    name cannot be shown, written to JSON or put in a prompt as it is.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return name


def read_text_file(
    path: str | os.PathLike[str],
    *,
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
    listed: bool = False,
) -> str | TextProblem:
    """Read a whole file as UTF-8 text (a leading BOM dropped), through the guarded reader.

    Args:
        path: the file to read.
        root: the project root the file must resolve inside (every workspace reader passes
            it); None skips that check.
        limit: the most bytes read; a larger file is ``too-large`` and is not opened.
        listed: see :func:`read_text_head`.

    Returns:
        The text, or a :class:`TextProblem` saying why the file is not usable text.
    """
    data = read_file_bytes(path, root, limit=limit, listed=listed)
    if isinstance(data, TextProblem):
        return data
    return decode_text(data)


def read_text_head(
    path: str | os.PathLike[str],
    size: int = HEAD_BYTES,
    *,
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
    listed: bool = False,
) -> tuple[str, bool] | TextProblem:
    """Read at most ``size`` bytes of a file as UTF-8 text, through the guarded reader.

    A multi-byte character cut by the limit is left out rather than reported as bad UTF-8.

    Args:
        path: the file to read.
        size: the most bytes to read.
        root: the project root the file must resolve inside; None skips that check.
        limit: a file larger than this is ``too-large`` (from ``stat``), even for a head read.
        listed: a folder listing already showed a regular, non-symlink file inside ``root``
            (see :func:`~promptdeck.core.textfiles.read_file_bytes`).

    Returns:
        ``(text, complete)`` — ``complete`` is True when the whole file was read — or a
        :class:`TextProblem`. ``empty`` is only reported when the whole file was read.
    """
    data = read_file_bytes(path, root, limit=limit, head=size, listed=listed)
    if isinstance(data, TextProblem):
        return data
    complete = len(data) <= size
    result = decode_text(data[:size], complete=complete)
    if isinstance(result, TextProblem):
        return result
    return result, complete


@dataclass(frozen=True)
class SourceResult:
    """What one story source found: its stories in display order, skipped files, warnings."""

    stories: tuple[Story, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[str, ...] = ()


def relpath(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` with forward slashes, without resolving symlinks.

    Paths outside ``root`` (a configured folder such as ``../shared``) stay absolute.
    """
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def natural_key(key: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key for a normalized story key: numbers by value, so ``1-10`` follows ``1-9``.

    Numeric parts sort before alphabetic ones (``1-1`` before ``a-1``).
    """
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in key.split("-"))


def project_context_path(workspace: Workspace) -> str | None:
    """The first configured project-context file that exists, root-relative, or None.

    Args:
        workspace: the workspace whose ``paths.project_context`` list is checked in order.
    """
    for candidate in workspace.config.paths_project_context:
        path = workspace.root / candidate
        if path.is_file():
            return relpath(workspace.root, path)
    return None


def load_catalog(workspace: Workspace) -> StoryCatalog:
    """Every story of the workspace, from both sources, and every file passed over.

    Never raises for a bad story file: each one is a :class:`SkippedFile` with its reason.

    Args:
        workspace: the workspace to scan.

    Returns:
        BMAD stories (natural key order), then OpenSpec stories (changes alphabetically,
        groups in ``tasks.md`` order), with the skipped files and warnings of both sources.
    """
    # Imported here because the adapters use this module's text helpers.
    from .sources import bmad, openspec

    bmad_result = bmad.load_stories(workspace)
    openspec_result = openspec.load_stories(workspace)
    stories: tuple[Story, ...] = bmad_result.stories + openspec_result.stories
    return StoryCatalog(
        stories=stories,
        skipped=bmad_result.skipped + openspec_result.skipped,
        warnings=bmad_result.warnings + openspec_result.warnings,
    )


def where_stories_come_from(workspace: Workspace) -> list[str]:
    """What promptdeck looks for and how to start, for a workspace with no stories (the app's
    empty preview and ``promptdeck stories`` say the same)."""
    config = workspace.config
    return [
        f"No stories found in {workspace.root}.",
        "promptdeck looks for:",
        f"  BMAD: {config.paths_artifacts}/sprint-status.yaml and story files"
        f" {config.paths_artifacts}/<epic>-<story>-<slug>.md",
        f"  OpenSpec: {config.paths_openspec}/changes/<change>/tasks.md (## N. task groups)",
        "To start: create one of those, open another folder (promptdeck --root PATH),"
        " or try the demo (promptdeck demo).",
    ]


def load_story_catalog(workspace: Workspace, story_id: str) -> StoryCatalog:
    """A catalog that is sure to answer ``find(story_id)`` as :func:`load_catalog`'s would.

    A BMAD id is looked up first with a scan narrowed to file names holding its key; an
    OpenSpec id (``change:N``) reads only that change. Whenever the narrowed scan cannot be
    sure — no story file found, or not exactly one story — the full catalog is loaded, so the
    answer and its errors are the full catalog's. This keeps one-story commands (``inspect``,
    ``compose``, ``run``) from reading every story of a large workspace.
    """
    from .keys import normalize_key
    from .sources import bmad, openspec

    wanted = story_id.strip()
    if ":" in wanted:
        change, _, _number = wanted.partition(":")
        change_dir = workspace.root / workspace.config.paths_openspec / "changes" / change
        if change and "/" not in change and change_dir.is_dir():
            result = openspec.load_change(workspace, change_dir)
            narrowed = StoryCatalog(result.stories, result.skipped, result.warnings)
            if any(s.id.lower() == wanted.lower() for s in narrowed.stories):
                return narrowed
    elif normalize_key(wanted):
        result = bmad.load_stories(workspace, only_key=normalize_key(wanted))
        if len(result.stories) == 1 and result.stories[0].path is not None:
            return StoryCatalog(result.stories, result.skipped, result.warnings)
    return load_catalog(workspace)
