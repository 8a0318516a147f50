"""Export a composed prompt's five files (``system.md``, ``user.md``, ``messages.json``,
``injection.xml``, ``layers.json``) into a folder inside the project — byte for byte what
the preview shows, never over an existing file, never outside the project.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import UsageError
from ..project.state_folder import STATE_DIRNAME, state_dir
from ..project.workspace import Workspace
from .request import ComposedPrompt

EXPORTS_RELPATH = ".promptdeck/exports"
EXPORT_NAMES = ("system.md", "user.md", "messages.json", "injection.xml", "layers.json")


def export_files(prompt: ComposedPrompt) -> dict[str, str]:
    """The five files' names and exact contents."""
    layers = [layer.to_dict() for layer in prompt.layers]
    return {
        "system.md": prompt.system,
        "user.md": prompt.user,
        "messages.json": json.dumps(list(prompt.messages), indent=2, ensure_ascii=False) + "\n",
        "injection.xml": prompt.injection.text,
        "layers.json": json.dumps(layers, indent=2, ensure_ascii=False) + "\n",
    }


def default_export_dir(workspace: Workspace, prompt: ComposedPrompt) -> Path:
    """``.promptdeck/exports/<story>-<phase>-<mode>``, numbered when that folder exists."""
    request = prompt.request
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{request.story_id}-{request.phase}-{request.mode}")
    base = workspace.path(EXPORTS_RELPATH) / stem
    candidate, number = base, 2
    while candidate.exists():
        candidate = base.with_name(f"{stem}-{number}")
        number += 1
    return candidate


def inside_project(root: Path, folder: Path) -> Path:
    """``folder`` resolved (every existing symlink on the way followed), when that lies inside
    the project ``root``.

    Raises:
        UsageError: it leads outside (a symlinked ``.promptdeck/exports``, ``..``, an absolute
            path elsewhere): nothing is created.
    """
    resolved = folder.resolve()
    try:
        resolved.relative_to(root.resolve())
    except ValueError:
        raise UsageError(
            f"{folder} leads outside the project (a symlink?); exports are written only "
            f"inside {root}"
        ) from None
    return resolved


def _under_state_folder(root: Path, folder: Path) -> bool:
    absolute = folder if folder.is_absolute() else root / folder
    try:
        parts = absolute.relative_to(root).parts
    except ValueError:
        return False
    return bool(parts) and parts[0] == STATE_DIRNAME


def write_export(folder: Path, files: dict[str, str], *, root: Path) -> list[Path]:
    """Write ``files`` into ``folder`` (created if needed) inside the project ``root``, never
    over an existing file and never through a symlink.

    The inside-the-project check comes before any folder is made, and again after.

    Returns:
        The paths written.

    Raises:
        UsageError: ``folder`` leads outside the project (nothing is created).
        FileExistsError: one of the files already exists (nothing is written).
        OSError: the folder cannot be created or written.
    """
    target = inside_project(root, folder)
    existing = [name for name in files if os.path.lexists(target / name)]
    if existing:
        raise FileExistsError(f"{folder}: already holds {', '.join(existing)}")
    if _under_state_folder(root, folder):
        # `.promptdeck/exports -> ../docs` stays inside the project, yet would put the
        # prompts where a phase's commit stages them: promptdeck's own folder has no links.
        state_dir(root, folder)
    target.mkdir(parents=True, exist_ok=True)
    target = inside_project(root, target)
    written: list[Path] = []
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for name, text in files.items():
        path = target / name
        # O_EXCL refuses a file (or a link) that appeared since the check above.
        with os.fdopen(os.open(path, flags, 0o644), "w", encoding="utf-8", newline="") as out:
            out.write(text)
        written.append(path)
    return written
