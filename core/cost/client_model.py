"""The model a run will use, resolved the way its client resolves it, and where that came from.

promptdeck prices a run as the model the client will request, never as a stand-in. The first
of these that names one wins:

1. ``--model`` given to the command (``inspect --cost``, ``plan``), then ``[pricing] model``
   (an explicit pricing choice; the client is not told);
2. promptdeck's own agent settings: ``[agent] claude_model``, a ``--model`` in
   ``[agent] claude_args``; a ``-m``/``--model``/``-c model=`` in ``[agent] codex_args``;
3. the client's own settings, in its order. Claude Code: ``ANTHROPIC_MODEL`` in the
   environment, the project's ``.claude/settings.local.json`` then ``.claude/settings.json``,
   then ``~/.claude/settings.json`` (``"model"``). Codex: the project's ``.codex/config.toml``
   when Codex trusts the project (its home's ``[projects]``), then ``$CODEX_HOME/config.toml``
   (``model``) — a top-level ``profile`` does not apply, as a run selects promptdeck's own;
4. the client version's default, from the dated table ``core/assets/client_defaults.toml``;
   a version the table does not hold, or no version known, is ``unknown``.

Every client file is read through the guarded reader with a size cap; a malformed, huge,
FIFO or linked-out file is one note, and the resolution goes on. ``HOME`` and ``CODEX_HOME``
are read from the environment at call time.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from ..agent_names import is_simulation
from ..lean_dataclass import dataclass
from ..project.textfiles import StructuredProblem, TextProblem, parse_toml, read_text
from ..project.workspace import Workspace

CLIENT_DEFAULTS = Path(__file__).resolve().parent.parent / "assets" / "client_defaults.toml"
SETTINGS_MAX_BYTES = 1024 * 1024
"""Largest client settings file read (a real one is a few KiB)."""
UNKNOWN = "unknown"
CLAUDE_SETTINGS = (".claude/settings.local.json", ".claude/settings.json")
"""The project's Claude Code settings files, the local one first (it wins)."""
CLIENT_OF = {"claude": "claude", "codex": "codex"}
"""The client each promptdeck agent runs (others run no known client)."""


@dataclass(frozen=True)
class ResolvedModel:
    """The model a run will use, and where that answer came from.

    Attributes:
        agent: the agent the run uses.
        model: the model id, ``""`` when unknown.
        source: where it came from, in words (``~/.claude/settings.json: model``).
        notes: one line per client file that could not be read (the resolution went on).
    """

    agent: str
    model: str
    source: str
    notes: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        """Whether a model was found."""
        return bool(self.model)

    @property
    def shown(self) -> str:
        """The model, or ``unknown``."""
        return self.model or UNKNOWN

    def describe(self) -> str:
        """``claude-opus-4-8 (claude default for 2.1.197, table checked 2026-11-29)``."""
        return f"{self.shown} ({self.source})"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "agent": self.agent,
            "model": self.model or None,
            "source": self.source,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class ClientDefault:
    """One row of the client defaults table."""

    client: str
    version: str
    model: str
    checked: str
    source: str


def _version_key(version: str) -> tuple[int, ...] | None:
    try:
        numbers = [int(part) for part in version.strip().split(".")]
    except ValueError:
        return None
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


@cache
def client_defaults() -> tuple[ClientDefault, ...]:
    """The bundled table's rows (a row missing a field is left out)."""
    data = tomllib.loads(CLIENT_DEFAULTS.read_text(encoding="utf-8"))
    rows: list[ClientDefault] = []
    for row in data.get("default", []):
        fields = [row.get(name) for name in ("client", "version", "model", "checked", "source")]
        if all(isinstance(value, str) and value for value in fields):
            rows.append(ClientDefault(*fields))
    return tuple(rows)


def client_default(client: str, version: str | None) -> tuple[str, str]:
    """The default model of ``client`` at ``version`` and where it comes from; ``""`` when
    the version is unknown or not in the table."""
    if not version:
        return "", f"{client} default: the {client} version is not known"
    wanted = _version_key(version)
    for row in client_defaults():
        if row.client == client and wanted is not None and _version_key(row.version) == wanted:
            return row.model, (
                f"{client} default for {row.version} (client defaults table, checked {row.checked})"
            )
    return "", f"{client} default: version {version} is not in the client defaults table"


def flag_value(args: Sequence[str], names: tuple[str, ...]) -> str | None:
    """The last value given to one of ``names`` in ``args`` (``--model X`` or
    ``--model=X``); None when none is."""
    found: str | None = None
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                found = args[index + 1]
            elif name.startswith("--") and arg.startswith(name + "="):
                found = arg.split("=", 1)[1]
    return found


def _codex_setting(args: Sequence[str]) -> str | None:
    """The model a ``-c model=...`` in Codex's arguments sets (its value is TOML)."""
    found: str | None = None
    for index, arg in enumerate(args):
        value = None
        if arg in ("-c", "--config") and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith("--config="):
            value = arg.split("=", 1)[1]
        if value is None or not value.strip().startswith("model"):
            continue
        key, _, raw = value.partition("=")
        if key.strip() != "model":
            continue
        try:
            parsed = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            parsed = raw.strip()  # Codex takes a value that is not TOML as a plain string
        if isinstance(parsed, str) and parsed:
            found = parsed
    return found


def _read_setting(
    path: Path, root: Path | None, shown: str, notes: list[str], *, toml: bool = False
) -> dict[str, Any] | None:
    """A client's settings file as a mapping, or None (a note when it exists but cannot be
    used)."""
    text = read_text(path, root, limit=SETTINGS_MAX_BYTES)
    if isinstance(text, TextProblem):
        if text.reason != "missing":
            notes.append(f"{shown}: {text}; its model setting is not read")
        return None
    try:
        data = parse_toml(text) if toml else json.loads(text)
    except (StructuredProblem, ValueError, RecursionError) as exc:
        what = "TOML" if toml else "JSON"
        notes.append(f"{shown}: not valid {what} ({str(exc)[:80]}); its model setting is not read")
        return None
    if not isinstance(data, dict):
        notes.append(f"{shown}: not a settings object; its model setting is not read")
        return None
    return data


MODEL_NAME_MAX = 200
"""The longest value taken as a model name."""


def is_model_name(value: object) -> bool:
    """Whether ``value`` can be a model id: a printable string of at most
    :data:`MODEL_NAME_MAX` characters (a setting is a file or a config a repository can ship:
    an escape sequence or megabytes are never shown or priced as a model)."""
    return (
        isinstance(value, str)
        and bool(value.strip())
        and value.isprintable()
        and len(value) <= MODEL_NAME_MAX
    )


def _configured(agent: str, model: str, source: str) -> ResolvedModel:
    """The model a promptdeck setting names, or unknown when that is not a model name."""
    if is_model_name(model):
        return ResolvedModel(agent, model.strip(), source)
    return ResolvedModel(agent, "", f"{source}, which is not a model name")


def _model_in(data: dict[str, Any] | None, shown: str, notes: list[str]) -> str | None:
    if data is None or "model" not in data:
        return None
    model = data["model"]
    if is_model_name(model):
        return str(model).strip()
    notes.append(f"{shown}: model is not a model name; it is not used")
    return None


def _home(environ: Mapping[str, str]) -> Path | None:
    home = environ.get("HOME")
    return Path(home) if home else None


def _claude_settings(
    workspace: Workspace, environ: Mapping[str, str], notes: list[str]
) -> tuple[str, str] | None:
    model = environ.get("ANTHROPIC_MODEL", "").strip()
    if model and is_model_name(model):
        return model, "ANTHROPIC_MODEL in the environment"
    if model:
        notes.append("ANTHROPIC_MODEL in the environment is not a model name; it is not used")
    for name in CLAUDE_SETTINGS:
        found = _model_in(
            _read_setting(workspace.root / name, workspace.root, name, notes), name, notes
        )
        if found:
            return found, f"{name}: model"
    home = _home(environ)
    if home is not None:
        shown = "~/.claude/settings.json"
        data = _read_setting(home / ".claude" / "settings.json", home, shown, notes)
        found = _model_in(data, shown, notes)
        if found:
            return found, f"{shown}: model"
    return None


def _codex_home(environ: Mapping[str, str]) -> Path | None:
    raw = environ.get("CODEX_HOME")
    if raw:
        return Path(raw)
    home = _home(environ)
    return home / ".codex" if home is not None else None


def _codex_trusts(root: Path, user: dict[str, Any] | None) -> bool:
    projects = user.get("projects") if user is not None else None
    if not isinstance(projects, dict):
        return False
    for name, entry in projects.items():
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            folder = Path(name)
            if root == folder or root.is_relative_to(folder):
                return True
    return False


def _codex_settings(
    workspace: Workspace, environ: Mapping[str, str], notes: list[str]
) -> tuple[str, str] | None:
    home = _codex_home(environ)
    shown_user = "$CODEX_HOME/config.toml" if environ.get("CODEX_HOME") else "~/.codex/config.toml"
    user = (
        _read_setting(home / "config.toml", home, shown_user, notes, toml=True)
        if home is not None
        else None
    )
    if _codex_trusts(workspace.root.resolve(), user):
        name = ".codex/config.toml"
        data = _read_setting(workspace.root / name, workspace.root, name, notes, toml=True)
        found = _model_in(data, name, notes)
        if found:
            return found, f"{name}: model (a project Codex trusts)"
    found = _model_in(user, shown_user, notes)
    if found:
        return found, f"{shown_user}: model"
    return None


def resolve_model(
    workspace: Workspace,
    agent: str,
    *,
    requested: str | None = None,
    version: Callable[[], str | None] | str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedModel:
    """The model a run of ``agent`` will use (see the module's description for the order).

    Args:
        requested: the command's ``--model``.
        version: the client's version, or a function that finds it (called only when the
            client's default is needed: it may start the client).
        environ: the environment (``os.environ`` at call time when None).
    """
    env = os.environ if environ is None else environ
    config = workspace.config
    if requested:
        return ResolvedModel(agent, requested, "--model")
    if config.pricing_model:
        return _configured(
            agent, config.pricing_model, "[pricing] model in .promptdeck/config.toml"
        )
    client = CLIENT_OF.get(agent)
    if client is None:
        return ResolvedModel(agent, "", f"the {agent} agent runs no client whose model is known")
    notes: list[str] = []
    if client == "claude":
        if config.agent_claude_model:
            return _configured(agent, config.agent_claude_model, "[agent] claude_model")
        flagged = flag_value(config.agent_claude_args, ("--model",))
        if flagged:
            return _configured(agent, flagged, "[agent] claude_args: --model")
        found = _claude_settings(workspace, env, notes)
    else:
        flagged = flag_value(config.agent_codex_args, ("-m", "--model")) or _codex_setting(
            config.agent_codex_args
        )
        if flagged:
            return _configured(agent, flagged, "[agent] codex_args: model")
        found = _codex_settings(workspace, env, notes)
    if found is not None:
        return ResolvedModel(agent, found[0], found[1], tuple(notes))
    known = version() if callable(version) else version
    model, source = client_default(client, known)
    return ResolvedModel(agent, model, source, tuple(notes))


def forecast_model(
    workspace: Workspace,
    agent: str | None = None,
    *,
    requested: str | None = None,
    version: Callable[[str], str | None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedModel:
    """The model a forecast (``inspect --cost``, ``plan``, the app's cache row) prices:
    ``agent``'s (the configured default agent's when None; none set is Claude Code). A
    simulation, or a command agent, runs no known client: the forecast is then of a Claude
    Code run, and the source says so.

    Args:
        version: finds a client's version from its name (called only when its default is
            needed).
    """
    # No agent set means Claude Code (the default backend).
    chosen = (agent if agent is not None else workspace.config.agent_default) or "claude"
    client = chosen if chosen in CLIENT_OF else "claude"
    asked = (lambda: version(client)) if version is not None else None
    resolved = resolve_model(workspace, client, requested=requested, version=asked, environ=environ)
    if client == chosen or requested or workspace.config.pricing_model:
        return resolved
    why = (
        f"the {chosen} agent is a simulation"
        if is_simulation(chosen)
        else f"the {chosen} agent runs no known client"
    )
    return ResolvedModel(
        resolved.agent,
        resolved.model,
        f"{resolved.source}; priced as a claude run: {why}",
        resolved.notes,
    )
