"""The workspace: the project root promptdeck works in, and its settings.

The root is the first folder, walking up from where promptdeck starts, that holds
``.promptdeck/``, ``_bmad-output/``, ``openspec/`` or one of BMAD's configuration folders
(``_bmad/``, ``bmad/bmm/`` or ``.bmad/bmm/`` of v5 and v6-alpha, ``.bmad-core/`` of v4: their
projects keep the plan elsewhere, often in ``docs/``); failing that, the git top level.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError, WorkspaceError
from ..lean_dataclass import dataclass
from .bmad_folders import BMAD_MARKERS
from .config import Config, load_config

ROOT_MARKERS = (".promptdeck", "_bmad-output", "openspec", *BMAD_MARKERS)


def find_root(start: Path) -> Path:
    """Return the workspace root for ``start`` (see module docstring).

    Raises:
        WorkspaceError: no marker folder and no git repository above ``start``.
    """
    start = start.resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).is_dir() for marker in ROOT_MARKERS):
            return folder
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    raise WorkspaceError(
        f"no workspace found at or above {start}: expected a folder holding "
        f"{', '.join(ROOT_MARKERS)} or a git repository (use --root PATH)"
    )


@dataclass(frozen=True)
class Workspace:
    """A project root and its settings."""

    root: Path
    config: Config

    def path(self, relpath: str) -> Path:
        """The absolute path of a root-relative path."""
        return self.root / relpath

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, with forward slashes; ``path`` must lie inside."""
        return path.resolve().relative_to(self.root).as_posix()

    def contains(self, path: Path) -> bool:
        """True when ``path``, with every symlink resolved, lies inside the root.

        A symlink loop or a path that cannot be resolved is not inside.
        """
        try:
            path.resolve().relative_to(self.root)
        except (ValueError, OSError, RuntimeError):
            return False
        return True


def open_workspace(
    root: str | os.PathLike[str] | None = None, cwd: Path | None = None
) -> Workspace:
    """Open the workspace at ``root`` (``--root``), or find it from ``cwd``.

    Raises:
        UsageError: ``root`` is given but is not a folder.
        WorkspaceError: no root can be found.
        ConfigError: the workspace's config file is malformed.
    """
    if root is not None:
        path = Path(root).expanduser()
        if not path.is_dir():
            raise UsageError(f"--root {root}: not a folder")
        resolved = path.resolve()
    else:
        resolved = find_root(cwd or Path.cwd())
    return Workspace(root=resolved, config=load_config(resolved))


def ensure_inside(root: Path, path: Path, what: str) -> None:
    """Refuse to write ``path`` where a symlink would lead it out of the project at ``root``.

    Raises:
        UsageError: ``path`` resolves outside ``root`` (exit 2), naming ``what`` it is.
    """
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        raise UsageError(
            f"{what} {path} leads outside the project (a symlink?); promptdeck writes only "
            "inside the project"
        ) from None
