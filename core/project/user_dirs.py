"""The user's own folders for promptdeck: ``$XDG_CONFIG_HOME/promptdeck`` (the app's settings,
the trusted configs), ``$XDG_CACHE_HOME/promptdeck`` (remembered token counts) and
``$XDG_STATE_HOME/promptdeck`` (the notes the user has read, per project).

One rule, the XDG Base Directory one: an unset, empty or relative value is ignored and the
default under the home folder is used. A relative value would otherwise point into whatever
folder promptdeck runs in — a cloned repository, which must never hold what the user trusts.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path


def _user_folder(variable: str, fallback: str, environ: Mapping[str, str] | None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get(variable, "").strip()
    folder = Path(base) if base and os.path.isabs(base) else Path.home() / fallback
    return folder / "promptdeck"


def config_folder(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/promptdeck``, else ``~/.config/promptdeck``."""
    return _user_folder("XDG_CONFIG_HOME", ".config", environ)


def cache_folder(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/promptdeck``, else ``~/.cache/promptdeck``."""
    return _user_folder("XDG_CACHE_HOME", ".cache", environ)


def foreign_file(path: Path, is_own: Callable[[bytes], bool], *, head: int = 4096) -> str | None:
    """Why ``path`` (a cache or settings file named by the environment) must not be used: it
    exists and is not promptdeck's own — a user's file, a link, a folder, a FIFO — so opening
    it as ours could replace or damage it. None when it does not exist or is ours.

    Args:
        path: the file the environment names.
        is_own: told the file's first ``head`` bytes, says whether promptdeck wrote it (an
            SQLite header with promptdeck's application id, a JSON format mark…).
        head: how many bytes ``is_own`` needs.

    Returns:
        One line naming the file and the reason, or None.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return f"{path}: cannot be checked ({exc}); not used"
    if stat.S_ISLNK(info.st_mode):
        return f"{path}: a symlink, not a file of promptdeck's own; not used, left as it is"
    if not stat.S_ISREG(info.st_mode):
        return f"{path}: not a regular file; not used, left as it is"
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
        try:
            data = os.read(descriptor, head)
        finally:
            os.close(descriptor)
    except OSError as exc:
        return f"{path}: cannot be read ({exc.strerror}); not used, left as it is"
    if not is_own(data):
        return f"{path}: an existing file that is not promptdeck's own; not used, left as it is"
    return None


def state_folder(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/promptdeck``, else ``~/.local/state/promptdeck``."""
    return _user_folder("XDG_STATE_HOME", ".local/state", environ)


user_state_folder = state_folder
""":func:`state_folder` by the name the room's face gives it (``state_folder`` names a module of
the room too)."""
