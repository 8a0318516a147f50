"""Where BMAD's own configuration keeps the artifacts: ``output_folder``,
``implementation_artifacts`` and ``planning_artifacts``.

BMAD v6 writes them to ``_bmad/bmm/config.yaml`` (``output_folder`` also to
``_bmad/core/config.yaml``); from v6.11 they are layered TOML, most specific first:
``_bmad/custom/config.user.toml``, ``_bmad/custom/config.toml``, ``_bmad/config.user.toml``,
``_bmad/config.toml`` — ``output_folder`` under ``[core]``, the artifact folders under
``[modules.bmm]`` (either table is read for each). The first file that sets a value wins; the
TOML layers come before the older YAML files.

Values hold placeholders: ``{project-root}`` is the project, ``{output_folder}`` the output
folder. A folder is used only when it resolves to a folder inside the project; one outside,
missing, or not a folder (a file, a device, a FIFO) is one line in
:attr:`BmadFolders.problems` and never read. Every file is read through the guarded reader.
Settings the project's ``.promptdeck/config.toml`` gives (``[paths] artifacts``,
``planning``, ``project_context``) always win over BMAD's.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .textfiles import TextProblem, read_text

TomlGuard = Callable[[str, str], None]
"""Refuses (raises :class:`~promptdeck.core.errors.ConfigError`) a TOML text nested too
deeply to parse safely: the settings module's ``check_toml_shape``, passed in because that
module reads this one."""

BMAD_TOML_LAYERS = (
    "_bmad/custom/config.user.toml",
    "_bmad/custom/config.toml",
    "_bmad/config.user.toml",
    "_bmad/config.toml",
)
"""BMAD's layered TOML configuration (v6.11+), most specific first."""
BMAD_YAML_FILES = ("_bmad/bmm/config.yaml", "_bmad/core/config.yaml")
"""BMAD v6's module configuration files, read after the TOML layers."""
BMAD_CONFIG_MAX_BYTES = 256 * 1024
"""A larger BMAD configuration file is refused unread: a real one is a few kilobytes."""

DEFAULT_OUTPUT_FOLDER = "_bmad-output"
_SETTINGS = ("output_folder", "implementation_artifacts", "planning_artifacts")
# The tables each setting is looked for in, in order.
_TABLES = {
    "output_folder": (("core",), ("modules", "bmm")),
    "implementation_artifacts": (("modules", "bmm"), ("core",)),
    "planning_artifacts": (("modules", "bmm"), ("core",)),
}
_YAML_LINE = re.compile(r"^(?P<key>[A-Za-z_]+)\s*:\s*(?P<value>.*?)\s*$")
_PLACEHOLDER = re.compile(r"\{(?P<name>[^{}]*)\}")


@dataclass(frozen=True)
class BmadFolders:
    """BMAD's configured folders, root-relative, each None when BMAD's configuration does not
    set it or it cannot be used.

    Attributes:
        output: the output folder (``_bmad-output`` by default).
        artifacts: the implementation artifacts folder (sprint-status, story files).
        planning: the planning artifacts folder (epics, PRD).
        origins: one line per folder taken, naming the file and setting it came from.
        problems: ``(file, why)`` for each value that was set but could not be used.
    """

    output: str | None = None
    artifacts: str | None = None
    planning: str | None = None
    origins: tuple[str, ...] = ()
    problems: tuple[tuple[str, str], ...] = ()


def _table(data: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    current: Any = data
    for name in path:
        current = current.get(name) if isinstance(current, dict) else None
    return current if isinstance(current, dict) else None


def _toml_settings(text: str, guard: TomlGuard) -> dict[str, str]:
    guard(text, "")
    data = tomllib.loads(text)
    found: dict[str, str] = {}
    for setting in _SETTINGS:
        for path in _TABLES[setting]:
            table = _table(data, path)
            value = table.get(setting) if table is not None else None
            if isinstance(value, str) and value.strip():
                found[setting] = value.strip()
                break
    return found


def _yaml_settings(text: str) -> dict[str, str]:
    """The settings among a YAML file's top-level ``key: value`` lines (BMAD writes them
    flat, quoted or plain)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _YAML_LINE.match(line)
        if match is None or match.group("key") not in _SETTINGS:
            continue
        value = match.group("value")
        if value[:1] in "'\"" and len(value) > 1 and value[-1] == value[0]:
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].strip()
        if value:
            found.setdefault(match.group("key"), value)
    return found


def _settings(
    root: Path, guard: TomlGuard
) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str]]]:
    """Each setting with its value and the file it came from, and the files that could not
    be read."""
    found: dict[str, tuple[str, str]] = {}
    problems: list[tuple[str, str]] = []
    for rel in (*BMAD_TOML_LAYERS, *BMAD_YAML_FILES):
        text = read_text(root / rel, root, limit=BMAD_CONFIG_MAX_BYTES)
        if isinstance(text, TextProblem):
            if text.reason not in ("missing", "empty"):
                problems.append((rel, f"BMAD's configuration could not be read ({text})"))
            continue
        try:
            values = _toml_settings(text, guard) if rel.endswith(".toml") else _yaml_settings(text)
        except (tomllib.TOMLDecodeError, ConfigError, RecursionError) as exc:
            problems.append((rel, f"BMAD's configuration is not valid TOML ({exc})"))
            continue
        for setting, value in values.items():
            found.setdefault(setting, (value, rel))
    return found, problems


def _resolve(raw: str, root: Path, output: str) -> tuple[str | None, str]:
    """A configured folder as a root-relative path, or None and why it cannot be used."""
    unknown = [
        m.group(0)
        for m in _PLACEHOLDER.finditer(raw)
        if m.group("name") not in ("project-root", "project_root", "output_folder")
    ]
    if unknown:
        return None, f"holds the placeholder {unknown[0]}, which promptdeck cannot fill"
    if "\0" in raw:
        return None, "holds a NUL byte"
    text = raw.replace("{output_folder}", output)
    placed = re.sub(r"^\{project[-_]root\}/*", "", text)
    path = root / placed  # an absolute path stays itself, and is checked like any other
    try:
        real = path.resolve()
        rel = real.relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return None, "points outside the project; not read"
    if not real.exists():
        return None, "does not exist"
    if not real.is_dir():
        return None, "is not a folder (a file, device or FIFO); not read"
    return rel or ".", ""


def read_bmad_folders(root: Path, guard: TomlGuard) -> BmadFolders:
    """BMAD's configured folders for the project at ``root`` (see the module docstring);
    ``guard`` checks each TOML text before it is parsed."""
    found, problems = _settings(root, guard)
    origins: list[str] = []
    resolved: dict[str, str | None] = {}
    output = DEFAULT_OUTPUT_FOLDER
    for setting in _SETTINGS:
        if setting not in found:
            resolved[setting] = None
            continue
        value, rel = found[setting]
        folder, why = _resolve(value, root, output)
        resolved[setting] = folder
        if folder is None:
            problems.append((rel, f"{setting} '{value}' {why}"))
            continue
        origins.append(f"{setting} = {folder} (from {rel})")
        if setting == "output_folder":
            output = folder
    return BmadFolders(
        output=resolved["output_folder"],
        artifacts=resolved["implementation_artifacts"],
        planning=resolved["planning_artifacts"],
        origins=tuple(origins),
        problems=tuple(problems),
    )
