"""A synthetic BMAD workspace for the benchmarks: big, deterministic, and realistic in shape.

``make_synthetic_workspace(dest)`` builds (or reuses, when ``dest`` already holds the same
version) a workspace whose artifacts folder holds exactly 10,000 files:

* ``sprint-status.yaml`` with 200 stories over 10 epics (``1-1`` … ``10-20``);
* 180 story files (the last two stories of each epic are backlog, with no file yet);
* discovery and tech-spec files for many stories;
* thousands of other artifacts: agent run logs, JSON run records, XML context dumps, review
  notes, session notes — some named after stories, as real sprint artifacts are.

One story, :data:`BIG_STORY` (``7-7``), has exactly 12 matching files that sum to exactly
150 KiB (153,600 bytes) with the default inclusion (project context + story files) **plus
discovery and tech-spec on**: the project context, the story file, six other story-category
files, two discovery files and two tech-spec files.

Other benchmarks import this module (``from synthetic import make_synthetic_workspace`` when
run from ``bench/``).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import TypedDict, cast

VERSION = 2
"""2: story 7-7's run logs and context dump are ``.txt`` and ``.md`` files, the kinds the
injection takes as key-matched candidates (``injection.extensions``)."""
STAMP_NAME = ".synthetic-workspace.json"
ARTIFACTS = "_bmad-output/implementation-artifacts"
PLANNING = "_bmad-output/planning-artifacts"
PROJECT_CONTEXT = f"{PLANNING}/sprint-project-context.md"
ARTIFACT_FILES = 10_000
EPICS = 10
STORIES_PER_EPIC = 20
BIG_STORY = "7-7"
BIG_STORY_BYTES = 150 * 1024
BIG_STORY_FILE_COUNT = 12

_STATUSES = ("done", "done", "done", "review", "in-progress", "ready-for-dev")
_EPIC_NAMES = (
    "Accounts and sign-in",
    "Workspace setup",
    "Document editor",
    "Comments and mentions",
    "Search",
    "Notifications",
    "Offline mode",
    "Sharing and permissions",
    "Billing",
    "Admin console",
)
_TOPICS = (
    "session token refresh",
    "invite links",
    "markdown paste handling",
    "mention autocomplete",
    "search index warm-up",
    "digest e-mails",
    "sync conflict resolution",
    "link sharing",
    "invoice PDFs",
    "audit log export",
    "rate limiting",
    "draft autosave",
    "presence indicators",
    "attachment uploads",
    "keyboard shortcuts",
    "undo history",
    "folder moves",
    "trash retention",
    "SSO metadata",
    "usage metering",
)
_SENTENCES = (
    "The {topic} path reads the workspace settings once per request and caches them for "
    "{n} seconds, which keeps the p95 latency under {m} ms in the staging load test.",
    "When the client reconnects after {n} minutes offline, the {topic} queue replays pending "
    "operations in the order they were recorded and drops the ones the server already applied.",
    "We keep the {topic} logic in one module so the web and desktop clients share the same "
    "rules; the desktop client only adds file-system watching on top.",
    "A failing {topic} call is retried {n} times with exponential back-off starting at {m} ms; "
    "after that the error is surfaced in the status bar with a retry button.",
    "Review found that {topic} ignored the user's locale when formatting dates; the fix passes "
    "the locale from the request context instead of reading the server default.",
    "The migration for {topic} adds a nullable column first, backfills it in batches of {n} "
    "rows, and only then adds the NOT NULL constraint, so no table lock is held for long.",
    "Acceptance check: with {n} concurrent editors, {topic} must not lose an update, and the "
    "final document must equal the server's merge of every operation.",
    "Logging for {topic} records the request id, the workspace id and the elapsed time, never "
    "the document content, to stay within the data-protection rules.",
    "The feature flag for {topic} defaults to off; support can enable it per workspace from "
    "the admin console while we watch the error rate for {n} days.",
    "Tests for {topic} use the in-memory store and a fake clock, so the {n} cases run in under "
    "{m} ms and never depend on wall time.",
)


def _paragraph(rng: random.Random, sentences: int) -> str:
    parts = []
    for _ in range(sentences):
        template = rng.choice(_SENTENCES)
        parts.append(
            template.format(topic=rng.choice(_TOPICS), n=rng.randint(2, 500), m=rng.randint(5, 900))
        )
    return " ".join(parts)


def _text_of_size(rng: random.Random, heading: str, size: int) -> str:
    """Markdown starting with ``heading``, exactly ``size`` UTF-8 bytes long (ASCII only)."""
    chunks = [heading, ""]
    length = len(heading) + 1
    section = 1
    while length < size:
        block = f"## Section {section}\n\n{_paragraph(rng, 5)}\n"
        chunks.append(block)
        length += len(block) + 1
        section += 1
    text = "\n".join(chunks)
    if len(text) >= size:
        return text[: size - 1] + "\n"
    return text.ljust(size - 1) + "\n"


def _story_keys() -> list[tuple[int, int]]:
    return [
        (epic, story) for epic in range(1, EPICS + 1) for story in range(1, STORIES_PER_EPIC + 1)
    ]


def _slug(epic: int, story: int) -> str:
    return _TOPICS[(epic * 7 + story) % len(_TOPICS)].lower().replace(" ", "-")


def _story_file(
    rng: random.Random, epic: int, story: int, status: str, size: int, title: str = ""
) -> str:
    title = title or _TOPICS[(epic * 7 + story) % len(_TOPICS)].capitalize()
    done = "x" if status in ("done", "review") else " "
    head = (
        f"# Story {epic}.{story}: {title}\n\n"
        f"Status: {status}\n\n"
        "## Story\n\n"
        f"As a workspace member, I want {title.lower()} to behave predictably, "
        "so that my work is never lost.\n\n"
        "## Acceptance Criteria\n\n"
        f"1. {_paragraph(rng, 1)}\n2. {_paragraph(rng, 1)}\n\n"
        "## Tasks / Subtasks\n\n"
        f"- [{done}] Task 1: implement the core path (AC: 1)\n"
        f"  - [{done}] 1.1 Add the module and its tests\n"
        f"  - [{done}] 1.2 Wire it into the request handler\n"
        "- [ ] Task 2: observability (AC: 2)\n"
        "  - [ ] 2.1 Structured log line with request id and elapsed time\n\n"
        "## Dev Notes\n\n"
    )
    body_size = max(size - len(head), 200)
    return head + _text_of_size(rng, "### Notes", body_size)


def _big_story_files() -> list[tuple[str, str, int]]:
    """(root-relative path, category, size) for the 12 files of :data:`BIG_STORY`."""
    sizes = [9_200, 31_000, 14_500, 12_000, 9_800, 8_400, 11_300, 13_700, 10_600, 12_900, 10_100]
    sizes.append(BIG_STORY_BYTES - sum(sizes))
    names = [
        (PROJECT_CONTEXT, "project-context"),
        (f"{ARTIFACTS}/7-7-offline-sync-conflict-resolution.md", "story"),
        (f"{ARTIFACTS}/review-7-7-round-1.md", "story"),
        (f"{ARTIFACTS}/review-7-7-round-2.md", "story"),
        (f"{ARTIFACTS}/validation-report-7-7.md", "story"),
        (f"{ARTIFACTS}/agent-run-7-7-attempt-1.txt", "story"),
        (f"{ARTIFACTS}/agent-run-7-7-attempt-2.txt", "story"),
        (f"{ARTIFACTS}/context-7-7.md", "story"),
        (f"{ARTIFACTS}/sprint-7-7-discovery-story.md", "discovery"),
        (f"{ARTIFACTS}/7-7-discovery-notes.md", "discovery"),
        (f"{ARTIFACTS}/tech-spec-7-7-sync-engine.md", "tech-spec"),
        (f"{ARTIFACTS}/tech-spec-7-7-conflict-model.md", "tech-spec"),
    ]
    return [(path, category, size) for (path, category), size in zip(names, sizes, strict=True)]


_NOISE_KINDS = (
    ("agent-run-{key}-attempt-{n}.log", "log"),
    ("run-{serial:06d}.json", "json"),
    ("context-dump-{serial:06d}.xml", "xml"),
    ("session-notes-{serial:06d}.md", "md"),
    ("review-{key}-round-{n}.md", "md"),
    ("standup-{serial:06d}.md", "md"),
    ("metrics-{serial:06d}.csv", "csv"),
    ("prompt-cache-{serial:06d}.txt", "txt"),
)


def _noise(rng: random.Random, kind: str, title: str) -> str:
    if kind == "json":
        return json.dumps({"run": title, "phase": rng.choice(("dev", "review")), "ok": True}) + "\n"
    if kind == "xml":
        return f'<context run="{title}">\n  <note>{_paragraph(rng, 1)}</note>\n</context>\n'
    if kind == "csv":
        return "metric,value\n" + "".join(f"m{i},{rng.randint(0, 999)}\n" for i in range(8))
    if kind == "md":
        return f"# {title}\n\n{_paragraph(rng, rng.randint(1, 3))}\n"
    return "\n".join(f"[{i:04d}] {_paragraph(rng, 1)}" for i in range(rng.randint(2, 6))) + "\n"


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", newline="\n")


class Inclusion(TypedDict):
    """The selection flags under which every file of the big story is matched."""

    project_context: bool
    discovery: bool
    tech_spec: bool


class Manifest(TypedDict):
    """What :func:`make_synthetic_workspace` built (also its stamp file, as JSON)."""

    version: int
    root: str
    artifact_files: int
    stories: int
    story_files: int
    big_story: str
    big_story_files: list[str]
    big_story_bytes: int
    big_story_inclusion: Inclusion


def make_synthetic_workspace(dest: Path, artifact_files: int = ARTIFACT_FILES) -> Manifest:
    """Build the synthetic workspace in ``dest`` (reused when already built) and describe it.

    Args:
        dest: an empty or missing folder, or one this function built before.
        artifact_files: how many files the artifacts folder holds (the scaling curves use
            1,000 … 200,000; at least 500).

    Returns:
        ``root``, ``artifact_files`` (10,000), ``stories`` (200), ``story_files``,
        ``big_story`` (``"7-7"``), ``big_story_files`` (12 root-relative paths, in injection
        order), ``big_story_bytes`` (153,600) and ``big_story_inclusion`` (the flags under which
        all 12 files are matched: project context, discovery and tech-spec on).
    """
    dest = Path(dest)
    stamp = dest / STAMP_NAME
    if stamp.is_file():
        built: dict[str, object] = json.loads(stamp.read_text(encoding="utf-8"))
        if built.get("version") == VERSION and built.get("artifact_files") == artifact_files:
            # The stamp was written from a Manifest by this same version of the script.
            reused = cast(Manifest, built)
            reused["root"] = str(dest.resolve())
            return reused
        # An older build of this same workspace (its stamp says so): built again from scratch.
        shutil.rmtree(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty and holds no synthetic workspace")
    rng = random.Random(20240707)
    artifacts = dest / ARTIFACTS
    planning = dest / PLANNING
    artifacts.mkdir(parents=True)
    planning.mkdir(parents=True)
    (dest / ".promptdeck").mkdir()
    written = 0

    epics = ["# Epics\n"]
    for epic in range(1, EPICS + 1):
        epics.append(f"\n## Epic {epic}: {_EPIC_NAMES[epic - 1]}\n\n{_paragraph(rng, 2)}\n")
    _write(planning / "epics.md", "".join(epics))

    status_lines = [
        "# generated by bench/synthetic.py\nproject: synthetic\n\ndevelopment_status:\n"
    ]
    story_files = 0
    for epic, story in _story_keys():
        if story == 1:
            status_lines.append(f"  epic-{epic}: in-progress\n")
        backlog = story > STORIES_PER_EPIC - 2
        status = "backlog" if backlog else rng.choice(_STATUSES)
        slug = _slug(epic, story)
        if f"{epic}-{story}" == BIG_STORY:
            status, slug = "in-progress", "offline-sync-conflict-resolution"
        status_lines.append(f"  {epic}-{story}-{slug}: {status}\n")
        if story == STORIES_PER_EPIC:
            status_lines.append(f"  epic-{epic}-retrospective: optional\n")
        key = f"{epic}-{story}"
        if backlog or key == BIG_STORY:
            continue
        size = rng.randint(2_000, 9_000)
        _write(
            artifacts / f"{key}-{_slug(epic, story)}.md",
            _story_file(rng, epic, story, status, size),
        )
        story_files += 1
        written += 1
        if story % 4 != 0:
            _write(
                artifacts / f"sprint-{key}-discovery-story.md",
                _text_of_size(rng, f"# Discovery: Story {epic}.{story}", rng.randint(1_500, 5_000)),
            )
            written += 1
        if story % 2 == 0:
            _write(
                artifacts / f"tech-spec-{key}-{_slug(epic, story)}.md",
                _text_of_size(rng, f"# Tech-Spec: Story {epic}.{story}", rng.randint(1_500, 6_000)),
            )
            written += 1
    _write(artifacts / "sprint-status.yaml", "".join(status_lines))
    written += 1

    big_files = _big_story_files()
    for rel, category, size in big_files:
        if category == "story" and rel.endswith("-resolution.md"):
            text = _story_file(rng, 7, 7, "in-progress", size, "Offline sync conflict resolution")
        else:
            text = _text_of_size(rng, f"# {Path(rel).stem}", size)
        _write(dest / rel, text)
        if rel.startswith(ARTIFACTS):
            written += 1
    story_files += 1

    keys = [f"{e}-{s}" for e, s in _story_keys() if f"{e}-{s}" != BIG_STORY]
    serial = 0
    while written < artifact_files:
        pattern, kind = _NOISE_KINDS[serial % len(_NOISE_KINDS)]
        serial += 1
        name = pattern.format(key=rng.choice(keys), n=rng.randint(1, 4), serial=serial)
        path = artifacts / name
        if path.exists():
            continue
        _write(path, _noise(rng, kind, Path(name).stem.replace("-", " ").capitalize()))
        written += 1

    manifest: Manifest = {
        "version": VERSION,
        "root": str(dest.resolve()),
        "artifact_files": artifact_files,
        "stories": EPICS * STORIES_PER_EPIC,
        "story_files": story_files,
        "big_story": BIG_STORY,
        "big_story_files": [rel for rel, _, _ in big_files],
        "big_story_bytes": sum(size for _, _, size in big_files),
        "big_story_inclusion": {"project_context": True, "discovery": True, "tech_spec": True},
    }
    _check(dest, [rel for rel, _, _ in big_files], artifact_files)
    _write(stamp, json.dumps(manifest, indent=2) + "\n")
    settle(artifacts)
    return manifest


DOCS_PLAN = "docs/sprint-artifacts"
"""Where :func:`make_docs_plan_workspace` keeps the plan: BMAD v5's folder, named by no
configuration, so promptdeck finds it by search."""


def make_docs_plan_workspace(dest: Path, artifact_files: int = ARTIFACT_FILES) -> Path:
    """The synthetic workspace with its plan under ``docs/`` (v5's ``docs/sprint-artifacts``
    and ``docs/planning-artifacts``; ``_bmad-output/`` keeps only the project context);
    reused when already built."""
    if not (dest / DOCS_PLAN).is_dir():
        make_synthetic_workspace(dest, artifact_files)
        (dest / "docs").mkdir()
        (dest / ARTIFACTS).rename(dest / DOCS_PLAN)
        (dest / PLANNING).rename(dest / "docs" / "planning-artifacts")
        settle(dest / DOCS_PLAN)
    return dest.resolve()


SETTLE_SECONDS = 2.1
"""promptdeck caches a folder's key matches only once the folder has been unchanged for two
seconds (``artifact_match._RACY_SECONDS``): people toggle in folders that are not being written."""


def settle(folder: Path) -> None:
    """Wait until ``folder`` has been unchanged for :data:`SETTLE_SECONDS` (steady state)."""
    age = time.time() - folder.stat().st_mtime
    if age < SETTLE_SECONDS:
        time.sleep(SETTLE_SECONDS - age)


def _check(dest: Path, big_files: list[str], artifact_files: int) -> None:
    """Fail loudly if the generator drifted from what the benchmarks rely on."""
    from promptdeck.core.stories.keys import name_matches_key

    artifacts = dest / ARTIFACTS
    names = [p.name for p in artifacts.iterdir()]
    if len(names) != artifact_files:
        raise AssertionError(f"{len(names)} artifact files, expected {artifact_files}")
    matched = sorted(n for n in names if name_matches_key(n, BIG_STORY))
    expected = sorted(Path(rel).name for rel in big_files if rel.startswith(ARTIFACTS))
    if matched != expected:
        raise AssertionError(f"files matching {BIG_STORY}: {matched}, expected {expected}")
    total = sum((dest / rel).stat().st_size for rel in big_files)
    if total != BIG_STORY_BYTES or len(expected) + 1 != BIG_STORY_FILE_COUNT:
        raise AssertionError(f"{BIG_STORY}: {len(expected) + 1} files, {total} bytes")


if __name__ == "__main__":
    target = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / ".work" / "synthetic"
    )
    count = int(sys.argv[2]) if len(sys.argv) > 2 else ARTIFACT_FILES
    print(json.dumps(make_synthetic_workspace(target, count), indent=2))
