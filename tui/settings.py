"""The user's own settings for the app: ``$XDG_CONFIG_HOME/promptdeck/settings.toml``.

Only what belongs to the person rather than the workspace lives here (the theme, the keymap,
the phase every story opens on). A
malformed file never stops the app: it starts with defaults and says why, and the file is left
as it is — promptdeck does not write over a file it could not read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from promptdeck.core.atomic import write_whole
from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.phases import PHASE_NAMES
from promptdeck.core.project import config_folder

SETTINGS_FILENAME = "settings.toml"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class UserSettings:
    """Settings remembered between sessions (the theme) and set by hand (the keymap)."""

    theme: str | None = None
    """Name of the theme last chosen in the palette; None means the default theme."""
    keymap: dict[str, str] = field(default_factory=dict)
    """The user's own keys: binding id → keys (``"main.run_phase" = "f5"``, several keys
    separated by commas), from the ``[keymap]`` table. Written by hand, never by promptdeck."""
    open_phase: str | None = None
    """``open_phase = "dev"``: every story opens on this phase instead of the one the flow
    picks (next for unfinished work, the last run's for done work). Written by hand."""


@dataclass(frozen=True)
class LoadedSettings:
    """What :func:`load_settings` found.

    Attributes:
        settings: the settings to use (defaults where the file is missing or malformed).
        path: the file read, or that would be read.
        notice: one line to show the user when the file could not be used, else None.
        writable: False when the file exists but is malformed, so saving must not replace it.
    """

    settings: UserSettings
    path: Path
    notice: str | None = None
    writable: bool = True


def settings_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/promptdeck/settings.toml``, default ``~/.config/promptdeck/``."""
    return config_folder(environ) / SETTINGS_FILENAME


def _read_table(path: Path) -> dict[str, Any]:
    import tomllib  # here: a start with no settings file never loads the parser

    return tomllib.loads(path.read_text(encoding="utf-8"))


def load_settings(path: Path | None = None) -> LoadedSettings:
    """Read the user's settings; a missing file gives defaults, a malformed one a notice."""
    path = path or settings_path()
    if not path.exists():
        return LoadedSettings(UserSettings(), path)
    try:
        data = _read_table(path)
    # ValueError: TOML's own errors, text that is not UTF-8, and the bare ValueError
    # tomllib's `int()` raises for a number of more than 4,300 digits.
    except (OSError, ValueError, RecursionError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc).split("\n")[0]
        return LoadedSettings(
            UserSettings(),
            path,
            notice=f"{path}: not readable TOML ({reason}); using defaults and leaving it as is",
            writable=False,
        )
    theme = data.get("theme")
    if theme is not None and not isinstance(theme, str):
        return LoadedSettings(
            UserSettings(),
            path,
            notice=f"{path}: theme: expected a string; using the default theme",
            writable=False,
        )
    open_phase = data.get("open_phase")
    if open_phase is not None and open_phase not in PHASE_NAMES:
        return LoadedSettings(
            UserSettings(theme=theme),
            path,
            notice=f"{path}: open_phase: expected one of {', '.join(PHASE_NAMES)}; ignored",
        )
    keymap = data.get("keymap", {})
    if not isinstance(keymap, dict) or not all(
        isinstance(key, str) and isinstance(value, str) and value.strip()
        for key, value in keymap.items()
    ):
        return LoadedSettings(
            UserSettings(theme=theme, open_phase=open_phase),
            path,
            notice=f'{path}: [keymap]: expected binding ids = "keys" strings; keymap ignored',
        )
    settings = UserSettings(theme=theme, keymap=dict(keymap), open_phase=open_phase)
    return LoadedSettings(settings, path)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise TypeError(type(value).__name__)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_value(key)


def _dump(data: dict[str, Any]) -> str:
    lines = [
        f"{_toml_key(key)} = {_toml_value(value)}"
        for key, value in data.items()
        if not isinstance(value, dict)
    ]
    for key, table in data.items():
        if isinstance(table, dict):
            lines.append(f"\n[{_toml_key(key)}]")
            lines.extend(f"{_toml_key(sub)} = {_toml_value(value)}" for sub, value in table.items())
    return "\n".join(lines) + "\n"


def save_settings(settings: UserSettings, path: Path | None = None) -> str | None:
    """Remember ``settings``, keeping any other keys the file holds.

    Returns:
        None when saved, else one line saying why the settings were not written (a malformed
        or unwritable file is never replaced).
    """
    path = path or settings_path()
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = _read_table(path)
        except (OSError, ValueError, RecursionError):  # as load_settings says
            return f"{path}: not readable TOML; the theme was not remembered"
    if settings.theme is None:
        data.pop("theme", None)
    else:
        data["theme"] = settings.theme
    try:
        text = _dump(data)
    except TypeError:
        return f"{path}: holds values promptdeck cannot write back; the theme was not remembered"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, text)
    except OSError as exc:
        return f"{path}: cannot write ({exc.strerror}); the theme was not remembered"
    return None
