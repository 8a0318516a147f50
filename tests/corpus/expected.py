"""What a person reading a project's plan would say its stories are: the corpus yardstick.

Deliberately small and separate from promptdeck (it imports nothing of it): from a corpus
fixture it lists each story with its id, its status as written and as a board word, the files
that may be its own, and the files that are companions (context, retros, reports) and so never
a story. Where a person could not say for sure, the story is marked ``ambiguous`` with the
reason, and the corpus test leaves it out of the counts.

The rules, by layout:

* a ``sprint-status.yaml`` (BMAD v5/v6/v6.3): each ``development_status`` entry that is no epic
  and no retrospective is a story, its status the entry's value; story files with no entry are
  stories too, with the status their file states;
* BMAD v4: the files ``<epic>.<story>.*.md`` in ``devStoryLocation`` are the plan, each with the
  first line of its ``## Status`` section (else its ``Status:`` line);
* v6.3 build specs ``spec-<epic>-<story>-<slug>.md`` belong to that story; with no entry they are
  the story, with their front matter ``status``;
* OpenSpec: each ``## N.`` group of an active change's ``tasks.md`` is a story ``<change>:<N>``,
  its status from its checkboxes (none checked: ready-for-dev; all: done; else in-progress); a
  change with only ``.openspec.yaml`` is one story in backlog.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

BOARD = ("backlog", "ready-for-dev", "in-progress", "review", "done")
# What a person reads each written word as (the word lower-cased, runs of non-letters as "-").
WORDS = {
    **{word: word for word in BOARD},
    "draft": "backlog",
    "approved": "ready-for-dev",
    "inprogress": "in-progress",
    "in-progress": "in-progress",
    "ready-for-review": "review",
    "in-review": "review",
    "built": "review",
    "complete": "done",
    "completed": "done",
    "drafted": "ready-for-dev",
    "contexted": "in-progress",
    "ready-for-development": "ready-for-dev",
    "todo": "backlog",
    "ready": "ready-for-dev",
}
# Words that name a state inside longer text, to see a status that names two.
STATES = re.compile(
    r"\b(draft|backlog|approved|ready for (dev|development|review)|in ?progress|review|"
    r"done|complete[d]?)\b",
    re.IGNORECASE,
)

# Files beside the stories that are never a story: per-story contexts, retrospectives, run
# results, validation and review reports, change proposals. A story's own slug may hold the
# same words (``2-5-validation-error-handling``, ``7-9-retrospective-stage-detection``), so
# only their place in the name counts.
COMPANION = re.compile(
    r"(-context\.md|\.context\.xml)$|-result-\d|^result-|validation-report|review-report|change-proposal"
    r"|^(epic-[\w.]+-)?retro(spective)?\b|^epic-[\w.]+-retro|^(validation|review|code-review|context)[-_]|readiness-report",
    re.IGNORECASE,
)
DIGITS = re.compile(r"\d+[a-z]{0,2}|\d+\.\d+")
STORY_HEADING = re.compile(r"^#\s*Story\b", re.IGNORECASE)


@dataclass
class Story:
    """One story as a person reads it."""

    id: str
    status_written: str
    status: str  # a board word, or the written word when it is none
    known: bool
    own: set[str] = field(default_factory=set)  # the paths that may be its own file
    aliases: set[str] = field(default_factory=set)  # other ids a person would accept
    key: str = ""
    line: int = 0  # its sprint-status line, when it has one
    ambiguous: str = ""


@dataclass
class Plan:
    """A project's expected plan."""

    layout: str
    stories: list[Story]
    companions: set[str]
    plan_file: str = ""  # the sprint-status.yaml read, if any

    def by_id(self) -> dict[str, Story]:
        return {s.id: s for s in self.stories}


def canonical(written: str) -> tuple[str, bool]:
    """The board word a person reads ``written`` as, and whether it is one."""
    cleaned = re.sub(r"[^A-Za-z]+", "-", written).strip("-").lower()
    if cleaned in WORDS:
        return WORDS[cleaned], True
    # A decorated word (``**✅ COMPLETE** (2026-01-16)``, ``Done - QA passed``): the words
    # before the first mark that is no letter, space or hyphen; ``done-parcial`` stays as written.
    lead = re.match(r"^[^A-Za-z]*([A-Za-z][A-Za-z -]*?)\s*(?:[^A-Za-z \-]|\s-\s|$)", written)
    if lead:
        word = re.sub(r"[ ]+", "-", lead.group(1).strip()).lower()
        if word in WORDS:
            return WORDS[word], True
    return written.strip().strip("\"'"), False


def story_id(key: str, sub: bool = True) -> str:
    """The id part of an entry key or file stem: ``1-2-login`` → ``1-2``, ``15-TD-1-x`` →
    ``15-TD-1``, ``gov-1-1-x`` → ``gov-1-1``; empty when the key holds no story number.

    With ``sub``, a letter-and-number part after the number is part of the id (``6-2-p1-x`` →
    ``6-2-p1``); callers keep it only where it tells two entries apart (in ``7-8-g24-x`` alone
    it is a label of the slug)."""
    parts = re.sub(r"^story[-_.]?(?=\d)", "", key, flags=re.IGNORECASE).split("-")
    pieces = parts[0].split(".")
    story_after = len(parts) > 1 and DIGITS.fullmatch(parts[1])
    if len(pieces) > 1 and all(re.fullmatch(r"\d+[a-z]?", p) for p in pieces) and not story_after:
        parts[:1] = pieces  # ``6.1-category-…`` is story 6.1; ``5.5-1-…`` story 1 of 5.5
    taken: list[str] = []
    for i, part in enumerate(parts):
        following = parts[i + 1] if i + 1 < len(parts) else ""
        if DIGITS.fullmatch(part) or (sub and taken and re.fullmatch(r"[A-Za-z]{1,2}\d+", part)):
            taken.append(part)  # 1, 2a, 5.5, and p1 / R1 / v4 sub-numbers after a number
        elif (
            (len(taken) >= 2 and re.fullmatch(r"[a-z]", part) and following)  # 10-5-a-dns
            or (re.fullmatch(r"[A-Z]{1,4}", part) and DIGITS.fullmatch(following))  # 15-TD-1
            or (i == 0 and re.fullmatch(r"[a-z]{2,12}", part) and DIGITS.fullmatch(following))
            or (
                len(taken) == 1
                and re.fullmatch(r"[a-z]{3,12}", part)
                and DIGITS.fullmatch(following)
            )
        ):
            taken.append(part)  # lettered sub-stories, track words (TD, HF, gov, 14c-refactor-6)
        else:
            break
    if len(taken) < 2 or not any(DIGITS.fullmatch(p) for p in taken):
        return ""
    return "-".join(p.lstrip("0") or "0" if p.isdigit() else p for p in taken)


def first_heading(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("#"):
            return line.strip()
    return ""


def front_matter(text: str) -> dict[str, str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    found: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() in ("---", "..."):
            break
        m = re.match(r"^([\w-]+):\s*(.*)$", line)
        if m:
            found[m.group(1)] = m.group(2).strip().strip("\"'")
    return found


def file_status(text: str, section_first: bool = False) -> str:
    """The status a story file states: its first ``Status:`` line or ``## Status`` section
    (v4 stories, ``section_first``: the section wherever it is), else its front matter."""
    lines = text.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":  # past the front matter
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
    for i in range(start, len(lines)):
        line = lines[i]
        if section_first and not re.match(r"^#{2,6}\s*\W*status\W*$", line.strip(), re.I):
            continue
        if re.match(r"^#{2,6}\s*\W*status\W*$", line.strip(), re.IGNORECASE):
            for following in lines[i + 1 :]:
                if following.strip():
                    return "" if following.startswith("#") else following.strip()
        m = re.match(r"^\W*status\W*:\W*(.+)$", line, re.IGNORECASE)
        if m:
            return m.group(1).strip()
    if section_first:
        return file_status(text)
    return front_matter(text).get("status", "")


def sprint_entries(text: str) -> list[tuple[str, str, int]]:
    """``(key, value, line)`` of a ``development_status`` map, or of a list of stories written
    as ``- id: story-1.2`` items with a ``status:`` (a shape some projects use)."""
    entries: list[tuple[str, str, int]] = []
    inside = False
    for n, line in enumerate(text.splitlines(), start=1):
        if re.match(r"^development_status:\s*(#.*)?$", line):
            inside = True
            continue
        if inside and line.strip() and not line.startswith((" ", "\t", "#")):
            inside = False
        m = re.match(r"^\s+([\"']?)([^\s:#\"'][^:#\"']*)\1\s*:\s*([^#]*?)\s*(#.*)?$", line)
        if inside and m:
            entries.append((m.group(2).strip(), m.group(3).strip().strip("\"'"), n))
    if entries:
        return entries
    current: tuple[str, int] | None = None
    for n, line in enumerate(text.splitlines(), start=1):
        item = re.match(r"^\s*-\s+id:\s*[\"']?(story-[\w.-]+)", line)
        status = re.match(r"^\s+status:\s*[\"']?([\w-]+)", line)
        if item:
            current = (item.group(1), n)
        elif status and current:
            entries.append((current[0], status.group(1), current[1]))
            current = None
    return entries


def is_companion(path: str, files: dict[str, str]) -> bool:
    """A file beside the stories that is none. A ``…-context.md`` is one only beside the story
    it serves (``1-2-x-context.md`` next to ``1-2-x.md``) or when it is headed as no story:
    ``story-7.1-analytics-navigation-context.md``, headed ``# Story 7.1: …``, is a story."""
    if COMPANION.search(path.rsplit("/", 1)[-1]) is None:
        return False
    if path.endswith("-context.md") and not re.search(r"-result-\d|^result-", path):
        sibling = path[: -len("-context.md")] + ".md"
        heading = first_heading(files.get(path, ""))
        return sibling in files or not re.match(r"^#\s*Story\s+[\w.-]+\s*:", heading, re.I)
    return True


def _status(story_id: str, written: str, **extra: Any) -> Story:
    status, known = canonical(written) if written else ("", False)
    story = Story(story_id, written, status, known, **extra)
    named = {canonical(m.group(0))[0] for m in STATES.finditer(written)}
    if not written:
        story.ambiguous = story.ambiguous or "no status written"
    elif len(named) > 1:
        story.ambiguous = story.ambiguous or f"the status names two states: {written!r}"
    return story


def _under(path: str, folders: list[str]) -> bool:
    return any(path.startswith(f + "/") for f in folders if f) or any(not f for f in folders)


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return re.sub(r"(\.story)?\.md$", "", name)


def _matches(stem: str, key: str, sid: str) -> int:
    """2 when a file stem names the entry exactly, 1 when it names its id, else 0."""
    if stem == key or stem.startswith(key + "-") or stem.startswith(key + "."):
        return 2
    return 1 if sid in (story_id(stem), story_id(stem, sub=False)) else 0


def read_bmad(files: dict[str, str], layout: str) -> Plan:
    """BMAD v5/v6/v6.3: the sprint status's entries, then story files and specs with none."""
    statuses = sorted(p for p in files if p.rsplit("/", 1)[-1] == "sprint-status.yaml")
    plan_file = statuses[0] if statuses else ""
    folder = plan_file.rsplit("/", 1)[0] if "/" in plan_file else ""
    roots = [folder]
    loc = re.search(r"^story_location:\s*[\"']?([^\"'\n#]+)", files.get(plan_file, ""), re.M)
    if loc:
        value = re.sub(r"^\{project-root\}/?", "", loc.group(1).strip()).strip("/")
        if value and "{" not in value:
            roots.append(value)
    md = [p for p in files if p.endswith(".md") and _under(p, roots)]
    companions = {p for p in files if is_companion(p, files) and _under(p, roots)}
    specs = [p for p in md if re.match(r"spec-\d", _stem(p)) and p not in companions]
    # Quick specs with no story number (``spec-gh-123-fix-ci.md``) are no story's file.
    candidates = [p for p in md if p not in companions and not _stem(p).startswith("spec-")]
    stories: list[Story] = []
    claimed: set[str] = set()
    entries = [
        (key, value, line)
        for key, value, line in sprint_entries(files.get(plan_file, ""))
        if not re.match(r"^epic-", key) and not re.search(r"retrospective$|^epic-.*-retro", key)
    ]
    plain = [story_id(_entry_key(key), sub=False) for key, _, _ in entries]
    for (key, value, line), base in zip(entries, plain, strict=True):
        sid = story_id(_entry_key(key)) if plain.count(base) > 1 else base
        if not sid or sid.startswith("context-"):
            stories.append(
                _status(key, value, key=key, line=line, ambiguous="entry is no story key")
            )
            continue
        own = _own_files(files, candidates, specs, key, sid)
        claimed |= own
        story = _status(sid, value, key=key, line=line, own=own)
        if len([p for p in own if not _stem(p).startswith("spec-")]) > 1:
            story.ambiguous = "two story files claim it: " + ", ".join(sorted(own))
        stories.append(story)
    ids = {s.id for s in stories}
    for story, base in zip([s for s in stories if s.line], plain, strict=True):
        # Where a person could name the story two ways, either name is right: the entry's
        # shorter id (``TD-18-12`` of ``TD-18-12-18-13b-…``) or, where two entries share a
        # number, the number with the next word (``HF-18-recent`` of ``HF-18-recent-scans``).
        parts = story.id.split("-")
        for end in range(2, len(parts)):
            if "-".join(parts[:end]) not in ids:
                story.aliases.add("-".join(parts[:end]))
        if plain.count(base) > 1 and story.id == base:
            rest = story.key[len(base) + 1 :].split("-", 1)[0]
            if rest:
                story.aliases.add(f"{base}-{rest}")
    for dup in {s.id for s in stories if [t.id for t in stories].count(s.id) > 1}:
        for s in stories:
            if s.id == dup:
                s.ambiguous = s.ambiguous or "two entries share the id"
    # Story files and keyed specs with no entry are stories of the plan too.
    for path in sorted(candidates) + sorted(specs):
        if path in claimed:
            continue
        stem = _stem(path)
        spec = stem.startswith("spec-")
        sid = story_id(stem[5:] if spec else stem)
        text = files[path]
        if not sid or sid in ids:
            continue
        if spec:
            written = front_matter(text).get("status", "")
        elif STORY_HEADING.match(first_heading(text)):
            written = file_status(text)
        else:
            continue
        story = _status(sid, written, key=stem, own={path})
        parts = sid.split("-")
        story.aliases = {"-".join(parts[:end]) for end in range(2, len(parts))} - ids
        stories.append(story)
        ids.add(sid)
    return Plan(layout, stories, companions, plan_file)


def _entry_key(key: str) -> str:
    """``story-1.2`` (a story list's id) as the key ``1-2``."""
    return key[6:].replace(".", "-") if key.startswith("story-") else key


def _own_files(
    files: dict[str, str], candidates: list[str], specs: list[str], key: str, sid: str
) -> set[str]:
    strong = [p for p in candidates if _matches(_stem(p), key, sid) == 2]
    weak = [
        p
        for p in candidates
        if _matches(_stem(p), key, sid) == 1 and STORY_HEADING.match(first_heading(files[p]))
    ]
    keyed = [p for p in specs if _matches(_stem(p)[5:], key, sid)]
    return set(strong or weak) | set(keyed)


def read_v4(files: dict[str, str]) -> Plan:
    config = files.get(".bmad-core/core-config.yaml", "")
    m = re.search(r"^\s*devStoryLocation:\s*[\"']?([^\"'\n#]+)", config, re.M)
    location = m.group(1).strip().strip("/") if m else "docs/stories"
    companions = {p for p in files if is_companion(p, files) and p.startswith(location + "/")}
    found: dict[str, list[str]] = {}
    for path in sorted(files):
        if not path.startswith(location + "/") or not path.endswith(".md") or path in companions:
            continue
        name = path.rsplit("/", 1)[-1]
        m = re.match(r"^(story[-_.]?)?(\d+)\.(\d+[a-z]?)(\.\d+)?(?:[.\-_ ]|$)", name, re.I)
        heading = first_heading(files[path])
        if m and m.group(1) and not STORY_HEADING.match(heading):
            continue  # ``story-1.1-….md`` with no story heading: a note about a story
        if m:
            sub = f"-{m.group(4)[1:]}" if m.group(4) else ""
            found.setdefault(f"{m.group(2)}-{m.group(3).lower()}{sub}", []).append(path)
    stories = []
    for sid, paths in found.items():
        story = _status(sid, file_status(files[paths[0]], section_first=True), own=set(paths))
        if len(paths) > 1:
            story.ambiguous = "two story files claim it: " + ", ".join(paths)
        named = re.match(r"^#\s*Story\s+([\d.]+[a-z]?)", first_heading(files[paths[0]]), re.I)
        if named and named.group(1).strip(".").replace(".", "-").lower() != sid:
            story.ambiguous = story.ambiguous or (
                f"its name says {sid}, its heading {first_heading(files[paths[0]])!r}"
            )
        stories.append(story)
    return Plan("v4", stories, companions)


def read_openspec(files: dict[str, str]) -> Plan:
    changes: dict[str, set[str]] = {}
    for path in files:
        m = re.match(r"^openspec/changes/([^/]+)/(.+)$", path)
        if m and m.group(1) != "archive":
            changes.setdefault(m.group(1), set()).add(m.group(2))
    stories: list[Story] = []
    for change, names in sorted(changes.items()):
        base = f"openspec/changes/{change}"
        if "tasks.md" not in names:
            if ".openspec.yaml" in names:
                stories.append(Story(change, "", "backlog", True))
            continue
        group = ""
        counts: dict[str, list[int]] = {}
        for line in files[f"{base}/tasks.md"].splitlines():
            heading = re.match(
                r"^##\s+(?:(?:Phase|Group|Stage|Part|Step)\s+)?(\d+)[.):]?\s+\S", line, re.I
            )
            if heading:
                group = str(int(heading.group(1)))
                counts.setdefault(group, [0, 0])
                continue
            if line.startswith("#"):
                group = "" if line.startswith("## ") else group
                continue
            box = re.match(r"^\s*[-*+]\s+\[([ xX])\]", line)
            if box and group:
                counts[group][1] += 1
                counts[group][0] += box.group(1) != " "
        if not counts:
            why = "tasks.md has no '## N.' groups: a change, but no story in OpenSpec's sense"
            stories.append(Story(change, "", "", False, ambiguous=why))
        for number, (done, total) in counts.items():
            status = "ready-for-dev" if done == 0 else "done" if done == total else "in-progress"
            stories.append(
                Story(f"{change}:{number}", f"{done}/{total}", status, True, {f"{base}/tasks.md"})
            )
    return Plan("openspec", stories, set())


def expected_plan(fixture: dict[str, Any]) -> Plan:
    """The plan a person reads in one corpus fixture."""
    files = {f["path"]: f["text"] for f in fixture["files"] if not f.get("placeholder")}
    layout = fixture["layout"]
    if layout == "v4":
        plan = read_v4(files)
    elif layout == "openspec":
        plan = read_openspec(files)
    else:
        plan = read_bmad(files, layout)
    for note in fixture.get("ambiguous", []):  # stories a person marked by hand
        for story in plan.stories:
            if story.id == note["id"]:
                story.ambiguous = note["why"]
    return plan
