"""The file injection (seed 000): the ``<file_injections>`` XML an agent receives.

:func:`build_injection` lists every candidate file with its category, status, size and the
reason it matched or was left out, and builds the exact XML; :func:`build_prompt_system_append`
is seed 000's string API over it. Files are read fresh at every call (AC4); only token counts
are cached, by content hash, in the :class:`~promptdeck.core.tokens.counter.TokenCounter`.

Beyond the seed:

- story keys match on key boundaries (``A-1`` never matches ``a-10``), see
:mod:`promptdeck.core.stories.keys`;
- no file outside the project root is read, whether named directly or reached by a symlink;
- a file over the error line on its own is not read at all: its size comes from ``stat``, and
  once the files' sizes on disk add up past the error line the rest are not read either;
- every file is read through :mod:`promptdeck.core.project.textfiles`, the guarded reader (regular
files only, never
  a FIFO or a device);
- only text documents of the planning kinds (``injection.extensions``: ``.md``, ``.yaml``,
  ``.yml``, ``.txt``) are key-matched candidates, and hidden files never are;
- every included file is scanned for credentials (:mod:`promptdeck.core.secrets.scan`): findings
name the file,
  the line and the kind, never the secret; a commit hash in a plan's front matter is none
  (:mod:`promptdeck.core.secrets.commits`);
- content holding ``</file>`` or ``</file_injections>`` is flagged: it breaks the envelope.

This module builds and checks; what it builds is :mod:`.model`,
the candidate files are found and read by :mod:`.candidates`, and the story-key match
over the artifacts folder is :mod:`.artifacts`'s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..plans import openspec
from ..plans.context_files import context_reason
from ..project.config import Config, load_config
from ..project.workspace import Workspace
from ..secrets.commits import drop_commit_hashes
from ..secrets.scan import scan_text
from ..stories.model import Story
from ..tokens.counter import Meter, TokenCounter, get_counter
from ..tokens.results import shared_results
from ..vocabulary import InjectionLevel
from .candidates import (
    NO_PLAN_FILES,
    Candidate,
    DerivedText,
    PlanFiles,
    PlanRow,
    StoryContextFile,
    apply_choices,
    mark_over_budget,
    plan_candidates,
    read_candidate,
    resolve_candidates,
)
from .model import (
    INCLUDED,
    SKIPPED_STATUSES,
    TOO_LARGE,
    WHY_PLAN,
    Emit,
    InjectedFile,
    Injection,
    Selection,
    envelope_pieces,
    too_large,
)
from .plan_rows import story_plan_rows

KEY_MATCHED_LAYOUTS = ("classic", "spec")
"""Layouts whose story files are found by key in the artifacts folder."""
OWN_REASONS = {
    "v7": (WHY_PLAN, "a file of the ticket: its plan's ticket id joins it"),
    "bmad-spec": (WHY_PLAN, "a file of the story: its spec folder and stories.yaml id"),
}
"""Why a story's own files are its own, for layouts that name them rather than match a key."""

__all__ = [
    "build_injection",
    "build_prompt_system_append",
    "build_story_injection",
    "source_project_context",
]


def _workspace_parts(project_root: Workspace | str | os.PathLike[str]) -> tuple[Path, Config]:
    if isinstance(project_root, Workspace):
        return project_root.root, project_root.config
    root = Path(project_root).resolve()
    return root, load_config(root)


def build_injection(
    project_root: Workspace | str | os.PathLike[str],
    command_name: str,
    story_keys: Sequence[str],
    include_project_context: bool = True,
    include_discovery: bool = False,
    include_tech_spec: bool = False,
    additional_files: Sequence[str] | None = None,
    *,
    story_files: Sequence[str] = (),
    project_context: Sequence[str] | None = None,
    context_files: Sequence[StoryContextFile] = (),
    derived: Sequence[DerivedText] = (),
    left_out: Sequence[str] = (),
    own_reason: tuple[str, str] | None = None,
    nested_keys: Sequence[str] = (),
    second_claims: Sequence[StoryContextFile] = (),
    plan_rows: Sequence[PlanRow] = (),
    config: Config | None = None,
    counter: TokenCounter | None = None,
    emit: Emit | None = None,
    count_tokens: bool = True,
    scan_secrets: bool = True,
    excluded_files: Sequence[str] = (),
    included_files: Sequence[str] = (),
) -> Injection:
    """Build the injection for ``story_keys`` and report every candidate file.

    Never raises for size: :attr:`Injection.level` says ``ok``, ``warning`` or ``error`` and
    the caller decides (:func:`build_prompt_system_append` raises, ``inspect`` exits 3, the
    app refuses to run).

    Args:
        project_root: the workspace, or its root folder (its config is then loaded).
        command_name: what the injection is for, for messages and events.
        story_keys: story keys whose files are matched in the artifacts folder.
        include_project_context: include the project context file (AC6).
        include_discovery: include discovery files of the stories (AC6).
        include_tech_spec: include tech-spec files of the stories (AC6).
        additional_files: extra files, relative to the root unless absolute (AC6).
        story_files: root-relative files that belong to the story beyond the key match (the
            OpenSpec change's proposal, design and specs).
        project_context: the source's own project-context files, every existing one
            injected (OpenSpec: ``openspec/project.md``, ``openspec/AGENTS.md``); None uses
            ``paths.project_context``, the first existing one.
        context_files: files the story's plan asks for (a spec's ``context:`` list), each
            with the reason its row shows.
        derived: text a source took out of a project file for the agent (OpenSpec's config
            ``context``), each a row of its own.
        left_out: paths the user left out: listed, excluded.
        own_reason: ``(why, reason)`` of the story's own files when no key names them (a
            v7 ticket's files, a bmad-spec story's); None: an OpenSpec change's documents.
        nested_keys: keys of known stories under ``story_keys`` (``10-1-5`` under
            ``10-1``): their files are theirs, never candidates here.
        second_claims: files that claim the story too but are not its own (a second build
            spec of its key), each with its reason: rows left out, never read.
        plan_rows: files of a category of their own (a v4 project's always-load files, the
            story file's companions, its epic's tech spec; see :mod:`.plan_rows`): one row
            each, never also key-matched or the story's own.
        config: settings to use instead of the workspace's.
        counter: token counter (default: the process-wide one for the configured encoding).
        emit: receives ``injection:warning``, ``injection:empty`` and ``injection:skipped``.
        count_tokens: False leaves token counts None, for an instant byte-only build.
        scan_secrets: False skips the secret scan (an instant preview; never before a run).
        excluded_files: root-relative files the user left out (:mod:`.choices`).
        included_files: root-relative files the user took in.

    Raises:
        TypeError: ``story_keys`` or ``additional_files`` is a single string rather than a
            list (a string would be read as one key per character).
    """
    return _build(
        project_root,
        command_name,
        story_keys,
        (include_project_context, include_discovery, include_tech_spec),
        additional_files or (),
        story_files,
        config=config,
        counter=counter,
        emit=emit,
        count_tokens=count_tokens,
        reject_over_limit=False,
        scan_secrets=scan_secrets,
        project_context=project_context,
        nested_keys=nested_keys,
        plan=PlanFiles(
            tuple(context_files),
            tuple(derived),
            tuple(left_out),
            own_reason,
            tuple(second_claims),
            tuple(plan_rows),
        ),
        choices=(excluded_files, included_files),
    )


def _refuse_too_large(candidates: list[Candidate], error_bytes: int, command_name: str) -> None:
    """Raise :class:`InjectionTooLarge` when the sizes on disk of the files that would be
    sent pass the error line, before any is read."""
    sized = [(c.shown, c.size) for c in candidates if c.status in (INCLUDED, TOO_LARGE)]
    on_disk = sum(size for _, size in sized)
    if on_disk > error_bytes:
        raise too_large(on_disk, error_bytes, command_name, sized)


def _read_included(
    candidates: list[Candidate], root: Path, error_bytes: int, scan_secrets: bool
) -> None:
    """Read each included file (derived text is already there) and, unless told not to,
    scan it for credentials, flagging the files that hold one."""
    for candidate in candidates:
        if candidate.status == INCLUDED and not candidate.derived:
            read_candidate(candidate, root, error_bytes)
            if scan_secrets and candidate.content is not None:
                found = scan_text(candidate.shown, candidate.content, shared_results())
                # A plan's own commit hash (``baseline_revision``) is not a credential.
                candidate.secrets = drop_commit_hashes(candidate.content, found)
                if candidate.secrets:
                    candidate.flags = (*candidate.flags, "secrets")


def _level(size_bytes: int, config: Config) -> InjectionLevel:
    """Where the injection's size stands against the configured warning and error lines."""
    if size_bytes > config.injection_error_bytes:
        return "error"
    if size_bytes > config.injection_warn_bytes:
        return "warning"
    return "ok"


def _build(
    project_root: Workspace | str | os.PathLike[str],
    command_name: str,
    story_keys: Sequence[str],
    switches: tuple[bool, bool, bool],
    additional_files: Sequence[str],
    story_files: Sequence[str],
    *,
    config: Config | None,
    counter: TokenCounter | None,
    emit: Emit | None,
    count_tokens: bool,
    reject_over_limit: bool,
    scan_secrets: bool = True,
    project_context: Sequence[str] | None = None,
    nested_keys: Sequence[str] = (),
    choices: tuple[Sequence[str], Sequence[str]] = ((), ()),
    plan: PlanFiles = NO_PLAN_FILES,
) -> Injection:
    """Plan, size from ``stat``, read and render; see :func:`build_injection`.

    With ``reject_over_limit``, sizes on disk over the error line raise
    :class:`InjectionTooLarge` before any file is read.
    """
    root, workspace_config = _workspace_parts(project_root)
    config = config or workspace_config
    counter = counter or get_counter(config.tokens_encoding)
    if isinstance(story_keys, str | bytes):
        raise TypeError("story_keys must be a list of story keys, not a single string")
    if isinstance(additional_files, str | bytes):
        raise TypeError("additional_files must be a list of paths, not a single string")
    candidates = plan_candidates(
        root,
        config,
        story_keys,
        *switches,
        additional_files,
        story_files,
        project_context,
        nested_keys,
        plan,
    )
    apply_choices(candidates, root, *choices)
    resolve_candidates(candidates, root, config.injection_error_bytes)
    if reject_over_limit:
        _refuse_too_large(candidates, config.injection_error_bytes, command_name)
    mark_over_budget(candidates, config.injection_error_bytes)
    _read_included(candidates, root, config.injection_error_bytes, scan_secrets)

    included = [c for c in candidates if c.status == INCLUDED and c.content is not None]
    pieces = envelope_pieces((c.shown, c.content or "") for c in included)
    text = "".join(pieces)
    text_bytes = len(text.encode("utf-8"))
    size_bytes = text_bytes + sum(c.size for c in candidates if c.status == TOO_LARGE)

    files: list[InjectedFile] = []
    file_tokens = 0
    for c in candidates:
        tokens = counter.count(c.content) if count_tokens and c.content is not None else None
        if c.status == INCLUDED and tokens is not None:
            file_tokens += tokens
        files.append(
            InjectedFile(
                c.shown, c.category, c.status, c.size, tokens, c.reason, c.flags, c.secrets, c.why
            )
        )

    # Each file's bytes are encoded once: the total reuses the files' counts.
    total_tokens = counter.count_joined(pieces, text) if count_tokens else None
    estimated = count_tokens and counter.estimated
    included_bytes = sum(len((c.content or "").encode("utf-8")) for c in included)
    total = Meter(text_bytes, total_tokens, estimated)
    envelope = Meter(
        text_bytes - included_bytes,
        None if total_tokens is None else total_tokens - file_tokens,
        estimated,
    )

    level = _level(size_bytes, config)
    warnings = _warnings(files, size_bytes, level, config, counter if count_tokens else None)
    injection = Injection(
        command_name=command_name,
        story_keys=tuple(story_keys),
        files=tuple(files),
        text=text,
        total=total,
        envelope=envelope,
        level=level,
        size_bytes=size_bytes,
        warn_bytes=config.injection_warn_bytes,
        error_bytes=config.injection_error_bytes,
        encoding=counter.encoding,
        warnings=tuple(warnings),
    )
    if emit is not None:
        _emit_events(emit, injection)
    return injection


def _warnings(
    files: list[InjectedFile],
    size_bytes: int,
    level: InjectionLevel,
    config: Config,
    counter: TokenCounter | None,
) -> list[str]:
    warnings: list[str] = []
    if level == "error":
        warnings.append(
            f"injection is {size_bytes:,} bytes, over the {config.injection_error_bytes:,}-byte "
            "error line: it cannot be sent"
        )
    elif level == "warning":
        warnings.append(
            f"injection is {size_bytes:,} bytes, over the {config.injection_warn_bytes:,}-byte "
            "warning line"
        )
    for f in files:
        for finding in f.secrets if f.status == INCLUDED else ():
            warnings.append(
                f"{f.path} line {finding.line}: looks like a secret ({finding.kind}); "
                "check it before sending"
            )
        if "breaks-envelope" in f.flags:
            warnings.append(f"{f.path} contains a closing </file> tag: it breaks the envelope")
        if f.status in SKIPPED_STATUSES and f.category != "project-context":
            warnings.append(f"{f.path}: {f.status}: {f.reason}")
    if counter is not None and counter.warning:
        warnings.append(counter.warning)
    return warnings


def _emit_events(emit: Emit, injection: Injection) -> None:
    base = {"command": injection.command_name}
    if injection.level in ("warning", "error"):
        emit(
            "injection:warning",
            {
                **base,
                "size_bytes": injection.size_bytes,
                "threshold_bytes": injection.warn_bytes,
                "message": f"Injection size ({injection.size_bytes} bytes) exceeds warning "
                "threshold",
            },
        )
    if not injection.included():
        emit("injection:empty", {**base, "story_keys": list(injection.story_keys)})
    for finding in injection.secrets:
        emit("injection:secret", {**base, **finding.to_dict()})
    for f in injection.files:
        if f.status in SKIPPED_STATUSES:
            emit(
                "injection:skipped",
                {**base, "path": f.path, "status": f.status, "reason": f.reason},
            )


def build_story_injection(
    workspace: Workspace,
    story: Story,
    selection: Selection,
    *,
    command_name: str,
    counter: TokenCounter | None = None,
    emit: Emit | None = None,
    count_tokens: bool = True,
    scan_secrets: bool = True,
) -> Injection:
    """The injection for one story under the user's :class:`Selection`.

    BMAD stories match files in the artifacts folder by key; an OpenSpec story brings its
    change's files (``Story.files``) instead. A v4 project's always-load files, the story
    file's companions and its epic's tech spec are rows of their own (:mod:`.plan_rows`).
    """
    # Only v6 stories have files named by key in the artifacts folder: a v7 ticket, a
    # bmad-spec story or an OpenSpec group names its own files.
    keys: tuple[str, ...] = (story.id,) if story.layout in KEY_MATCHED_LAYOUTS else ()
    derived: tuple[DerivedText, ...] = ()
    if story.source == "openspec":
        derived = tuple(
            DerivedText(
                text.label,
                "project-context",
                text.reason if selection.project_context else "project context is off",
                text.text,
                text.given_when_applying and selection.project_context,
            )
            for text in openspec.config_texts(workspace)[0]
        )
    context_files = tuple(
        StoryContextFile(path, *context_reason(workspace, story, path))
        for path in story.context_files
    )
    return build_injection(
        workspace,
        command_name,
        keys,
        include_project_context=selection.project_context,
        include_discovery=selection.discovery,
        include_tech_spec=selection.tech_spec,
        additional_files=selection.additional_files,
        story_files=story.files,
        project_context=source_project_context(workspace, story),
        context_files=context_files,
        derived=derived,
        left_out=selection.left_out,
        own_reason=OWN_REASONS.get(story.layout),
        nested_keys=story.nested_keys,
        second_claims=tuple(
            StoryContextFile(claim.path, claim.reason) for claim in story.second_claims
        ),
        plan_rows=story_plan_rows(story, selection, workspace.config),
        counter=counter,
        emit=emit,
        count_tokens=count_tokens,
        scan_secrets=scan_secrets,
        excluded_files=selection.excluded,
        included_files=selection.included,
    )


def source_project_context(workspace: Workspace, story: Story) -> tuple[str, ...] | None:
    """The project-context files of the story's own source, or None for the configured ones.

    An OpenSpec workspace describes itself in ``<openspec>/project.md`` and tells agents how
    to work with its changes in ``<openspec>/AGENTS.md``; BMAD's locations are
    ``paths.project_context``.
    """
    if story.source != "openspec":
        return None
    base = workspace.config.paths_openspec.rstrip("/")
    return (f"{base}/project.md", f"{base}/AGENTS.md")


def build_prompt_system_append(
    project_root: Workspace | str | os.PathLike[str],
    command_name: str,
    story_keys: list[str],
    include_project_context: bool = True,
    include_discovery: bool = False,
    include_tech_spec: bool = False,
    additional_files: list[str] | None = None,
    *,
    emit: Emit | None = None,
) -> str:
    """Seed 000's API: the complete ``<file_injections>`` XML for the stories.

    Files are read fresh at each call. Missing, unreadable, binary and outside files are
    skipped without an exception (AC10) and reported through ``emit``.

    Returns:
        The XML string, ready to be appended to an agent's system prompt.

    Raises:
        InjectionTooLarge: the injection is over the error threshold (150 KiB by default). The
            sizes are checked from ``stat`` first, so an oversized set of files is rejected
            before anything is read.
    """
    injection = _build(
        project_root,
        command_name,
        story_keys,
        (include_project_context, include_discovery, include_tech_spec),
        additional_files or (),
        (),
        config=None,
        counter=None,
        emit=emit,
        count_tokens=False,
        reject_over_limit=True,
        scan_secrets=emit is not None,
    )
    if injection.level == "error":
        raise injection.too_large()
    return injection.text
