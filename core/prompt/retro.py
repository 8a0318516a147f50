"""What the retrospective sees (seed 002, transfer E): the epic, its stories, what happened.

Three parts reach the retro's Layer-5:

- **the epic's own section** of the planning epics file(s): only that epic's heading and what
  lies under it when a file holds many epics (``## Epic 1: …`` up to the next heading of the
  same or a higher level); a file named for the epic (``epic-1.md``, ``epics/epic-1-x.md``)
  whole when no heading names it. For an OpenSpec change, its ``proposal.md``.
- **every story file of the epic** — in the injection, except where the whole would pass the
  injection's warning line: then the largest stories are summarised (their records' headings,
  their outcome and their findings) until the rest fits, the seed's own mitigation for the
  retro's context load. :attr:`RetroPlan.summarised` says which, for the preview.
- **the execution summary** from the run records: stories completed, failed, skipped and not
  run; dev attempts; runs and their total duration.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..injection.model import Injection
from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, read_file_bytes, read_text
from ..project.workspace import Workspace
from ..stories.model import Story

if TYPE_CHECKING:
    from ..records.reader import RunInfo

EPIC_SECTION_MAX_BYTES = 16 * 1024
"""An epic section longer than this is cut (with a note): it is context, not the subject."""
SUMMARY_READ_BYTES = 4 * 1024 * 1024
"""How much of a story file a summary reads."""
FINDINGS_MAX = 8
"""Findings kept per summarised story."""
FINDING_MAX_CHARS = 200
RECORD_HEADINGS = (
    "story kickoff insights",
    "dev agent record",
    "code review record",
    "party review record",
    "failure analysis record",
)
"""The sections the phases append to a story file (seed 002)."""
_FINDING = re.compile(r"\b(HIGH|MEDIUM|LOW|Recommendation|Verdict|Blocker)\b", re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^[-*+]\s+")


@dataclass(frozen=True)
class EpicSection:
    """The epic's own section of a planning file.

    Attributes:
        source: the root-relative file it came from.
        text: the section, as written (cut at :data:`EPIC_SECTION_MAX_BYTES`).
        whole_file: True when the file is the epic's own (no heading was needed).
    """

    source: str
    text: str
    whole_file: bool = False


def _epic_heading(epic_id: str) -> re.Pattern[str]:
    ident = re.escape(epic_id.lstrip("0") or "0")
    # "## Epic 1: Import", "# Epic 01 - Import"; never "Epic 10" for epic 1.
    return re.compile(rf"^(#{{1,6}})\s+Epic\s+0*{ident}(?![\w.])", re.IGNORECASE)


def _cut(text: str) -> str:
    data = text.encode("utf-8")
    if len(data) <= EPIC_SECTION_MAX_BYTES:
        return text.strip("\n")
    kept = data[:EPIC_SECTION_MAX_BYTES].decode("utf-8", errors="ignore")
    return kept.rstrip() + f"\n\n[… cut at {EPIC_SECTION_MAX_BYTES:,} of {len(data):,} bytes]"


def section_of(text: str, epic_id: str) -> str | None:
    """The section of ``text`` headed by epic ``epic_id``, or None when no heading names it."""
    lines = text.replace("\r\n", "\n").split("\n")
    pattern = _epic_heading(epic_id)
    fence = False
    for start, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fence = not fence
        match = None if fence else pattern.match(line)
        if match is None:
            continue
        level = len(match.group(1))
        end = len(lines)
        inner = False
        for index in range(start + 1, len(lines)):
            if lines[index].lstrip().startswith("```"):
                inner = not inner
            heading = None if inner else _HEADING.match(lines[index])
            if heading is not None and len(heading.group(1)) <= level:
                end = index
                break
        return "\n".join(lines[start:end]).strip("\n")
    return None


def _planning_files(workspace: Workspace) -> list[Path]:
    folder = Path(workspace.config.paths_planning)
    base = folder if folder.is_absolute() else workspace.root / folder
    if not base.is_dir() or not workspace.contains(base):
        return []
    found = [
        path
        for path in base.rglob("*.md")
        if "epic" in path.name.lower() and path.is_file() and workspace.contains(path)
    ]
    return sorted(found, key=lambda p: p.relative_to(base).as_posix().lower())


def _read(path: Path) -> str | None:
    # The guarded reader: never a FIFO or a device, never more than the read limit.
    text = read_text(path, None)
    if isinstance(text, TextProblem):
        return "" if text.reason == "empty" else None
    return text


def _head(path: Path) -> str | None:
    """The first :data:`SUMMARY_READ_BYTES` of a story file: enough for its records, and a
    huge file is never read whole just to be summarised."""
    data = read_file_bytes(path, None, limit=2**62, head=SUMMARY_READ_BYTES)
    if isinstance(data, TextProblem):
        return None
    return data[:SUMMARY_READ_BYTES].decode("utf-8", errors="replace")


def _rel(workspace: Workspace, path: Path) -> str:
    return path.resolve().relative_to(workspace.root.resolve()).as_posix()


def epic_section(workspace: Workspace, story: Story) -> EpicSection | None:
    """The epic's own section for ``story``'s epic (BMAD), or its change's proposal
    (OpenSpec); None when the planning files hold none."""
    if story.source == "openspec":
        folder = story.change_dir or f"{workspace.config.paths_openspec}/changes/{story.group}"
        proposal = workspace.root / folder / "proposal.md"
        text = _read(proposal) if proposal.is_file() and workspace.contains(proposal) else None
        if text is None or not text.strip():
            return None
        return EpicSection(_rel(workspace, proposal), _cut(text), whole_file=True)
    files = _planning_files(workspace)
    for path in files:
        text = _read(path)
        if text is None:
            continue
        section = section_of(text, story.group)
        if section is not None:
            return EpicSection(_rel(workspace, path), _cut(section))
    own = re.compile(rf"(?:^|[^a-z0-9])epic[-_ ]?0*{re.escape(story.group)}(?![0-9a-z.])")
    for path in files:
        text = _read(path)
        if text is not None and text.strip() and own.search(path.stem.lower()):
            return EpicSection(_rel(workspace, path), _cut(text), whole_file=True)
    return None


# --------------------------------------------------------------------------- execution


@dataclass(frozen=True)
class StoryOutcome:
    """What happened to one story, from its runs (and its catalog status)."""

    story_id: str
    title: str
    outcome: str
    """``completed``, ``failed``, ``skipped``, ``in progress`` or ``not run``."""
    dev_attempts: int
    detail: str


def _signal(run: RunInfo) -> str:
    signal = run.signal or {}
    name = str(signal.get("name") or "no signal")
    reason = signal.get("reason")
    return f"{name}: {reason}" if reason else name


def story_outcome(story: Story, runs: Sequence[RunInfo]) -> StoryOutcome:
    """Classify ``story`` from its own runs (oldest first) and its status."""
    mine = [r for r in runs if r.run_meta.mode != "chat"]
    dev_runs = [r for r in mine if r.phase == "dev"]
    last_dev = dev_runs[-1] if dev_runs else None
    after = [r for r in mine if last_dev is None or r.started >= last_dev.started]
    reviews = [r for r in after if r.phase == "review"]
    analyses = [r for r in mine if r.phase == "failure" and r.outcome == "success"]
    recommendation = str((analyses[-1].signal or {}).get("reason") or "") if analyses else ""
    last = next((r for r in reversed(mine) if r.phase in ("dev", "review")), None)
    if story.status == "done" or (reviews and reviews[-1].outcome == "success"):
        review = reviews[-1] if reviews else None
        detail = f"review: {_signal(review)}" if review else "status done"
        return StoryOutcome(story.id, story.title, "completed", len(dev_runs), detail)
    if last is None:
        return StoryOutcome(story.id, story.title, "not run", 0, f"status {story.status}")
    if last.outcome == "running":
        return StoryOutcome(story.id, story.title, "in progress", len(dev_runs), last.phase)
    if recommendation == "Skip" and analyses[-1].started >= last.started:
        return StoryOutcome(
            story.id, story.title, "skipped", len(dev_runs), "failure analysis recommends Skip"
        )
    if last.outcome == "success":
        return StoryOutcome(story.id, story.title, "in progress", len(dev_runs), "awaiting review")
    detail = f"{last.phase}: {_signal(last)}"
    if recommendation:
        detail += f"; analysis recommends {recommendation}"
    return StoryOutcome(story.id, story.title, "failed", len(dev_runs), detail)


@dataclass(frozen=True)
class ExecutionSummary:
    """The epic's execution, from the run records."""

    stories: tuple[StoryOutcome, ...]
    runs: int
    duration_s: float

    def count(self, outcome: str) -> int:
        """How many stories ended with ``outcome``."""
        return sum(1 for s in self.stories if s.outcome == outcome)

    def render(self) -> str:
        """The Markdown the retro reads."""
        counts = ", ".join(
            f"{name} {self.count(name)}"
            for name in ("completed", "failed", "skipped", "in progress", "not run")
        )
        minutes, seconds = divmod(round(self.duration_s), 60)
        lines = [
            f"- **Stories**: {len(self.stories)} — {counts}",
            f"- **Dev attempts**: {sum(s.dev_attempts for s in self.stories)}",
            f"- **Runs recorded**: {self.runs}, total duration {minutes} min {seconds:02d} s"
            if self.runs
            else "- **Runs recorded**: none (the outcomes come from the stories' status)",
            "",
        ]
        for story in self.stories:
            attempts = f", {story.dev_attempts} dev attempt(s)" if story.dev_attempts else ""
            lines.append(
                f"- {story.story_id} {story.title}: **{story.outcome}**{attempts} — {story.detail}"
            )
        return "\n".join(lines)


def execution_summary(stories: Sequence[Story], runs: Sequence[RunInfo]) -> ExecutionSummary:
    """The execution summary of ``stories`` from ``runs`` (any runs of the workspace)."""
    ordered = sorted(runs, key=lambda r: (r.started, r.id))
    outcomes = []
    count = 0
    duration = 0.0
    for story in stories:
        mine = [r for r in ordered if r.story.lower() == story.id.lower()]
        outcomes.append(story_outcome(story, mine))
        for run in mine:
            if run.run_meta.mode == "chat":
                continue
            count += 1
            value = (run.result or {}).get("duration_s")
            if isinstance(value, int | float):
                duration += float(value)
    return ExecutionSummary(tuple(outcomes), count, duration)


# --------------------------------------------------------------------------- summaries


def summarise_story(
    text: str, story: Story, path: str, outcome: StoryOutcome, size: int | None = None
) -> str:
    """A story file in a few lines: its records' headings, its outcome, its findings.

    ``size`` is the file's size on disk when ``text`` is only its head."""
    headings: list[str] = []
    findings: list[str] = []
    record: str | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        heading = _HEADING.match(line)
        if heading is not None:
            level, title = len(heading.group(1)), heading.group(2).strip()
            if level <= 2:
                record = title if title.lower() in RECORD_HEADINGS else None
                if level == 2:
                    headings.append(title)
            elif record is not None and level == 3:
                headings.append(f"{record} › {title}")
            continue
        stripped = line.strip()
        wanted = record is not None and stripped and len(findings) < FINDINGS_MAX
        if wanted and _FINDING.search(stripped):
            clipped = stripped[:FINDING_MAX_CHARS]
            findings.append(clipped + ("…" if len(stripped) > FINDING_MAX_CHARS else ""))
    size = len(text.encode("utf-8")) if size is None else size
    lines = [
        f"### Story {story.id}: {story.title} ({story.status})",
        "",
        f"- **File**: `{path}` ({size:,} bytes, summarised)",
        f"- **Sections**: {'; '.join(headings) if headings else '(none)'}",
        f"- **Outcome**: {outcome.outcome} — {outcome.detail}",
    ]
    if findings:
        lines.append("- **Findings**:")
        lines.extend(f"  - {_BULLET.sub('', finding)}" for finding in findings)
    else:
        lines.append("- **Findings**: none recorded")
    return "\n".join(lines)


@dataclass(frozen=True)
class RetroPlan:
    """Which story files the retro gets whole and which it gets summarised.

    Attributes:
        injection: the injection with the summarised stories' files left out.
        summarised: the ids of the summarised stories, largest first.
        summaries: their summaries, in epic order.
        full_bytes: what the injection of every story file would have been.
    """

    injection: Injection
    summarised: tuple[str, ...]
    summaries: str
    full_bytes: int


def _own_files(story: Story, epic: Sequence[Story]) -> tuple[str, ...]:
    """The story's files no other story of the epic shares."""
    others = {name for s in epic if s is not story for name in (s.path, *s.files) if name}
    return tuple(name for name in (story.path, *story.files) if name and name not in others)


def _bytes(workspace: Workspace, names: Sequence[str]) -> int:
    total = 0
    for name in names:
        path = workspace.root / name
        try:
            total += path.stat().st_size if workspace.contains(path) else 0
        except OSError:
            continue
    return total


def plan_retro(
    workspace: Workspace,
    epic: Sequence[Story],
    runs: Sequence[RunInfo],
    build: Callable[[Sequence[Story], bool], Injection],
    *,
    count_tokens: bool,
) -> RetroPlan:
    """Fit the epic's story files under the warning line, summarising the largest stories.

    Args:
        workspace: the workspace.
        epic: every story of the epic.
        runs: the workspace's runs (for each summarised story's outcome).
        build: builds the injection of the given stories' files; its flag says whether to
            count tokens (sizes are decided on bytes alone, tokens only for the final one).
        count_tokens: count the final injection's tokens.
    """
    full = build(epic, False)
    kept = list(epic)
    summarised: list[Story] = []
    injection = full
    candidates = sorted(
        (s for s in epic if _own_files(s, epic)),
        key=lambda s: (-_bytes(workspace, _own_files(s, epic)), s.id),
    )
    while injection.size_bytes > injection.warn_bytes and candidates:
        story = candidates.pop(0)
        summarised.append(story)
        kept.remove(story)
        injection = build(kept, False)
    if count_tokens:
        injection = build(kept, True)
    if not summarised:
        return RetroPlan(injection, (), "", full.size_bytes)
    ordered = sorted(runs, key=lambda r: (r.started, r.id))
    blocks = []
    for story in epic:
        if story not in summarised:
            continue
        text = _head(workspace.root / story.path) if story.path else None
        mine = [r for r in ordered if r.story.lower() == story.id.lower()]
        size = _bytes(workspace, (story.path,)) if story.path else 0
        blocks.append(
            summarise_story(text or "", story, story.path or "", story_outcome(story, mine), size)
        )
    return RetroPlan(
        injection, tuple(s.id for s in summarised), "\n\n".join(blocks), full.size_bytes
    )
