"""The user's own folders for promptdeck: ``$XDG_CONFIG_HOME/promptdeck`` (the app's settings,
the trusted configs) and ``$XDG_CACHE_HOME/promptdeck`` (remembered token counts).

One rule, the XDG Base Directory one: an unset, empty or relative value is ignored and the
default under the home folder is used. A relative value would otherwise point into whatever
folder promptdeck runs in — a cloned repository, which must never hold what the user trusts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
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
