"""Where BMAD's own configuration keeps the plan, in every generation of BMAD.

* BMAD v6 writes ``output_folder``, ``implementation_artifacts`` and ``planning_artifacts`` to
  ``_bmad/bmm/config.yaml`` (``output_folder`` also to ``_bmad/core/config.yaml``); from v6.11
  they are layered TOML, most specific first: ``_bmad/custom/config.user.toml``,
  ``_bmad/custom/config.toml``, ``_bmad/config.user.toml``, ``_bmad/config.toml`` —
  ``output_folder`` under ``[core]``, the artifact folders under ``[modules.bmm]`` (either table
  is read for each). The first file that sets a value wins; the TOML layers come before the
  YAML files.
* BMAD v5 and v6-alpha write ``bmad/bmm/config.yaml`` (or ``.bmad/bmm/config.yaml``, or
  ``_bmad/bmm/config.yaml``) with
  ``output_folder``, ``sprint_artifacts`` (the folder of ``sprint-status.yaml``) and
  ``dev_story_location`` (the story files).
* BMAD v4 writes ``.bmad-core/core-config.yaml``, nested YAML: ``devStoryLocation`` (the story
  files, which are the plan), ``prd.prdFile``, ``prd.prdSharded`` / ``prdShardedLocation``,
  ``architecture.architectureSharded`` / ``architectureShardedLocation`` and
  ``devLoadAlwaysFiles`` (files the v4 dev agent loads for every story). Only these keys are
  looked at, through the safe YAML loader's node tree (nothing is constructed, so a huge
  number or an alias costs nothing), from a file of at most :data:`V4_CONFIG_MAX_BYTES`.

Values hold placeholders: ``{project-root}`` is the project, ``{output_folder}`` the output
folder. A folder is used only when it resolves to a folder inside the project; one outside,
missing, or not a folder (a file, a device, a FIFO) is one line in
:attr:`BmadFolders.problems`, naming the key and its ``file:line``, and is never read. Every
file is read through the guarded reader. Settings the project's ``.promptdeck/config.toml``
gives (``[paths] artifacts``, ``planning``, ``project_context``) always win over BMAD's.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..lean_dataclass import dataclass
from .textfiles import LONG_NUMBER, TextProblem, check_toml_shape, read_text

BMAD_TOML_LAYERS = (
    "_bmad/custom/config.user.toml",
    "_bmad/custom/config.toml",
    "_bmad/config.user.toml",
    "_bmad/config.toml",
)
"""BMAD's layered TOML configuration (v6.11+), most specific first."""
BMAD_YAML_FILES = (
    "_bmad/bmm/config.yaml",
    "_bmad/core/config.yaml",
    "bmad/bmm/config.yaml",
    "bmad/core/config.yaml",
    ".bmad/bmm/config.yaml",
    ".bmad/core/config.yaml",
)
"""BMAD v6's module configuration files, then v5's and v6-alpha's (installed as ``bmad/`` or,
from 6.0.0-alpha.10 on, the hidden ``.bmad/``), read after the TOML layers."""
V4_CONFIG = ".bmad-core/core-config.yaml"
"""BMAD v4's configuration."""
BMAD_MARKERS = ("_bmad", "bmad/bmm", ".bmad/bmm", ".bmad-core")
"""Folders that hold BMAD's configuration: a project with none of them has none to read."""
BMAD_CONFIG_MAX_BYTES = 256 * 1024
"""A larger BMAD configuration file is refused unread: a real one is a few kilobytes."""
V4_CONFIG_MAX_BYTES = 64 * 1024
"""A larger ``core-config.yaml`` is refused unread (a real one is 2–4 KB): its YAML is parsed
by the pure-Python safe loader, whose cost grows with the text."""

DEFAULT_OUTPUT_FOLDER = "_bmad-output"
_SETTINGS = (
    "output_folder",
    "implementation_artifacts",
    "sprint_artifacts",
    "dev_story_location",
    "planning_artifacts",
)
ARTIFACT_SETTINGS = ("implementation_artifacts", "sprint_artifacts", "dev_story_location")
"""The settings that name the plan's folder, in the order they are preferred: v6's, then
v5's folder of ``sprint-status.yaml``, then its story folder."""
_MODULE_FIRST = (("modules", "bmm"), ("core",))
# The tables each setting is looked for in, in order.
_TABLES = {
    "output_folder": (("core",), ("modules", "bmm")),
    **{setting: _MODULE_FIRST for setting in _SETTINGS[1:]},
}
# The value runs to the line's end and is trimmed in code: a lazy `(.*?)` before trailing
# blanks takes time growing with the square of a run of spaces.
_YAML_LINE = re.compile(r"^(?P<key>[A-Za-z_]+)\s*:(?P<value>.*)$")
_PLACEHOLDER = re.compile(r"\{(?P<name>[^{}]*)\}")
_SHOWN = 80
"""The most characters of a configured value a problem line repeats."""


@dataclass(frozen=True)
class BmadFolders:
    """BMAD's configured folders, root-relative, each None when BMAD's configuration does not
    set it or it cannot be used.

    Attributes:
        output: the output folder (``_bmad-output`` by default).
        artifacts: the plan's folder: v6's implementation artifacts, v5's sprint artifacts or
            story folder, v4's ``devStoryLocation``.
        planning: the planning artifacts folder (epics, PRD).
        origins: one line per folder taken, naming the file and setting it came from.
        problems: ``(file:line, why)`` for each value that was set but could not be used.
        artifacts_origin: which setting named ``artifacts`` and where
            (``sprint_artifacts in bmad/bmm/config.yaml:12``); empty when none did.
        output_origin: the same for ``output``.
        named: ``(value as written, where)`` of every plan-folder setting that could not be
            used, so the plan's choice can say why it passed it over.
        always_load: v4's ``devLoadAlwaysFiles`` inside the project, root-relative, as
            written (existing or not).
        always_load_origin: ``.bmad-core/core-config.yaml:LINE`` of that list, or empty.
    """

    output: str | None = None
    artifacts: str | None = None
    planning: str | None = None
    origins: tuple[str, ...] = ()
    problems: tuple[tuple[str, str], ...] = ()
    artifacts_origin: str = ""
    output_origin: str = ""
    named: tuple[tuple[str, str], ...] = ()
    always_load: tuple[str, ...] = ()
    always_load_origin: str = ""


def has_bmad_config(root: Path) -> bool:
    """True when the project holds one of BMAD's configuration folders."""
    return any((root / marker).is_dir() for marker in BMAD_MARKERS)


def shown(value: str) -> str:
    """``value`` cut to a length a problem line can repeat."""
    return value if len(value) <= _SHOWN else value[: _SHOWN - 1] + "…"


def _table(data: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    current: Any = data
    for name in path:
        current = current.get(name) if isinstance(current, dict) else None
    return current if isinstance(current, dict) else None


def _toml_line(text: str, setting: str) -> int:
    """The line that sets ``setting`` (tomllib keeps no positions), 1 when none is found."""
    match = re.search(rf"^[ \t]*[\"']?{setting}[\"']?[ \t]*=", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _toml_settings(text: str) -> dict[str, tuple[str, int]]:
    import tomllib  # here: a project without BMAD's TOML layers never loads the parser

    check_toml_shape(text, "")
    data = tomllib.loads(text)
    found: dict[str, tuple[str, int]] = {}
    for setting in _SETTINGS:
        for path in _TABLES[setting]:
            table = _table(data, path)
            value = table.get(setting) if table is not None else None
            if isinstance(value, str) and value.strip():
                found[setting] = (value.strip(), _toml_line(text, setting))
                break
    return found


def _yaml_settings(text: str) -> dict[str, tuple[str, int]]:
    """The settings among a YAML file's top-level ``key: value`` lines (BMAD writes them
    flat, quoted or plain), each with its line."""
    found: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = _YAML_LINE.match(line)
        if match is None or match.group("key") not in _SETTINGS:
            continue
        value = match.group("value").strip()
        if value[:1] in "'\"" and len(value) > 1 and value[-1] == value[0]:
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].strip()
        if value:
            found.setdefault(match.group("key"), (value, number))
    return found


def _settings(root: Path) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str]]]:
    """Each setting with its value and the ``file:line`` it came from, and the files that
    could not be read."""
    found: dict[str, tuple[str, str]] = {}
    problems: list[tuple[str, str]] = []
    for rel in (*BMAD_TOML_LAYERS, *BMAD_YAML_FILES):
        if not (root / rel).parent.is_dir():
            continue  # one stat for a generation the project does not use
        text = read_text(root / rel, root, limit=BMAD_CONFIG_MAX_BYTES)
        if isinstance(text, TextProblem):
            if text.reason not in ("missing", "empty"):
                problems.append((rel, f"BMAD's configuration could not be read ({text})"))
            continue
        try:
            values = _toml_settings(text) if rel.endswith(".toml") else _yaml_settings(text)
        except (ValueError, ConfigError, RecursionError) as exc:
            # A ValueError is tomllib's TOMLDecodeError, or the bare one its `int()` raises for
            # a number of more than 4,300 digits (no setting is that long).
            reason = LONG_NUMBER if type(exc) is ValueError else exc
            problems.append((rel, f"BMAD's configuration is not valid TOML ({reason})"))
            continue
        for setting, (value, line) in values.items():
            found.setdefault(setting, (value, f"{rel}:{line}"))
    return found, problems


def _inside(raw: str, root: Path, output: str) -> tuple[Path | None, str, str]:
    """A configured path, placeholders filled, as ``(real path, root-relative, "")``, or
    ``(None, "", why)`` when it cannot name anything inside the project."""
    unknown = [
        m.group(0)
        for m in _PLACEHOLDER.finditer(raw)
        if m.group("name") not in ("project-root", "project_root", "output_folder")
    ]
    if unknown:
        return None, "", f"holds the placeholder {shown(unknown[0])}, which promptdeck cannot fill"
    if "\0" in raw:
        return None, "", "holds a NUL byte"
    text = raw.replace("{output_folder}", output)
    placed = re.sub(r"^\{project[-_]root\}/*", "", text)
    path = root / placed  # an absolute path stays itself, and is checked like any other
    try:
        real = path.resolve()
        rel = real.relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return None, "", "points outside the project; not read"
    return real, rel or ".", ""


def _resolve(raw: str, root: Path, output: str) -> tuple[str | None, str]:
    """A configured folder as a root-relative path, or None and why it cannot be used."""
    real, rel, why = _inside(raw, root, output)
    if real is None:
        return None, why
    try:
        if not real.exists():
            return None, "does not exist"
        if not real.is_dir():
            return None, "is not a folder (a file, device or FIFO); not read"
    except OSError as exc:
        return None, f"cannot be looked at ({exc.strerror or exc})"
    return rel, ""


@dataclass(frozen=True)
class _V4:
    """What ``core-config.yaml`` says, each value with its 1-based line."""

    settings: dict[str, tuple[str, int]]
    always_load: tuple[tuple[str, int], ...] = ()
    always_load_line: int = 0
    """The line of the ``devLoadAlwaysFiles`` key; 0 when the file has no such list."""


_V4_PATHS = {
    ("devStoryLocation",): "devStoryLocation",
    ("prd", "prdFile"): "prd.prdFile",
    ("prd", "prdSharded"): "prd.prdSharded",
    ("prd", "prdShardedLocation"): "prd.prdShardedLocation",
    ("architecture", "architectureSharded"): "architecture.architectureSharded",
    ("architecture", "architectureShardedLocation"): "architecture.architectureShardedLocation",
}


V4_MAX_DEPTH = 64
"""Flow brackets nested deeper than this are refused before parsing: the safe loader takes
seconds over a few thousand and recurses past the interpreter's limit beyond."""
_BRACKET = re.compile(r"[\[\]{}]")


def _too_deep(text: str) -> int:
    """The line where flow brackets first nest past :data:`V4_MAX_DEPTH`, or 0 (brackets in
    quoted text count too: a real configuration has none to spare)."""
    depth = 0
    for match in _BRACKET.finditer(text):
        depth = depth + 1 if match.group() in "[{" else max(0, depth - 1)
        if depth > V4_MAX_DEPTH:
            return text.count("\n", 0, match.start()) + 1
    return 0


def _v4_config(text: str) -> _V4:
    """The v4 keys of ``core-config.yaml``'s text.

    Raises:
        ValueError: the text is not YAML or not a mapping, with the 1-based line first
            (``"3: not valid YAML (…)"``).
    """
    deep = _too_deep(text)
    if deep:
        raise ValueError(f"{deep}: not valid YAML (nested more than {V4_MAX_DEPTH} deep)")
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise ValueError(f"{line}: not valid YAML ({exc.problem or exc.context})") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"1: not valid YAML ({str(exc).splitlines()[0]})") from None
    except RecursionError:
        raise ValueError("1: not valid YAML (nested too deeply)") from None
    if node is None:
        return _V4({})
    if not isinstance(node, yaml.MappingNode):
        raise ValueError(f"{node.start_mark.line + 1}: not a mapping of settings")

    def child(parent: Any, key: str) -> Any:
        if not isinstance(parent, yaml.MappingNode):
            return None
        for key_node, value_node in parent.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return value_node
        return None

    settings: dict[str, tuple[str, int]] = {}
    for path, name in _V4_PATHS.items():
        current: Any = node
        for key in path:
            current = child(current, key)
        if isinstance(current, yaml.ScalarNode) and str(current.value).strip():
            settings[name] = (str(current.value).strip(), current.start_mark.line + 1)
    files = child(node, "devLoadAlwaysFiles")
    if not isinstance(files, yaml.SequenceNode):
        return _V4(settings)
    key_line = next(
        key.start_mark.line + 1
        for key, value in node.value
        if value is files and isinstance(key, yaml.ScalarNode)
    )
    always = tuple(
        (str(item.value).strip(), item.start_mark.line + 1)
        for item in files.value
        if isinstance(item, yaml.ScalarNode) and str(item.value).strip()
    )
    return _V4(settings, always, key_line)


def _read_v4(root: Path) -> tuple[_V4 | None, list[tuple[str, str]]]:
    if not (root / ".bmad-core").is_dir():
        return None, []
    text = read_text(root / V4_CONFIG, root, limit=V4_CONFIG_MAX_BYTES)
    if isinstance(text, TextProblem):
        if text.reason in ("missing", "empty"):
            return None, []
        return None, [(V4_CONFIG, f"BMAD's configuration could not be read ({text})")]
    try:
        return _v4_config(text), []
    except ValueError as exc:
        line, _, why = str(exc).partition(": ")
        return None, [(f"{V4_CONFIG}:{line}", f"BMAD's configuration is {why}")]


def _is_true(value: str) -> bool:
    return value.strip().lower() in ("true", "yes", "on")


MAX_ALWAYS_LOAD = 1000
"""Most ``devLoadAlwaysFiles`` read; the rest are one problem line."""


def _always_load(
    v4: _V4, root: Path, problems: list[tuple[str, str]]
) -> tuple[tuple[str, ...], str]:
    """v4's ``devLoadAlwaysFiles`` inside the project, root-relative, and where the list is."""
    if not v4.always_load_line:
        return (), ""
    listed = v4.always_load
    if len(listed) > MAX_ALWAYS_LOAD:
        # Each file is a row of every story's injection and a look at the disk.
        where = f"{V4_CONFIG}:{listed[MAX_ALWAYS_LOAD][1]}"
        problems.append(
            (
                where,
                f"devLoadAlwaysFiles lists {len(listed):,} files; the first "
                f"{MAX_ALWAYS_LOAD:,} are read",
            )
        )
        listed = listed[:MAX_ALWAYS_LOAD]
    kept: dict[str, None] = {}
    for value, line in listed:
        real, rel, why = _inside(value, root, DEFAULT_OUTPUT_FOLDER)
        if real is None:
            problems.append((f"{V4_CONFIG}:{line}", f"devLoadAlwaysFiles '{shown(value)}' {why}"))
        else:
            kept.setdefault(rel)
    return tuple(kept), f"{V4_CONFIG}:{v4.always_load_line}"


def read_bmad_folders(root: Path) -> BmadFolders:
    """BMAD's configured folders for the project at ``root`` (see the module docstring); each
    TOML text is checked for its nesting before it is parsed."""
    found, problems = _settings(root)
    v4, v4_problems = _read_v4(root)
    problems.extend(v4_problems)
    origins: list[str] = []
    named: list[tuple[str, str]] = []
    output = DEFAULT_OUTPUT_FOLDER
    resolved: dict[str, str | None] = {}
    wheres: dict[str, str] = {}

    def take(setting: str, value: str, where: str) -> str | None:
        folder, why = _resolve(value, root, output)
        if folder is None:
            problems.append((where, f"{setting} '{shown(value)}' {why}"))
            if setting in (*ARTIFACT_SETTINGS, "devStoryLocation"):
                named.append((shown(value), f"{setting} in {where}: {why}"))
            return None
        origins.append(f"{setting} = {folder} (from {where.rsplit(':', 1)[0]})")
        wheres[setting] = f"{setting} in {where}"
        return folder

    for setting in _SETTINGS:
        if setting in found:
            value, where = found[setting]
            resolved[setting] = take(setting, value, where)
            if setting == "output_folder" and resolved[setting] is not None:
                output = resolved[setting] or output
    artifacts = next((resolved[s] for s in ARTIFACT_SETTINGS if resolved.get(s)), None)
    artifacts_origin = next((wheres[s] for s in ARTIFACT_SETTINGS if resolved.get(s)), "")
    planning = resolved.get("planning_artifacts")
    always: tuple[str, ...] = ()
    always_origin = ""
    if v4 is not None:
        settings = v4.settings
        for key in ("devStoryLocation", "prd.prdShardedLocation"):
            if key in settings:
                value, line = settings[key]
                resolved[key] = take(key, value, f"{V4_CONFIG}:{line}")
        if artifacts is None and resolved.get("devStoryLocation"):
            artifacts = resolved["devStoryLocation"]
            artifacts_origin = wheres["devStoryLocation"]
        sharded = _is_true(settings.get("prd.prdSharded", ("", 0))[0])
        if planning is None and sharded and resolved.get("prd.prdShardedLocation"):
            planning = resolved["prd.prdShardedLocation"]
        elif planning is None and "prd.prdFile" in settings:
            value, line = settings["prd.prdFile"]
            folder = posixpath.dirname(value.rstrip("/"))
            if folder:
                planning = take("prd.prdFile", folder, f"{V4_CONFIG}:{line}")
        if _is_true(settings.get("architecture.architectureSharded", ("", 0))[0]):
            key = "architecture.architectureShardedLocation"
            if key in settings:
                value, line = settings[key]
                take(key, value, f"{V4_CONFIG}:{line}")
        always, always_origin = _always_load(v4, root, problems)
    return BmadFolders(
        output=resolved.get("output_folder"),
        artifacts=artifacts,
        planning=planning,
        origins=tuple(origins),
        problems=tuple(problems),
        artifacts_origin=artifacts_origin,
        output_origin=wheres.get("output_folder", ""),
        named=tuple(named),
        always_load=always,
        always_load_origin=always_origin,
    )


def split_where(where: str) -> tuple[str, int | None]:
    """A problem's ``file:line`` (or bare ``file``) as the file and its 1-based line."""
    path, _, line = where.rpartition(":")
    if path and line.isdigit():
        return path, int(line)
    return where, None
