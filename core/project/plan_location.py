"""Where the plan is when no configuration names it: a bounded search of the project, and the
choice among what it finds.

Half of real BMAD projects keep their plan somewhere the defaults do not look: BMAD v4 in
``docs/stories/`` (``1.1.<slug>.md`` files, no ``sprint-status.yaml``), v5 and v6-alpha in
``docs/sprint-artifacts/``, monorepos one level down. :func:`search_plans` looks for what marks
a plan, by name only (no file is opened):

* ``sprint-status.yaml`` / ``.yml`` — its folder is the plan (BMAD v5, v6);
* v4 story files ``<epic>.<story>.<slug>.md`` — their folder is the plan;
* ``initiative-<slug>/tickets.toml`` — BMAD v7: the folder above the initiative is the output
  folder;
* ``openspec/changes/`` below the root — an OpenSpec root.

In a git repository the tracked files are asked for first (``git ls-files`` with pathspecs,
under configuration that outranks the repository's so that it starts none of its programs: no
fsmonitor, hook, signature check or transport); when git answers nothing, or the project is
no repository, the folders are walked breadth first, at most
:data:`SEARCH_DEPTH` folders deep, passing over dependency, build and hidden folders
(:data:`SKIPPED_FOLDERS`; ``.bmad-core`` is not passed over), and stopping after
:data:`SEARCH_LIMIT` entries with one line that says so. A folder holding ``sprint-status.yaml``
is a plan and is not listed: its thousands of artifact files are the reader's business.

:func:`choose_plan` picks one: the one inside a folder BMAD's configuration names, else the most
recently changed (its last commit when git tracks it, else the file's modification time); the
others are :attr:`PlanChoice.alternatives`, each with why it was not chosen.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import select
import subprocess
import time
from collections import deque
from pathlib import Path

from ..lean_dataclass import dataclass

SPRINT_STATUS_NAMES = ("sprint-status.yaml", "sprint-status.yml")
SEARCH_DEPTH = 4
"""Folders deeper than this below the root are not walked."""
SEARCH_LIMIT = 20_000
"""Entries (files and folders) the walk looks at before it stops."""
SKIPPED_FOLDERS = frozenset(
    ("node_modules", "vendor", ".git", "dist", "build", "target", ".venv", "venv", "__pycache__")
)
"""Folders never walked into (hidden folders are not either, except ``.bmad-core``)."""
GIT_TIMEOUT = 5.0
"""Seconds a git command of the search may take before it is given up (the walk follows)."""
GIT_OUTPUT_LIMIT = 1024 * 1024
"""Bytes of ``git ls-files`` output read at most: past it the search says it stopped."""
_COMMIT_TIMES = 8
"""Candidates whose last commit is asked for at most; later ones use their modification time."""
_V4_STORY = re.compile(r"^\d+\.\d+\.[^/]*[A-Za-z][^/]*\.md$")
"""A v4 story file's name: ``<epic>.<story>.<slug>.md``, its slug holding a letter (release
notes such as ``1.2.0.md`` are no story)."""
_PATHSPECS = (
    ":(glob)**/sprint-status.yaml",
    ":(glob)**/sprint-status.yml",
    ":(glob)**/[0-9]*.[0-9]*.*.md",
    ":(glob)**/initiative-*/tickets.toml",
    ":(glob)**/openspec/changes/*/tasks.md",
    ":(glob)**/openspec/changes/*/proposal.md",
    ":(glob)**/openspec/changes/*/.openspec.yaml",
)

KINDS = {
    "sprint-status": "sprint-status",
    "v4-stories": "BMAD v4 story files",
    "v7-initiative": "BMAD v7 initiative",
    "openspec": "OpenSpec",
}
"""Each kind of plan the search finds, and how it is named."""


@dataclass(frozen=True)
class PlanCandidate:
    """One plan the search found.

    Attributes:
        kind: a key of :data:`KINDS`.
        folder: the folder promptdeck reads, root-relative: the artifacts folder (BMAD v4–v6),
            the output folder (v7) or the OpenSpec root.
        evidence: the root-relative file or folder that marks it.
        changed: when it last changed (seconds since the epoch; 0 when unknown).
    """

    kind: str
    folder: str
    evidence: str
    changed: float = 0.0


@dataclass(frozen=True)
class PlanSearch:
    """What :func:`search_plans` found, and one line when it stopped before the end."""

    candidates: tuple[PlanCandidate, ...] = ()
    stopped: str = ""


@dataclass(frozen=True)
class PlanChoice:
    """The plan chosen among the candidates.

    Attributes:
        chosen: the BMAD plan (None when the search found none).
        openspec: the OpenSpec root found (None when none was).
        origin: one line saying which and why.
        alternatives: ``(folder, why not chosen)`` for every other candidate.
    """

    chosen: PlanCandidate | None
    openspec: PlanCandidate | None
    origin: str
    alternatives: tuple[tuple[str, str], ...] = ()


def _is_skipped(name: str) -> bool:
    return name in SKIPPED_FOLDERS or (name.startswith(".") and name != ".bmad-core")


def _candidate(rel: str) -> tuple[str, str, str] | None:
    """``(kind, folder, evidence)`` when the root-relative file ``rel`` marks a plan."""
    folder, name = posixpath.split(rel)
    if folder.count("/") + (1 if folder else 0) > SEARCH_DEPTH:
        return None
    if any(_is_skipped(part) for part in folder.split("/") if part):
        return None
    if name in SPRINT_STATUS_NAMES:
        return "sprint-status", folder or ".", rel
    if _V4_STORY.match(name):
        return "v4-stories", folder or ".", folder or "."
    parent = posixpath.basename(folder)
    if name == "tickets.toml" and parent.startswith("initiative-"):
        return "v7-initiative", posixpath.dirname(folder) or ".", rel
    if "/changes/" in f"/{folder}/" and folder.split("/")[-3:-1] == ["openspec", "changes"]:
        root = posixpath.dirname(posixpath.dirname(folder))
        return "openspec", root, root
    return None


def _git_dir(root: Path) -> Path | None:
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return folder / ".git"
    return None


def _git(root: Path, *args: str) -> tuple[bytes, bool] | None:
    """A git command's output (at most :data:`GIT_OUTPUT_LIMIT` bytes, and whether it was
    cut), or None when git is missing, fails or takes too long."""
    from ..processes import resolve_program, safe_git_environment, work_tree_of

    executable = resolve_program("git", root)
    work_tree = work_tree_of(root)
    if executable is None or work_tree is None:
        return None
    # The repository's own configuration must start no program: no fsmonitor, no hook, no
    # signature check (`log.showSignature` runs its `gpg.program`), and no transport at all
    # (a partial clone fetches a missing tree through `remote.*.uploadpack`, `ext::`, ssh).
    argv = [executable, "--no-pager", *args]
    env = {
        **os.environ,
        **safe_git_environment(work_tree / ".git", work_tree),
        "GIT_OPTIONAL_LOCKS": "0",
    }
    try:
        process = subprocess.Popen(
            argv,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        return None
    assert process.stdout is not None
    deadline = time.monotonic() + GIT_TIMEOUT
    out = process.stdout.fileno()
    chunks: list[bytes] = []
    size = 0
    cut = False
    with process:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                process.kill()
                return None
            if not select.select([out], [], [], left)[0]:
                continue
            chunk = os.read(out, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > GIT_OUTPUT_LIMIT:
                cut = True
                process.kill()
                break
        try:
            code = process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            return None
    if code != 0 and not cut:
        return None
    output = b"".join(chunks)
    if cut:
        output = output[: output.rfind(b"\0") + 1]  # the last, cut path is no path
    return output, cut


def _commit_time(root: Path, rel: str) -> float | None:
    answer = _git(root, "log", "-1", "--format=%ct", "--", rel)
    if answer is None:
        return None
    try:
        return float(answer[0].strip() or b"x")
    except ValueError:
        return None


def _mtime(root: Path, rel: str) -> float:
    try:
        return (root / rel).stat().st_mtime
    except (OSError, ValueError):
        return 0.0


def _from_git(root: Path) -> PlanSearch | None:
    git_dir = _git_dir(root)
    if git_dir is None:
        return None
    # Noted for promptdeck's remembered answers (they record what was looked at): a file added
    # to or committed in the repository changes these, and with them what the search finds.
    for name in ("index", "logs/HEAD"):
        with contextlib.suppress(OSError, ValueError):
            os.stat(git_dir / name)
    answer = _git(root, "ls-files", "-z", "--cached", "--", *_PATHSPECS)
    if answer is None:
        return None
    output, cut = answer
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for raw in output.split(b"\0"):
        rel = os.fsdecode(raw)
        hit = _candidate(rel) if rel else None
        if hit is None or (hit[0], hit[1]) in found:
            continue
        kind, folder, evidence = hit
        if not (root / (rel if kind == "sprint-status" else evidence)).exists():
            continue  # tracked but gone from the working tree
        found[(kind, folder)] = (evidence, rel)
    candidates = []
    for number, ((kind, folder), (evidence, rel)) in enumerate(found.items()):
        stamp = _commit_time(root, evidence) if len(found) > 1 and number < _COMMIT_TIMES else None
        changed = stamp if stamp is not None else _mtime(root, rel)
        candidates.append(PlanCandidate(kind, folder, evidence, changed))
    stopped = ""
    if cut:
        stopped = (
            f"the search stopped after {GIT_OUTPUT_LIMIT // 1024} KiB of git's file list;"
            " set [paths] artifacts in .promptdeck/config.toml"
        )
    return PlanSearch(tuple(candidates), stopped)


def _walk(root: Path, limit: int, depth: int) -> PlanSearch:
    pending: deque[tuple[str, int]] = deque([("", 0)])
    found: dict[tuple[str, str], PlanCandidate] = {}
    seen = 0
    while pending:
        rel, level = pending.popleft()
        folder = root / rel if rel else root
        # A plan folder is known by one stat, before its (often thousands of) files are listed.
        status = next(
            (n for n in SPRINT_STATUS_NAMES if (folder / n).is_file() and rel),
            None,
        )
        if status is not None:
            path = f"{rel}/{status}"
            found[("sprint-status", rel)] = PlanCandidate(
                "sprint-status", rel, path, _mtime(root, path)
            )
            continue
        try:
            entries = os.scandir(folder)
        except (OSError, ValueError):
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > limit:
                    return PlanSearch(
                        tuple(found.values()),
                        f"the search stopped after {limit:,} entries of the project"
                        " (set [paths] artifacts in .promptdeck/config.toml)",
                    )
                name = entry.name
                child = f"{rel}/{name}" if rel else name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_file = not is_dir and entry.is_file(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if name == "openspec" and rel and (folder / name / "changes").is_dir():
                        found.setdefault(
                            ("openspec", child),
                            PlanCandidate("openspec", child, child, _mtime(root, child)),
                        )
                    elif level < depth and not _is_skipped(name):
                        pending.append((child, level + 1))
                    continue
                if not is_file:
                    continue
                hit = _candidate(child)
                if hit is None or hit[0] == "openspec":
                    continue
                kind, plan, evidence = hit
                changed = _mtime(root, child)
                old = found.get((kind, plan))
                if old is None or changed > old.changed:
                    found[(kind, plan)] = PlanCandidate(kind, plan, evidence, changed)
    return PlanSearch(tuple(found.values()))


def search_plans(
    root: Path, *, limit: int = SEARCH_LIMIT, depth: int = SEARCH_DEPTH, use_git: bool = True
) -> PlanSearch:
    """Every plan found in the project at ``root`` (see the module docstring).

    Args:
        root: the project root (resolved).
        limit: entries the walk looks at before it stops.
        depth: folders deeper than this below the root are not walked.
        use_git: ask git for the tracked files first when the project is a repository.
    """
    if use_git:
        tracked = _from_git(root)
        if tracked is not None and (tracked.candidates or tracked.stopped):
            return tracked
    return _walk(root, limit, depth)


def _when(stamp: float) -> str:
    if stamp <= 0:
        return "unknown"
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(stamp))


def _inside(folder: str, preferred: tuple[str, ...]) -> bool:
    return any(
        folder == named or folder.startswith(named.rstrip("/") + "/") or named == "."
        for named in preferred
    )


SAMPLE_FOLDERS = frozenset(
    ("test", "tests", "testdata", "fixtures", "fixture", "examples", "example", "samples", "sample")
)
"""Folders whose plans are a project's test material, not its own plan: a tool built for BMAD
keeps sample projects under ``test/fixtures/`` that are often newer than the real plan."""


def is_sample(folder: str) -> bool:
    """Whether ``folder`` (root-relative) lies in a test, fixture or example folder."""
    return any(part.lower() in SAMPLE_FOLDERS for part in folder.split("/"))


def choose_plan(search: PlanSearch, preferred: tuple[str, ...] = ()) -> PlanChoice:
    """The plan to read among ``search``'s candidates.

    Args:
        search: what the search found.
        preferred: folders BMAD's configuration names (root-relative): a plan inside one of
            them is chosen over any other; then a plan outside test, fixture and example
            folders (:func:`is_sample`) over one inside them; then the newest.
    """
    bmad = [c for c in search.candidates if c.kind != "openspec"]
    specs = [c for c in search.candidates if c.kind == "openspec"]
    alternatives: list[tuple[str, str]] = []

    def pick(found: list[PlanCandidate]) -> PlanCandidate | None:
        if not found:
            return None
        named = [c for c in found if _inside(c.folder, preferred)]
        pool = named or found
        chosen = max(
            pool,
            key=lambda c: (not is_sample(c.folder), c.changed, c.kind == "sprint-status", c.folder),
        )
        for other in found:
            if other is chosen:
                continue
            if named and other not in named:
                why = "not inside the folder BMAD's configuration names"
            elif is_sample(other.folder) and not is_sample(chosen.folder):
                why = "inside a test, fixture or example folder"
            else:
                why = (
                    f"changed {_when(other.changed)}, before {chosen.evidence}"
                    f" ({_when(chosen.changed)})"
                )
            alternatives.append((other.folder, f"{KINDS[other.kind]} {other.evidence}: {why}"))
        return chosen

    chosen = pick(bmad)
    openspec = pick(specs)
    parts: list[str] = []
    if chosen is not None:
        how = "" if len(bmad) == 1 else f" (the newest of {len(bmad)} plans found)"
        if len(bmad) > 1 and _inside(chosen.folder, preferred):
            how = f" (of {len(bmad)} plans found, the one inside the configured folder)"
        what = "" if chosen.kind == "sprint-status" else f" ({KINDS[chosen.kind]})"
        parts.append(f"found by search: {chosen.evidence}{what}{how}")
    if openspec is not None:
        parts.append(f"OpenSpec found by search: {openspec.folder}")
    if not parts:
        parts.append("default (the search found no plan)")
    if search.stopped:
        parts.append(search.stopped)
    return PlanChoice(chosen, openspec, "; ".join(parts), tuple(alternatives))


def planning_beside(root: Path, plan: str, kind: str) -> str | None:
    """The planning folder of a plan found by search: ``planning-artifacts`` beside it, else
    the folder above it (``docs/`` for ``docs/sprint-artifacts``) unless that is the root."""
    if kind == "v7-initiative":
        beside = f"{plan}/planning-artifacts"
        return beside if (root / beside).is_dir() else None
    parent = posixpath.dirname(plan)
    beside = f"{parent}/planning-artifacts" if parent else "planning-artifacts"
    if (root / beside).is_dir():
        return beside
    return parent or None
