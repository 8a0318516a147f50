"""Workspace settings: ``.promptdeck/config.toml``, validated key by key.

Every setting has a default, so the file is optional. A malformed file, an unknown key or a
value of the wrong type is a :class:`~promptdeck.core.errors.ConfigError` naming the file, the
key and what was expected — never a traceback.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import field, fields, replace
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from ..agent_names import AGENT_NAMES
from ..client_loads import CLIENT_WINDOWS
from ..errors import ConfigError
from ..lean_dataclass import dataclass
from .bmad_folders import (
    DEFAULT_OUTPUT_FOLDER,
    BmadFolders,
    has_bmad_config,
    read_bmad_folders,
)
from .textfiles import LONG_NUMBER, TextProblem, check_toml_shape, read_text

CONFIG_RELPATH = ".promptdeck/config.toml"
ENCODINGS = ("o200k_base", "cl100k_base")
AGENTS = AGENT_NAMES
CODEX_SANDBOXES = ("workspace-write", "read-only", "danger-full-access", "")


@dataclass(frozen=True)
class Config:
    """All workspace settings. TOML sections map to the prefixes below (``[paths] artifacts``
    is ``paths_artifacts``)."""

    # [paths]
    paths_artifacts: str = "_bmad-output/implementation-artifacts"
    """Folder scanned for story, discovery and tech-spec files (seed 000)."""
    paths_planning: str = "_bmad-output/planning-artifacts"
    """Folder holding epics and planning documents."""
    paths_project_context: tuple[str, ...] = (
        "_bmad-output/planning-artifacts/sprint-project-context.md",
        "_bmad-output/project-context.md",
    )
    """Project-context candidates; the first that exists is injected."""
    paths_openspec: str = "openspec"
    """The OpenSpec root; changes live in ``<openspec>/changes/``."""
    paths_rules: str = ""
    """Workspace rules file, Layer-0B (e.g. ``.ads/rules.md`` or ``AGENTS.md``). Empty: the
    first that exists of ``.promptdeck/rules.md``, ``AGENTS.md``, ``CLAUDE.md``,
    ``.github/copilot-instructions.md``, ``.cursor/rules/`` (its first file by name) and
    ``.cursorrules`` (see :data:`promptdeck.core.layers.rules.RULES_CANDIDATES`)."""
    paths_learnings: str = ".promptdeck/learnings.md"
    """Shared learnings file (seed 003)."""
    paths_templates: str = ".promptdeck/templates"
    """Per-workspace overrides of the bundled layer templates."""
    paths_personas: str = ".promptdeck/personas"
    """Per-workspace overrides of the bundled party personas (``<name>.md``, one per agent)."""
    paths_retro: str = "docs/sprints/epic-{id}-retro.md"
    """Where the retro phase writes its retrospective; ``{id}`` is the epic (seed 002)."""
    paths_handoff: str = "docs/handoffs/epic-{id}-handoff.md"
    """Where the retro phase writes the handoff for the next epic (seed 002)."""

    # [specs]
    specs_attach: tuple[str, ...] = ()
    """Quick specs to attach to a story, as ``"<spec file>=<story id>"``, e.g.
    ``"tech-spec-dark-mode.md=2-3"``. A spec whose name carries no story key
    (``tech-spec-<slug>.md``, ``spec-<slug>.md``) is otherwise listed as attached to no story.
    The file is named by its path from the root or by its name in the artifacts folder."""

    # [injection]
    injection_warn_bytes: int = 100 * 1024
    """Warning line for the file injection (seed 000: 100 KB)."""
    injection_error_bytes: int = 150 * 1024
    """Error line for the file injection (seed 000: 150 KB)."""

    injection_extensions: tuple[str, ...] = (".md", ".yaml", ".yml", ".txt")
    """File endings a key-matched artifact must have to be a candidate: text documents of the
    planning kinds. Hidden files (a name starting with ``.``) are never candidates."""

    # [read]
    read_max_bytes: int = 2 * 1024 * 1024
    """Largest workspace file promptdeck reads (stories, sprint-status, specs, rules,
    learnings, templates); a larger one is skipped as ``too-large`` from ``stat``, unread."""

    # [tokens]
    tokens_encoding: str = "o200k_base"
    """tiktoken encoding for token meters: ``o200k_base`` or ``cl100k_base``."""

    # [verify]
    verify_commands: tuple[str, ...] = ()
    """Verification commands named in prompts (seed 003). Empty by default."""
    verify_use_detected: bool = False
    """When no commands are configured, name the project's detected test command (``npm
    test``, ``pytest``, ``cargo test``, ``go test ./...``, ``make test``) in prompts. Off by
    default: the detected command is only shown as a suggestion."""

    # [agent]
    agent_default: str = ""
    """Backend used when none is named: claude, codex, command or replay. Empty (the default)
    means Claude Code when its binary is found; otherwise ``run``, ``chat`` and the app's
    ``r`` refuse with a line saying how to pick one. ``replay`` — a simulation — only ever
    runs when named here, with ``--agent replay`` or in ``promptdeck demo``."""
    agent_replay_git: bool = False
    """Let the simulated ``replay`` agent's phases stage and commit (the demo sets it): off,
    its invented work never reaches git."""
    agent_timeout: float = 1800.0
    """Seconds before a phase is cancelled."""
    agent_max_attempts: int = 3
    """Attempts per phase before the flow stops retrying."""
    agent_claude_bin: str = "claude"
    """The Claude Code binary (``PROMPTDECK_CLAUDE_BIN`` overrides)."""
    agent_claude_model: str = ""
    """``--model`` for Claude Code; empty leaves the CLI's default."""
    agent_claude_args: tuple[str, ...] = ("--permission-mode", "acceptEdits")
    """Extra arguments for Claude Code (permission flags)."""
    agent_claude_context_window: int = CLIENT_WINDOWS["claude"]
    """Context window used for the context-use gauge."""
    agent_claude_stable_prefix: bool = False
    """Start Claude Code with ``--exclude-dynamic-system-prompt-sections`` (2.1.98 and later):
    its git status and other per-run sections leave the system prompt, so consecutive phases
    can read the whole system block from the cache."""
    agent_codex_bin: str = "codex"
    """The Codex CLI binary (``PROMPTDECK_CODEX_BIN`` overrides)."""
    agent_codex_args: tuple[str, ...] = ()
    """Extra arguments for ``codex exec`` (``-c`` settings, ``-m MODEL``)."""
    agent_codex_sandbox: str = "workspace-write"
    """``codex exec -s``: ``workspace-write`` lets a dev phase edit the workspace (Codex keeps
    ``.git`` read-only); ``read-only`` or ``danger-full-access``; empty leaves Codex's own
    default (read-only). A ``-s`` in ``codex_args`` wins."""
    agent_codex_context_window: int = CLIENT_WINDOWS["codex"]
    """Context window for the gauge when Codex's session record does not name one."""
    agent_command_argv: tuple[str, ...] = ()
    """argv template for the ``command`` backend: {system_file} {user_file} {story} {phase}."""
    agent_replay_script: str = ""
    """Replay outcome script, e.g. ``dev=blocked,review=fail`` (empty: every phase succeeds)."""
    agent_replay_delay: float = 0.05
    """Seconds between replay lines."""

    # [git]
    git_commit_template: str = "feat({story}): {title}"
    """Commit message after a passed review."""
    git_max_file_bytes: int = 5 * 1024 * 1024
    """Files a phase wrote that are larger than this are left unstaged, with the reason."""

    # [status]
    status_write_back: bool = True
    """After a phase succeeds, write the story's new status back the way BMAD's workflows do:
    its ``development_status`` line in ``sprint-status.yaml`` and the story file's ``Status:``
    line (``review`` after dev, ``done`` after a passed review); for OpenSpec, tick the tasks
    of the group the agent left open. One value on one line changes; every other byte stays."""

    # [session]
    session_reinjection_enabled: bool = True
    """Re-inject instructions and rules in long sessions (seed 004 Req 3)."""
    session_reinjection_turns: int = 15
    """Turns between re-injections when context use is unknown."""
    session_rules_alert_after: int = 3
    """Injections in a row that fail to read the rules file before the warning becomes an
    error line ("check the workspace"); 0 never escalates."""

    # [party] — the variant each optional-or-review phase is composed in by default
    party_kickoff: bool = False
    """Compose the kickoff as a Party Kickoff (``--party-kickoff``)."""
    party_review: bool = False
    """Compose the review as a Party Review (``--party-review``)."""
    party_failure: bool = False
    """Compose the failure analysis as a Party Failure Analysis (``--party-failure``)."""
    party_retro: bool = False
    """Compose the retro as a Party Retrospective (``--party-retro``)."""

    # [flow] — what ``run --auto`` runs beyond dev and review (seed 002: opt-in)
    flow_auto_kickoff: bool = False
    """``--auto`` runs the kickoff (else it starts with dev)."""
    flow_auto_failure: bool = False
    """``--auto`` runs a failure analysis after a failed dev or review (else it retries)."""
    flow_auto_retro: bool = False
    """``--auto`` runs the retro once the epic is done (UAT follows the flow either way)."""
    flow_honour_analysis: bool = False
    """A failure analysis recommending Skip or Escalate stops the flow. Off by default: the seed
    makes the analysis informational (the retry goes ahead; the recommendation is shown)."""

    # [budget] — token budget of each phase's prompt (system + user); 0 = no budget
    budget_kickoff: int = 0
    """Token budget of the kickoff prompt."""
    budget_dev: int = 0
    """Token budget of the dev prompt."""
    budget_review: int = 0
    """Token budget of the review prompt."""
    budget_failure: int = 0
    """Token budget of the failure-analysis prompt."""
    budget_uat: int = 0
    """Token budget of the UAT prompt."""
    budget_retro: int = 0
    """Token budget of the retro prompt."""

    # (top level)
    delivery: str = "layered"
    """How the layers are sent: ``layered`` (all eight in the system prompt, the seeds' order)
    or ``cache-aware`` (the phase-invariant layers and the injected files in the system
    prompt, the per-phase layers at the head of the user turn; see
    :mod:`promptdeck.core.layers.delivery`)."""

    # [scope] — what an agent's phase may write in the plan (see core/guard/scope.py)
    scope_protect: tuple[str, ...] = ()
    """More root-relative globs no agent phase may change (added to the plan's bookkeeping)."""
    scope_allow: tuple[str, ...] = ()
    """Root-relative globs taken out of the protected set, so agents may write them: a
    widening, so a run needs ``promptdeck trust`` for it."""

    # [pricing]
    pricing_file: str = ""
    """A project price table (same shape as the bundled ``core/assets/prices.toml``) whose
    rows add to or replace the bundled ones."""
    pricing_model: str = ""
    """The model runs are priced as; empty: the agent's configured model, else its default."""
    pricing_ttl: str = "5m"
    """The prompt cache's lifetime the prediction assumes: ``5m`` or ``1h``."""
    pricing_output_tokens: int = 0
    """Expected output tokens per phase run; 0: from this project's past runs, else 4,000."""

    source: str | None = field(default=None, compare=False)
    """The file these settings came from, or None for defaults."""
    source_sha256: str | None = field(default=None, compare=False)
    """The SHA-256 of that file's text as read: what ``promptdeck trust`` records."""
    bmad_origins: tuple[str, ...] = field(default=(), compare=False)
    """The folders taken from BMAD's own configuration, each with the file it came from
    (see :mod:`.bmad_folders`); empty when none was."""
    bmad_problems: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    """``(file:line, why)`` for each folder BMAD's configuration names that could not be
    used."""
    bmad_always_load: tuple[str, ...] = field(default=(), compare=False)
    """BMAD v4's ``devLoadAlwaysFiles``: root-relative files its dev agent loads for every
    story, as written (existing or not; one outside the project is a problem line instead)."""
    bmad_always_load_origin: str = field(default="", compare=False)
    """Where that list is: ``.bmad-core/core-config.yaml:LINE``; empty when there is none."""
    plan_origin: str = field(default="default", compare=False)
    """One line: which folder is the plan and why (``devStoryLocation in
    .bmad-core/core-config.yaml:7``, ``[paths] artifacts in .promptdeck/config.toml``,
    ``found by search: docs/sprint-artifacts/sprint-status.yaml``, ``default``). Part of the
    settings' ``repr``, which keys the app's remembered opening: a plan that moves is another
    key."""
    plan_alternatives: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    """``(folder, why not chosen)`` for each other plan folder named or found."""

    def validate_values(self) -> None:
        """Check cross-field rules that a type check cannot see."""
        where = self.source or CONFIG_RELPATH
        if self.tokens_encoding not in ENCODINGS:
            raise ConfigError(where, "tokens.encoding", f"one of {', '.join(ENCODINGS)}")
        if self.agent_default and self.agent_default not in AGENTS:
            raise ConfigError(where, "agent.default", f"one of {', '.join(AGENTS)}")
        if not 0 < self.injection_warn_bytes <= self.injection_error_bytes:
            raise ConfigError(
                where, "injection.warn_bytes", "a positive integer no larger than error_bytes"
            )
        if self.read_max_bytes < 1:
            raise ConfigError(where, "read.max_bytes", "a positive integer")
        if not all(ext.startswith(".") and len(ext) > 1 for ext in self.injection_extensions):
            raise ConfigError(where, "injection.extensions", 'a list of file endings such as ".md"')
        if not (math.isfinite(self.agent_timeout) and self.agent_timeout > 0):
            raise ConfigError(where, "agent.timeout", "a number of seconds greater than 0")
        if not (math.isfinite(self.agent_replay_delay) and 0 <= self.agent_replay_delay <= 60):
            raise ConfigError(where, "agent.replay_delay", "a number of seconds from 0 to 60")
        if self.agent_claude_context_window < 1:
            raise ConfigError(where, "agent.claude_context_window", "a positive integer")
        if self.agent_codex_sandbox not in CODEX_SANDBOXES:
            raise ConfigError(
                where, "agent.codex_sandbox", f"one of {', '.join(map(repr, CODEX_SANDBOXES))}"
            )
        if self.agent_codex_context_window < 1:
            raise ConfigError(where, "agent.codex_context_window", "a positive integer")
        if self.delivery not in ("layered", "cache-aware"):
            raise ConfigError(where, "delivery", "'layered' or 'cache-aware'")
        if self.pricing_ttl not in ("5m", "1h"):
            raise ConfigError(where, "pricing.ttl", "'5m' or '1h'")
        if self.pricing_output_tokens < 0:
            raise ConfigError(
                where, "pricing.output_tokens", "a token count of 0 (past runs) or more"
            )
        if self.agent_max_attempts < 1:
            raise ConfigError(where, "agent.max_attempts", "an integer of at least 1")
        for phase in ("kickoff", "dev", "review", "failure", "uat", "retro"):
            if getattr(self, f"budget_{phase}") < 0:
                raise ConfigError(where, f"budget.{phase}", "a token count of 0 (none) or more")
        for key in ("retro", "handoff"):
            value = getattr(self, f"paths_{key}")
            if not value.strip() or Path(value).is_absolute() or ".." in Path(value).parts:
                raise ConfigError(
                    where, f"paths.{key}", "a path inside the project, e.g. docs/x-{id}.md"
                )
        if self.session_rules_alert_after < 0:
            raise ConfigError(where, "session.rules_alert_after", "an integer of at least 0")
        if self.session_reinjection_turns < 1:
            raise ConfigError(where, "session.reinjection_turns", "an integer of at least 1")
        if self.git_max_file_bytes < 1:
            raise ConfigError(where, "git.max_file_bytes", "a positive integer")
        for spec in fields(self):
            value = getattr(self, spec.name)
            texts = value if isinstance(value, tuple) else (value,)
            # A NUL cannot be in a path, an argv or a template: refuse it here, once, rather
            # than as a ValueError wherever the value is first used.
            if any(isinstance(text, str) and "\0" in text for text in texts):
                key = spec.name.replace("_", ".", 1)
                raise ConfigError(where, key, "text without a NUL byte")


_NOT_SETTINGS = (
    "source",
    "source_sha256",
    "bmad_origins",
    "bmad_problems",
    "bmad_always_load",
    "bmad_always_load_origin",
    "plan_origin",
    "plan_alternatives",
)
_FIELDS = {f.name: f for f in fields(Config) if f.name not in _NOT_SETTINGS}


@functools.cache
def _field_types() -> dict[str, Any]:
    """The fields' real types. Under ``from __future__ import annotations`` a field's ``type``
    is only its spelling, and dispatching on a spelling breaks on the first ``int | None``.
    Resolved when a config file is first read, not at import (the app's start reads none
    when the project has no config)."""
    return get_type_hints(Config)


_DESCRIPTIONS: dict[Any, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    tuple[str, ...]: "a list of strings",
}


def _members(annotation: Any) -> tuple[Any, ...]:
    """The types a value may have: a union's members, ``None`` left out (TOML has no null)."""
    if get_origin(annotation) in (Union, UnionType):
        return tuple(arg for arg in get_args(annotation) if arg is not type(None))
    return (annotation,)


def _expected(annotation: Any) -> str:
    return " or ".join(
        _DESCRIPTIONS.get(member, f"a value of type {member}") for member in _members(annotation)
    )


def _coerce_one(value: Any, kind: Any) -> Any:
    """``value`` as ``kind``, or raise TypeError."""
    if kind is bool and isinstance(value, bool):
        return value
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind is str and isinstance(value, str):
        return value
    if (
        kind == tuple[str, ...]
        and isinstance(value, list)
        and all(isinstance(item, str) for item in value)
    ):
        return tuple(value)
    raise TypeError(kind)


def coerce_setting(value: Any, annotation: Any, source: str, key: str) -> Any:
    """``value`` from TOML as a setting of type ``annotation`` (``int``, ``float | None``,
    ``tuple[str, ...]`` …).

    Raises:
        ConfigError: the value has none of the types, naming the file, the key and what
            was expected (a type it cannot coerce to is never accepted).
    """
    for kind in _members(annotation):
        try:
            return _coerce_one(value, kind)
        except TypeError:
            continue
    raise ConfigError(source, key, _expected(annotation))


def config_from_mapping(data: dict[str, Any], source: str) -> Config:
    """Build a :class:`Config` from parsed TOML, checking every key and type."""
    values: dict[str, Any] = {}

    def walk(table: dict[str, Any], prefix: tuple[str, ...]) -> None:
        for key, value in table.items():
            dotted = ".".join((*prefix, key))
            name = "_".join((*prefix, key))
            if isinstance(value, dict):
                walk(value, (*prefix, key))
                continue
            spec = _FIELDS.get(name)
            if spec is None:
                raise ConfigError(source, dotted, "a known setting (see docs/config.md)")
            values[name] = coerce_setting(value, _field_types()[spec.name], source, dotted)

    try:
        walk(data, ())
    except RecursionError:
        raise ConfigError(source, None, "tables nested less deeply") from None
    config = Config(**values, source=source)
    config.validate_values()
    return config


CONFIG_MAX_BYTES = 1024 * 1024
"""A larger ``config.toml`` is refused unread: a real one is a few hundred bytes."""


def load_config(root: Path) -> Config:
    """Read ``<root>/.promptdeck/config.toml`` if present; defaults otherwise.

    The file is read like any other file of a cloned repository (:mod:`.textfiles`): a FIFO,
    a device, a symlink leading outside the project or a file over :data:`CONFIG_MAX_BYTES`
    is refused in one line, never opened or read. The folders it does not set come from
    BMAD's own configuration when that names them (:mod:`.bmad_folders`).
    """
    text = read_text(root / CONFIG_RELPATH, root.resolve(), limit=CONFIG_MAX_BYTES)
    if isinstance(text, TextProblem):
        if text.reason in ("missing", "empty"):
            return with_bmad_folders(Config(), root, set())
        raise ConfigError(CONFIG_RELPATH, None, f"a readable UTF-8 text file ({text})")
    # Imported here: most projects have no config file, and every command opens a workspace.
    import hashlib
    import tomllib

    try:
        check_toml_shape(text, CONFIG_RELPATH)
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(CONFIG_RELPATH, None, f"valid TOML ({exc})") from None
    except RecursionError:
        raise ConfigError(CONFIG_RELPATH, None, "valid TOML nested less deeply") from None
    except ValueError:
        # tomllib's `int()` refuses a number past 4,300 digits with a bare ValueError.
        raise ConfigError(CONFIG_RELPATH, None, f"valid TOML (not {LONG_NUMBER})") from None
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    config = replace(config_from_mapping(data, CONFIG_RELPATH), source_sha256=digest)
    paths = data.get("paths")
    return with_bmad_folders(config, root, set(paths) if isinstance(paths, dict) else set())


def with_bmad_folders(config: Config, root: Path, given: set[str]) -> Config:
    """``config`` with the plan's folders: where ``given`` (the ``[paths]`` keys the project's
    own config sets) leaves them to the defaults, the folders BMAD's configuration names
    (any generation, :mod:`.bmad_folders`), else the default folder when it holds anything,
    else the plan a bounded search of the project finds (:mod:`.plan_location`).

    The artifacts folder is BMAD's artifacts setting, else ``<output_folder>/
    implementation-artifacts``; the planning folder likewise; the default project-context
    files move into the output folder. :attr:`Config.plan_origin` says which folder was taken
    and why, :attr:`Config.plan_alternatives` the others. Nothing is searched when a
    configuration or the default names a folder that holds something.
    """
    folders = read_bmad_folders(root) if has_bmad_config(root) else None
    context = config.paths_project_context
    output = folders.output if folders is not None else None
    artifacts = folders.artifacts if folders is not None else None
    planning = folders.planning if folders is not None else None
    if output is not None and output != DEFAULT_OUTPUT_FOLDER:
        if artifacts is None and (root / output / "implementation-artifacts").is_dir():
            artifacts = f"{output}/implementation-artifacts"
        if planning is None and (root / output / "planning-artifacts").is_dir():
            planning = f"{output}/planning-artifacts"
        if "project_context" not in given:
            context = tuple(
                output + path[len(DEFAULT_OUTPUT_FOLDER) :]
                if path.startswith(DEFAULT_OUTPUT_FOLDER + "/")
                else path
                for path in context
            )
    located = _locate_plan(config, root, given, folders, artifacts)
    artifacts = located.artifacts or config.paths_artifacts
    if located.planning is not None and planning is None:
        planning = located.planning
    if planning is None or "planning" in given:
        planning = config.paths_planning
    return replace(
        config,
        paths_artifacts=artifacts,
        paths_planning=planning,
        paths_project_context=context,
        paths_openspec=located.openspec or config.paths_openspec,
        bmad_origins=folders.origins if folders is not None else (),
        bmad_problems=folders.problems if folders is not None else (),
        bmad_always_load=folders.always_load if folders is not None else (),
        bmad_always_load_origin=folders.always_load_origin if folders is not None else "",
        plan_origin=located.origin,
        plan_alternatives=located.alternatives,
    )


@dataclass(frozen=True)
class _Located:
    """The plan's folders as :func:`_locate_plan` settles them (None: left as they are)."""

    artifacts: str | None
    origin: str
    planning: str | None = None
    openspec: str | None = None
    alternatives: tuple[tuple[str, str], ...] = ()


def _holds_anything(folder: Path) -> bool:
    """True when ``folder`` is a folder with at least one entry (one directory read)."""
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is not None
    except (OSError, ValueError):
        return False


def _locate_plan(
    config: Config,
    root: Path,
    given: set[str],
    folders: BmadFolders | None,
    named: str | None,
) -> _Located:
    """Which folder is the plan, and why (see :func:`with_bmad_folders`)."""
    if "artifacts" in given:
        return _Located(config.paths_artifacts, f"[paths] artifacts in {CONFIG_RELPATH}")
    passed: list[tuple[str, str]] = list(folders.named) if folders is not None else []
    where = ""
    if named is not None and folders is not None:
        where = folders.artifacts_origin or (
            f"output_folder's implementation-artifacts ({folders.output_origin})"
        )
        if _holds_anything(root / named):
            return _Located(named, where, alternatives=tuple(passed))
        passed.append((named, f"{where}: the folder is empty"))
    output = (folders.output if folders is not None else None) or DEFAULT_OUTPUT_FOLDER
    if _holds_anything(root / Config.paths_artifacts):
        return _Located(Config.paths_artifacts, "default", alternatives=tuple(passed))
    if _has_initiative(root / output):
        # BMAD v7: the plan is the initiative tree in the output folder, read from there.
        why = folders.output_origin if folders is not None and folders.output_origin else ""
        origin = f"BMAD v7 initiatives in {output}" + (f" ({why})" if why else " (default)")
        return _Located(f"{output}/implementation-artifacts", origin, alternatives=tuple(passed))
    bmad = folders is not None
    if not bmad and (root / config.paths_openspec).is_dir():
        return _Located(None, "default", alternatives=tuple(passed))
    from .plan_location import choose_plan, planning_beside, search_plans

    search = search_plans(root)
    # A plan inside a folder the configuration names (its output folder, or its artifacts
    # folder when that is empty) is the one it means, however old.
    preferred = tuple(
        folder for folder in ((folders.output if folders is not None else None), named) if folder
    )
    openspec_known = "openspec" in given or (root / config.paths_openspec).is_dir()
    candidates = tuple(
        c for c in search.candidates if not (c.kind == "openspec" and openspec_known)
    )
    choice = choose_plan(replace(search, candidates=candidates), preferred)
    alternatives = (*passed, *choice.alternatives)
    chosen = choice.chosen
    if chosen is None:
        origin = choice.origin
        if named is not None:
            # The configured folder is there but empty, and no other plan was found: it stays.
            origin = f"{where} (empty; the search found no other plan)"
        elif passed:
            origin = f"{choice.origin}; the configured folder could not be used"
        return _Located(
            named,
            origin,
            openspec=choice.openspec.folder if choice.openspec else None,
            alternatives=alternatives,
        )
    artifacts = chosen.folder
    if chosen.kind == "v7-initiative":
        artifacts = f"{chosen.folder}/implementation-artifacts"
    return _Located(
        artifacts,
        choice.origin,
        planning=planning_beside(root, chosen.folder, chosen.kind),
        openspec=choice.openspec.folder if choice.openspec else None,
        alternatives=alternatives,
    )


def _has_initiative(output: Path) -> bool:
    """True when the output folder holds a BMAD v7 initiative folder."""
    try:
        with os.scandir(output) as entries:
            return any(e.name.startswith("initiative-") and e.is_dir() for e in entries)
    except (OSError, ValueError):
        return False
