"""Verification commands: the configured ones, or the project's obvious one as a suggestion.

``[verify] commands`` is empty by default, and then every prompt says "No verification
commands are configured". Most projects show their test command plainly: a ``test`` script in
``package.json``, a pytest configuration, ``Cargo.toml``, ``go.mod``, a ``test`` target in the
``Makefile``. :func:`detect_verify_command` finds it as a *suggestion*, shown by the app and
``inspect``; prompts use it only when ``[verify] use_detected = true``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..lean_dataclass import dataclass
from ..project.textfiles import StructuredProblem, TextProblem, parse_toml, read_text
from ..project.workspace import Workspace

_NPM_DEFAULT_TEST = "no test specified"
_MAKE_TEST = re.compile(r"^test\s*:(?!=)", re.MULTILINE)
_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class DetectedCommand:
    """A verification command found in the project's own files.

    Attributes:
        command: the command line, e.g. ``npm test``.
        source: the file that shows it, root-relative.
    """

    command: str
    source: str


@dataclass(frozen=True)
class Verification:
    """The verification commands a prompt names, and where they come from.

    Attributes:
        commands: what prompts name (configured, or the detected one when allowed).
        origin: ``config``, ``detected`` or ``none``.
        detected: the project's obvious command, None when none was found.
    """

    commands: tuple[str, ...]
    origin: str
    detected: DetectedCommand | None

    @property
    def note(self) -> str | None:
        """A line for the app and ``inspect`` when a detected command is not being used."""
        if self.origin != "none" or self.detected is None:
            return None
        return (
            f"no verification commands are configured; this project's looks like "
            f"`{self.detected.command}` (from {self.detected.source}): set [verify] "
            "use_detected = true, or [verify] commands, to have prompts name it"
        )

    def to_dict(self) -> dict[str, object]:
        """The ``verify`` part of ``inspect --json``."""
        return {
            "commands": list(self.commands),
            "origin": self.origin,
            "detected": None
            if self.detected is None
            else {"command": self.detected.command, "source": self.detected.source},
        }


def _read(path: Path) -> str | None:
    # The guarded reader: regular files under _MAX_BYTES only, checked from stat, and never
    # one that leads out of the project (its folder is the project root).
    text = read_text(path, path.parent.resolve(), limit=_MAX_BYTES)
    return None if isinstance(text, TextProblem) else text


def _make(root: Path) -> DetectedCommand | None:
    for name in ("Makefile", "makefile", "GNUmakefile"):
        text = _read(root / name)
        if text is not None and _MAKE_TEST.search(text):
            return DetectedCommand("make test", name)
    return None


def _package_json(root: Path) -> DetectedCommand | None:
    text = _read(root / "package.json")
    if text is None:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(test, str) or not test.strip() or _NPM_DEFAULT_TEST in test:
        return None
    runner = "npm"
    for lock, tool in (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun")):
        if (root / lock).is_file():
            runner = tool
            break
    return DetectedCommand(f"{runner} test", "package.json")


def _pytest(root: Path) -> DetectedCommand | None:
    prefix = "uv run " if (root / "uv.lock").is_file() else ""
    pyproject = _read(root / "pyproject.toml")
    if pyproject is not None:
        try:
            data = parse_toml(pyproject)
        except StructuredProblem:
            data = {}
        tool = data.get("tool", {})
        if isinstance(tool, dict) and "pytest" in tool:
            return DetectedCommand(f"{prefix}pytest", "pyproject.toml")
    if (root / "pytest.ini").is_file():
        return DetectedCommand(f"{prefix}pytest", "pytest.ini")
    for name, section in (("setup.cfg", "tool:pytest"), ("tox.ini", "pytest")):
        text = _read(root / name)
        if text is None:
            continue
        import configparser  # here: few projects keep their pytest settings in an INI file

        parser = configparser.ConfigParser()
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        if parser.has_section(section):
            return DetectedCommand(f"{prefix}pytest", name)
    return None


def _cargo(root: Path) -> DetectedCommand | None:
    return DetectedCommand("cargo test", "Cargo.toml") if (root / "Cargo.toml").is_file() else None


def _go(root: Path) -> DetectedCommand | None:
    return DetectedCommand("go test ./...", "go.mod") if (root / "go.mod").is_file() else None


def detect_verify_command(root: Path) -> DetectedCommand | None:
    """The project's obvious verification command, or None.

    Looked for in this order: a ``test`` target of the ``Makefile`` (a project that has one
    gathers its checks there), the ``test`` script of ``package.json`` (not npm's placeholder),
    a pytest configuration (``pyproject.toml`` ``[tool.pytest…]``, ``pytest.ini``,
    ``setup.cfg``, ``tox.ini``), ``Cargo.toml``, ``go.mod``.
    """
    for find in (_make, _package_json, _pytest, _cargo, _go):
        found = find(root)
        if found is not None:
            return found
    return None


def resolve_verification(workspace: Workspace) -> Verification:
    """The verification commands prompts name: configured ones win; the detected one only
    when ``[verify] use_detected`` is true."""
    config = workspace.config
    detected = detect_verify_command(workspace.root)
    if config.verify_commands:
        return Verification(config.verify_commands, "config", detected)
    if config.verify_use_detected and detected is not None:
        return Verification((detected.command,), "detected", detected)
    return Verification((), "none", detected)
