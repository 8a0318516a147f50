"""The file injection (seed 000): the ``<file_injections>`` XML an agent receives.

:func:`build_injection` lists every candidate file with its category, status, size and the
reason it matched or was left out, and builds the exact XML; :func:`build_prompt_system_append`
is seed 000's string API over it. Files are read fresh at every call (AC4); only token counts
are cached, by content hash, in the :class:`~promptdeck.core.tokens.TokenCounter`.

Beyond the seed:

- story keys match on key boundaries (``A-1`` never matches ``a-10``), see :mod:`.keys`;
- no file outside the project root is read, whether named directly or reached by a symlink;
- a file over the error line on its own is not read at all: its size comes from ``stat``, and
  once the files' sizes on disk add up past the error line the rest are not read either;
- every file is read through :mod:`.textfiles`, the guarded reader (regular files only, never
  a FIFO or a device);
- only text documents of the planning kinds (``injection.extensions``: ``.md``, ``.yaml``,
  ``.yml``, ``.txt``) are key-matched candidates, and hidden files never are;
- every included file is scanned for credentials (:mod:`.secret_scan`): findings name the file,
  the line and the kind, never the secret;
- content holding ``</file>`` or ``</file_injections>`` is flagged: it breaks the envelope.
"""

from __future__ import annotations

import errno
import os
import re
import stat as stat_module
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .config import Config, load_config
from .errors import InjectionTooLarge
from .keys import artifact_category, key_pattern, normalize_key
from .listing import Entry, folder_names, sorted_entries
from .secret_scan import SecretFinding, scan_text
from .stories import Story
from .textfiles import TextProblem, printable_name, read_file_bytes
from .tokens import Meter, TokenCounter, get_counter
from .vocabulary import FileStatus, InjectionLevel
from .workspace import Workspace

Emit = Callable[[str, dict[str, Any]], None]

RULE = "DO NOT read these files - content already provided"
OPEN_TAG = f'<file_injections rule="{RULE}">'
CLOSE_TAG = "</file_injections>"
ENVELOPE_BREAKERS = ("</file>", "</file_injections>")

# AC9: the order of the groups in the injection.
CATEGORIES = ("project-context", "story", "discovery", "tech-spec", "additional")

INCLUDED: Final = "included"
DUPLICATE: Final = "duplicate"
EXCLUDED: Final = "excluded"
MISSING: Final = "missing"
UNREADABLE: Final = "unreadable"
NOT_UTF8: Final = "not-utf8"
OUTSIDE: Final = "outside-project"
TOO_LARGE: Final = "too-large"
SKIPPED_STATUSES: tuple[FileStatus, ...] = (MISSING, UNREADABLE, NOT_UTF8, OUTSIDE, TOO_LARGE)


def largest_first(
    sized: Iterable[tuple[str, int]], count: int | None = None
) -> list[tuple[str, int]]:
    """``(path, bytes)`` pairs ranked largest first, ties by path; the first ``count`` (all
    when None). The one ranking of "the largest files" every size message shows."""
    return sorted(sized, key=lambda item: (-item[1], item[0]))[:count]


@dataclass(frozen=True)
class Selection:
    """What the user includes beyond the story's own files: the app's toggles, the CLI's flags."""

    project_context: bool = True
    discovery: bool = False
    tech_spec: bool = False
    additional_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class InjectedFile:
    """One candidate file and what became of it.

    Attributes:
        path: root-relative with forward slashes; as given when it lies outside the project.
        category: one of :data:`CATEGORIES`.
        status: ``included``, ``duplicate``, ``excluded``, ``missing``, ``unreadable``,
            ``not-utf8``, ``outside-project`` or ``too-large``.
        bytes: size on disk (0 when missing or outside the project).
        tokens: tokens of the content alone; None when not read or not counted.
        reason: why it matched, or why it is not included.
        flags: ``breaks-envelope`` when the content holds a closing tag of the envelope;
            ``secrets`` when the secret scan found likely credentials.
        secrets: the likely credentials found in the content (file, line, kind).
    """

    path: str
    category: str
    status: FileStatus
    bytes: int
    tokens: int | None
    reason: str
    flags: tuple[str, ...] = ()
    secrets: tuple[SecretFinding, ...] = ()

    @property
    def included(self) -> bool:
        """True when the file's content is in the injection."""
        return self.status == INCLUDED

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of one ``inspect --json`` file row."""
        return {
            "path": self.path,
            "category": self.category,
            "status": self.status,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "reason": self.reason,
            "flags": list(self.flags),
            "secrets": [{"line": f.line, "kind": f.kind} for f in self.secrets],
        }


@dataclass(frozen=True)
class Injection:
    """The built injection: every candidate file, the exact XML, and its meters.

    ``total`` measures ``text``; ``envelope`` is the exact remainder once the included files'
    own rows are taken away (tags, paths, newlines), so the rows add up to the total in bytes
    and in tokens. ``size_bytes`` is what the thresholds compare: the text plus the on-disk
    size of any file too large to read.
    """

    command_name: str
    story_keys: tuple[str, ...]
    files: tuple[InjectedFile, ...]
    text: str
    total: Meter
    envelope: Meter
    level: InjectionLevel
    size_bytes: int
    warn_bytes: int
    error_bytes: int
    encoding: str
    warnings: tuple[str, ...] = field(default=())

    def included(self) -> tuple[InjectedFile, ...]:
        """The files whose content is in the injection, in order."""
        return tuple(f for f in self.files if f.included)

    @property
    def secrets(self) -> tuple[SecretFinding, ...]:
        """Every likely credential in the included files, in file order."""
        return tuple(finding for f in self.files if f.included for finding in f.secrets)

    def largest(self, count: int | None = 3) -> list[tuple[str, int]]:
        """The ``count`` largest files that make up the size (all when None), largest first."""
        sized = [(f.path, f.bytes) for f in self.files if f.status in (INCLUDED, TOO_LARGE)]
        return largest_first(sized, count)

    def to_dict(self) -> dict[str, Any]:
        """The injection part of ``inspect --json``."""
        return {
            "files": [f.to_dict() for f in self.files],
            "total": self.total.to_dict(),
            "envelope": self.envelope.to_dict(),
            "level": self.level,
            "size_bytes": self.size_bytes,
            "warn_bytes": self.warn_bytes,
            "error_bytes": self.error_bytes,
            "encoding": self.encoding,
            "warnings": list(self.warnings),
            "secrets": [f.to_dict() for f in self.secrets],
        }


@dataclass
class _Candidate:
    """A file on its way into the injection, before its content is read."""

    shown: str
    category: str
    reason: str
    path: Path
    wanted: bool
    status: FileStatus = INCLUDED
    size: int = 0
    content: str | None = None
    flags: tuple[str, ...] = ()
    secrets: tuple[SecretFinding, ...] = ()


_Match = tuple[str, str, str, str]
"""A file name in the artifacts folder, its path, the story key it belongs to, and its
category (see :func:`~promptdeck.core.keys.artifact_category`)."""

_MATCH_CACHE: dict[tuple[str, tuple[str, ...]], tuple[int, list[_Match]]] = {}
_MATCH_CACHE_SIZE = 256
_RACY_SECONDS = 2.0
"""A listing is cached only once its folder's mtime is this old: a file created in the same
clock tick as the listing would otherwise leave the mtime unchanged and the listing stale."""


def _matching_artifacts(
    folder: Path,
    keys: list[str],
    extensions: tuple[str, ...] = (".md", ".yaml", ".yml", ".txt"),
) -> list[_Match]:
    """The regular files (links followed) directly in ``folder`` that belong to one of
    ``keys``, sorted case-insensitively, each with the first key it belongs to and its
    category.

    Only names ending in one of ``extensions`` (case-insensitive) are candidates, and hidden
    names never are: a ``1-4-deploy.env`` or ``.1-4-notes`` is not a planning document.

    Listing a folder of thousands of artifacts is most of an injection's cost, so the matches
    are cached until the folder's mtime changes (a file added, removed or renamed). Only the
    names are cached: every file is still stat-ed and read fresh at each build.
    """
    wanted = tuple(ext.lower() for ext in extensions)
    try:
        mtime_ns = folder.stat().st_mtime_ns
    except OSError:
        return []
    cache_key = (str(folder), (*keys, "\0", *extensions))
    cached = _MATCH_CACHE.get(cache_key)
    if cached is not None and cached[0] == mtime_ns:
        return cached[1]
    names = folder_names(folder)
    if names is None:
        return []
    # One pass finds the few names that hold a key at all; the name's shape then says whose
    # file it is and of what kind (a name starting with another story's key is not this one's).
    # Only visible text documents of the planning kinds are candidates.
    names = [n for n in names if not n.startswith(".") and n.lower().endswith(wanted)]
    held = _names_holding_keys(names, keys)
    matches: list[_Match] = []
    for entry in sorted_entries(folder, held):
        for key in keys:
            category = artifact_category(entry.name, key)
            if category is not None:
                if _is_file(entry):
                    matches.append((entry.name, entry.path, key, category))
                break
    if time.time() - mtime_ns / 1e9 > _RACY_SECONDS:
        if len(_MATCH_CACHE) >= _MATCH_CACHE_SIZE:
            _MATCH_CACHE.clear()
        _MATCH_CACHE[cache_key] = (mtime_ns, matches)
    return matches


def _is_file(entry: Entry) -> bool:
    try:
        return entry.is_file()
    except OSError:  # a symlink loop, a permission error: not a candidate
        return False


def _names_holding_keys(names: list[str], keys: list[str]) -> dict[str, str]:
    """The names holding one of ``keys`` on key boundaries (as :func:`.keys.key_pattern`
    finds them), each with the first key it holds.

    One pass over all the names at once, case-folded, with a plain pattern the regex engine
    can skip ahead on, finds the few candidates; each is then checked with the exact key
    pattern. An order of magnitude faster than a case-insensitive search per name. NUL
    cannot occur in a file name, so it separates them (and no key holds it).
    """
    # Case folding may change a name's length, never its count of NULs: indexes stay right.
    # The dotless i is the one letter a case-insensitive ASCII pattern matches that folding
    # leaves alone.
    blob = "\0".join(names).casefold().replace("\u0131", "i")
    candidates: set[int] = set()
    for key in keys:
        parts = [re.escape(part.casefold()) for part in normalize_key(key).split("-") if part]
        index = 0
        counted_to = 0
        for match in re.finditer(r"[-._]".join(parts), blob):
            index += blob.count("\0", counted_to, match.start())
            counted_to = match.start()
            candidates.add(index)
    found: dict[str, str] = {}
    for index in sorted(candidates):
        name = names[index]
        for key in keys:
            if key_pattern(key).search(name) is not None:
                found[name] = key
                break
    return found


def _sorted_group(items: list[_Candidate]) -> list[_Candidate]:
    return sorted(items, key=lambda c: (c.shown.lower(), c.shown))


def _plan(
    root: Path,
    config: Config,
    story_keys: Sequence[str],
    include_project_context: bool,
    include_discovery: bool,
    include_tech_spec: bool,
    additional_files: Iterable[str],
    story_files: Iterable[str],
    project_context: Sequence[str] | None = None,
) -> list[_Candidate]:
    """Every candidate in injection order, resolved and classified, nothing read yet."""
    groups: dict[str, list[_Candidate]] = {category: [] for category in CATEGORIES}

    # 1. Project context: the first configured candidate that exists; or, when the source
    # names its own (OpenSpec's project.md and AGENTS.md), every one of those that exists.
    contexts = list(config.paths_project_context if project_context is None else project_context)
    existing = [p for p in contexts if (root / p).is_file()]
    found_all = existing if project_context is not None else existing[:1]
    for found in found_all:
        groups["project-context"].append(
            _Candidate(
                found,
                "project-context",
                "project context" if include_project_context else "project context is off",
                root / found,
                include_project_context,
            )
        )
    if not found_all and include_project_context and contexts:
        groups["project-context"].append(
            _Candidate(
                contexts[0],
                "project-context",
                "no project context file (looked for " + ", ".join(contexts) + ")",
                root / contexts[0],
                True,
            )
        )

    # 2–4. Story, discovery and tech-spec files matched by key in the artifacts folder.
    artifacts = root / config.paths_artifacts
    keys = [key for key in story_keys if normalize_key(key)]
    if keys:
        switches = {"story": True, "discovery": include_discovery, "tech-spec": include_tech_spec}
        matches = _matching_artifacts(artifacts, keys, config.injection_extensions)
        for name, file_path, key, category in matches:
            wanted = switches[category]
            reason = f"name matches story key {key}" if wanted else f"{category} files are off"
            shown = f"{config.paths_artifacts.rstrip('/')}/{name}"
            groups[category].append(_Candidate(shown, category, reason, Path(file_path), wanted))

    # The story's own files (an OpenSpec change's documents, a BMAD story file kept elsewhere);
    # one the key scan already found is not listed twice.
    scanned = {c.shown for c in groups["story"]}
    for name in story_files:
        if name not in scanned:
            groups["story"].append(
                _Candidate(name, "story", "a file of the story", root / name, True)
            )

    # 5. Additional explicit files, relative to the root unless absolute.
    for name in additional_files:
        path = Path(name).expanduser()
        shown = name
        if not path.is_absolute():
            path = root / path
            shown = Path(os.path.normpath(name)).as_posix()
        groups["additional"].append(_Candidate(shown, "additional", "added by hand", path, True))

    ordered: list[_Candidate] = []
    for category in CATEGORIES:
        ordered.extend(_sorted_group(groups[category]))
    return ordered


def _resolve(candidates: list[_Candidate], root: Path, error_bytes: int) -> None:
    """Set status and size of each candidate from the file system, without reading content."""
    seen: dict[str, _Candidate] = {}
    for candidate in candidates:
        shown = printable_name(candidate.shown)
        if shown != candidate.shown:
            # The path attribute of the envelope must be text: such a file cannot be named.
            candidate.shown = shown
            candidate.status = NOT_UTF8
            candidate.reason = "file name is not valid UTF-8; not read"
            continue
        if not candidate.wanted:
            candidate.status = EXCLUDED
            try:
                candidate.size = candidate.path.stat().st_size
            except OSError:
                candidate.size = 0
            continue
        try:
            real = candidate.path.resolve(strict=True)
        except RuntimeError:
            candidate.status = UNREADABLE
            candidate.reason = "a symlink loop; not read"
            continue
        except ValueError:
            candidate.status = UNREADABLE
            candidate.reason = "a NUL byte in the path; not read"
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                candidate.status = UNREADABLE
                candidate.reason = "a symlink loop; not read"
                continue
            candidate.status = MISSING
            if not candidate.reason.startswith("no project context"):
                candidate.reason = "no such file"
            continue
        try:
            inside = real.relative_to(root)
        except ValueError:
            candidate.status = OUTSIDE
            candidate.reason = "outside the project root; not read"
            continue
        if candidate.category == "additional":
            candidate.shown = inside.as_posix()
        key = str(real)
        first = seen.get(key)
        if first is not None:
            candidate.status = DUPLICATE
            candidate.reason = f"already included as {first.shown}"
            candidate.size = first.size
            continue
        seen[key] = candidate
        try:
            stat = real.stat()
        except OSError as exc:
            candidate.status = UNREADABLE
            candidate.reason = exc.strerror or "cannot stat"
            continue
        if not stat_module.S_ISREG(stat.st_mode):
            # A FIFO or a device would block or never end: it is never opened.
            candidate.status = UNREADABLE
            candidate.reason = "not a regular file; not read"
            continue
        candidate.size = stat.st_size
        if stat.st_size > error_bytes:
            candidate.status = TOO_LARGE
            candidate.reason = (
                f"{stat.st_size:,} bytes on disk, over the {error_bytes:,}-byte limit on its "
                "own; not read"
            )


def _over_budget(candidates: list[_Candidate], error_bytes: int) -> None:
    """Mark as too large, unread, every included file past the point where the sizes on disk
    add up over the error line: the verdict comes from ``stat``, and no more than the error
    line is ever read, however many files match."""
    running = 0
    for candidate in candidates:
        if candidate.status != INCLUDED:
            continue
        running += candidate.size
        if running > error_bytes:
            candidate.status = TOO_LARGE
            candidate.reason = (
                f"not read: the files before it and this one are {running:,} bytes on disk, "
                f"over the {error_bytes:,}-byte limit"
            )


def _read(candidate: _Candidate, root: Path, limit: int) -> None:
    """Read one resolved candidate fresh from disk; mark it if it is not UTF-8 text.

    Every byte is kept (a BOM too): the injection sends the bytes on disk.
    """
    data = read_file_bytes(candidate.path, root, limit=limit)
    if isinstance(data, TextProblem):
        candidate.status = TOO_LARGE if data.reason == "too-large" else UNREADABLE
        candidate.reason = str(data)
        return
    candidate.size = len(data)
    nul = data.find(b"\x00")
    if nul != -1:
        candidate.status = NOT_UTF8
        candidate.reason = f"binary (NUL byte at offset {nul})"
        return
    try:
        # Decoded without newline translation: the bytes sent are the bytes on disk.
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        candidate.status = NOT_UTF8
        candidate.reason = f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        return
    candidate.content = text
    breakers = [tag for tag in ENVELOPE_BREAKERS if tag in text]
    if breakers:
        candidate.flags = ("breaks-envelope",)


def _escape_attr(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


def render_envelope(files: Iterable[tuple[str, str]]) -> str:
    """The exact ``<file_injections>`` XML for ``(path, content)`` pairs (seed 000 AC5).

    Content is not escaped (a documented decision of the seed); the path attribute is.
    """
    return "".join(_envelope_pieces(files))


def _envelope_pieces(files: Iterable[tuple[str, str]]) -> list[str]:
    """The envelope as pieces that concatenate to it: each file's content is a piece of its
    own, so its count is shared with the whole's (see ``TokenCounter.count_joined``)."""
    pieces: list[str] = []
    glue = OPEN_TAG
    for path, content in files:
        pieces.append(f'{glue}\n  <file path="{_escape_attr(path)}">\n')
        pieces.append(content)
        glue = "\n  </file>"
    pieces.append(f"{glue}\n{CLOSE_TAG}")
    return pieces


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
    config: Config | None = None,
    counter: TokenCounter | None = None,
    emit: Emit | None = None,
    count_tokens: bool = True,
    scan_secrets: bool = True,
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
        config: settings to use instead of the workspace's.
        counter: token counter (default: the process-wide one for the configured encoding).
        emit: receives ``injection:warning``, ``injection:empty`` and ``injection:skipped``.
        count_tokens: False leaves token counts None, for an instant byte-only build.
        scan_secrets: False skips the secret scan (an instant preview; never before a run).

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
    )


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
    candidates = _plan(
        root, config, story_keys, *switches, additional_files, story_files, project_context
    )
    _resolve(candidates, root, config.injection_error_bytes)
    if reject_over_limit:
        sized = [(c.shown, c.size) for c in candidates if c.status in (INCLUDED, TOO_LARGE)]
        on_disk = sum(size for _, size in sized)
        if on_disk > config.injection_error_bytes:
            raise InjectionTooLarge(
                on_disk, config.injection_error_bytes, command_name, largest_first(sized)
            )
    _over_budget(candidates, config.injection_error_bytes)
    for candidate in candidates:
        if candidate.status == INCLUDED:
            _read(candidate, root, config.injection_error_bytes)
            if scan_secrets and candidate.content is not None:
                candidate.secrets = scan_text(candidate.shown, candidate.content)
                if candidate.secrets:
                    candidate.flags = (*candidate.flags, "secrets")

    included = [c for c in candidates if c.status == INCLUDED and c.content is not None]
    pieces = _envelope_pieces((c.shown, c.content or "") for c in included)
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
                c.shown, c.category, c.status, c.size, tokens, c.reason, c.flags, c.secrets
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

    level: InjectionLevel = "ok"
    if size_bytes > config.injection_error_bytes:
        level = "error"
    elif size_bytes > config.injection_warn_bytes:
        level = "warning"

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
    change's files (``Story.files``) instead.
    """
    keys: tuple[str, ...] = (story.id,) if story.source == "bmad" else ()
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
        counter=counter,
        emit=emit,
        count_tokens=count_tokens,
        scan_secrets=scan_secrets,
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
        raise InjectionTooLarge(
            injection.size_bytes, injection.error_bytes, command_name, injection.largest()
        )
    return injection.text
