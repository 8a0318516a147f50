"""Build one corpus fixture from a public project's git directory: the SHAPE of its plan.

Usage::

    python tests/corpus/make_fixture.py GIT_DIR OWNER/NAME LAYOUT [--licence L] [--out FILE]

It reads the tree at ``HEAD`` with ``git ls-tree`` / ``git show`` (nothing is checked out,
built or run) and writes ``tests/fixtures/corpus/<owner>--<name>.json``. What is kept:

* data files whole: ``sprint-status.yaml``, ``tickets.toml``, the BMAD config files;
* of every Markdown plan file only its shape: front matter keys (long values become filler),
  every heading as written, ``Status:`` lines, the first line of a ``## Status`` section, task
  checkboxes with their marks and indentation (their text becomes filler); every other line
  becomes generated filler, so no prose of the project is kept; a project whose fixture would
  pass ~260 KB gets shorter filler, then keeps the first 24 checkboxes per file, then only
  headings of levels 1-2 (and any heading naming a status) and 12 checkboxes (``trim_level``
  says how far it went; ``dropped`` counts non-story files left out after that);
* of XML and other YAML plan files the tags / keys, with long values turned to filler;
* up to 50 other files of the project as path-only placeholders, so a reader has to find the
  plan among them.

The filler is made here from a fixed word list and a hash of the file path and line number, so
the same input always gives the same fixture. This script never imports promptdeck.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOREM = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt "
    "ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco "
    "laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate "
    "velit esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident "
    "sunt culpa qui officia deserunt mollit anim id est laborum"
)
WORDS = tuple(LOREM.split())

TEXT_SUFFIXES = (".md", ".yaml", ".yml", ".xml", ".toml", ".txt")
PROJECT_CAP = 260_000
PLACEHOLDERS = 50

# Folders that hold BMAD's or OpenSpec's own installed workflows and templates, editor
# agent copies, or test data of the project: none of them is the project's plan.
NOT_PLAN = re.compile(
    r"(^|/)(\.(agents?|claude|cursor|gemini|github|windsurf|kiro|opencode|codex|roo|clinerules|"
    r"augment|qwen|crush|trae|iflow|kilocode|rovodev|cline|pi|bmad-core|bmad|_bmad)|bmad|_bmad|"
    r"node_modules|skills|workflows|templates?|test|tests|fixtures|__tests__|vendor|dist|build)/"
)
CONFIGS = re.compile(
    r"^(\.bmad-core/core-config\.yaml|bmad/(bmm|core)/config\.yaml|_bmad/(bmm|core)/config\.yaml|"
    r"_bmad/config(\.user)?\.toml|_bmad/custom/config(\.user)?\.toml|openspec/config\.yaml|"
    r"openspec/project\.md)$"
)
CHECKBOX = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+\[[ xX~-]\]\s*)(\S*)(.*)$")
STATUS_LINE = re.compile(r"^\W*status\W*:", re.IGNORECASE)
KEY_LINE = re.compile(r"^\W*(story[ _-]?(key|id)|epic[ _-]?(id|key)?|ticket)\W*:", re.IGNORECASE)
HEADING = re.compile(r"^#{1,6}\s")
TASK_NUMBER = re.compile(r"^\d+(\.\d+)*\.?$")


def git(git_dir: str, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], capture_output=True, check=True, timeout=120
    ).stdout


def filler(seed: str, length: int) -> str:
    """Deterministic lorem-style words, about ``length`` characters long (at least one word)."""
    digest = hashlib.sha256(seed.encode()).digest()
    words: list[str] = []
    total = 0
    i = 0
    while total < max(length, 1):
        word = WORDS[(digest[i % len(digest)] + i * 7) % len(WORDS)]
        words.append(word)
        total += len(word) + 1
        i += 1
    return " ".join(words)


def shape_front_matter(lines: list[str], seed: str) -> list[str]:
    """Keys and short values kept; long values, block scalars (``|``, ``>-``) and plain
    continuation lines turned to filler at the same indentation, so the YAML stays valid."""
    out: list[str] = []
    block = -1  # indentation a block scalar's lines go beyond, while one is being replaced
    filled = False  # one filler line stands for the whole block
    for n, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if block >= 0 and (not line.strip() or indent > block):
            if line.strip() and not filled:
                out.append(" " * indent + filler(f"{seed}:{n}", 30))
                filled = True
            continue
        block = -1
        m = re.match(r"^(\s*(?:-\s+)?[\w.-]+\s*:)(\s*)(.*)$", line)
        item = re.match(r"^(\s*-\s+)(.*)$", line)
        if m:
            value = m.group(3)
            if value.startswith(("|", ">")):
                out.append(line)
                block = indent + 2 if m.group(1).lstrip().startswith("-") else indent
                filled = False
                continue
            if value.startswith(("[", "{")) and (len(value) > 80 or value[-1:] not in "]}"):
                out.append(f"{m.group(1)} {'[]' if value[0] == '[' else '{}'}")  # a long flow list
                block = indent + 2 if m.group(1).lstrip().startswith("-") else indent
                filled = True
                continue
            quote = value[:1] if value[:1] in "\"'" else ""
            long = f"{m.group(1)} {quote}{filler(f'{seed}:{n}', 30)}{quote}"
            out.append(line if len(value) <= 80 else long)
        elif item:
            value = item.group(2)
            out.append(line if len(value) <= 120 else f"{item.group(1)}{filler(f'{seed}:{n}', 30)}")
        elif line.strip():
            out.append(" " * indent + filler(f"{seed}:{n}", 30) if indent else "")
        else:
            out.append(line)
    return out


def shape_markdown(
    text: str,
    seed: str,
    prose_lines: int = 2,
    width: int = 90,
    boxes: int = 10_000,
    depth: int = 6,
) -> str:
    """The shape of a Markdown plan file: structure and status kept, prose turned to filler."""
    lines = text.splitlines()
    out: list[str] = []
    start = 0
    if lines and lines[0].strip() == "---":
        for end in range(1, len(lines)):
            if lines[end].strip() in ("---", "..."):
                out.append(lines[0])
                out.extend(shape_front_matter(lines[1:end], seed))
                out.append(lines[end])
                start = end + 1
                break
    in_fence = False
    in_status = False
    run = 0  # prose lines kept in the current paragraph
    for n in range(start, len(lines)):
        line = lines[n]
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            out.append(stripped[:3])
            run = 0
            continue
        if in_fence:
            if run < 1:
                out.append(filler(f"{seed}:{n}", 30))
            run += 1
            continue
        if not stripped:
            out.append("")
            run = 0
            continue
        if HEADING.match(line):
            level = len(line) - len(line.lstrip("#"))
            if level <= depth or re.search(r"status", line, re.IGNORECASE):
                out.append(line.rstrip())
            in_status = re.match(r"^#{1,6}\s*\W*status\W*$", stripped, re.IGNORECASE) is not None
            run = 0
            continue
        if in_status:
            out.append(line.rstrip())  # the first line of a `## Status` section is the status
            in_status = False
            continue
        if STATUS_LINE.match(line) or (KEY_LINE.match(line) and len(stripped) <= 80):
            out.append(line.rstrip())
            continue
        box = CHECKBOX.match(line)
        if box and boxes <= 0:
            continue
        if box:
            boxes -= 1
            head, first, rest = box.groups()
            number = first if TASK_NUMBER.match(first) else ""
            size = min(len(first) + len(rest), width)
            body = filler(f"{seed}:{n}", max(size - len(number), 8))
            out.append(f"{head}{number + ' ' if number else ''}{body}")
            continue
        if run < prose_lines:
            indent = line[: len(line) - len(line.lstrip())]
            marker = re.match(r"^([-*+>|]|\d+\.)\s", stripped)
            lead = marker.group(0) if marker else ""
            out.append(f"{indent}{lead}{filler(f'{seed}:{n}', min(len(stripped), width))}")
        run += 1
    return "\n".join(out) + "\n"


def shape_xml(text: str, seed: str, lines: int = 400) -> str:
    out: list[str] = []
    for n, line in enumerate(text.splitlines()):

        def value(m: re.Match[str], n: int = n) -> str:
            inner = m.group(2)
            if len(inner) <= 40:
                return m.group(0)
            return f"{m.group(1)}{filler(f'{seed}:{n}', 30)}{m.group(3)}"

        shaped = re.sub(r"(<[^>/!?][^>]*>)([^<]+)(</[^>]+>)", value, line)
        if "<" not in shaped and shaped.strip():
            if lines < 400:
                continue
            shaped = filler(f"{seed}:{n}", min(len(shaped.strip()), 60))
        out.append(shaped.rstrip())
    return "\n".join(out[:lines]) + "\n"


def shape_yaml(text: str, seed: str) -> str:
    out: list[str] = []
    for n, line in enumerate(text.splitlines()):
        m = re.match(r"^(\s*(?:-\s+)?[^\s:#][^:#]*:)(\s*)(.*)$", line)
        if line.lstrip().startswith("#") or not line.strip() or (m and len(m.group(3)) <= 80):
            out.append(line.rstrip())
        elif m:
            out.append(f"{m.group(1)} {filler(f'{seed}:{n}', 30)}")
        else:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}{filler(f'{seed}:{n}', 30)}")
    return "\n".join(out) + "\n"


def is_whole(path: str) -> bool:
    """Data files kept exactly as written."""
    name = path.rsplit("/", 1)[-1]
    return name in ("sprint-status.yaml", "tickets.toml") or (
        bool(CONFIGS.match(path)) and not path.endswith(".md")
    )


def shape(path: str, text: str, level: int) -> str:
    if is_whole(path):
        return text
    seed = path
    if path.endswith(".md"):
        return shape_markdown(
            text,
            seed,
            prose_lines=(1, 1, 0, 0, 0)[level],
            width=(50, 24, 12, 8, 8)[level],
            boxes=(10_000, 10_000, 10_000, 24, 12)[level],
            depth=(6, 6, 6, 6, 2)[level],
        )
    if path.endswith(".xml"):
        return shape_xml(text, seed, lines=(400, 60, 30, 20, 12)[level])
    if path.endswith((".yaml", ".yml")):
        return shape_yaml(text, seed)
    return filler(seed, 40) + "\n"


def plan_roots(paths: list[str], read: Callable[[str], str]) -> list[str]:
    """Folders that hold the plan, found the way a person would look for it."""
    roots: set[str] = set()
    for p in paths:
        if NOT_PLAN.search(p):
            continue
        name = p.rsplit("/", 1)[-1]
        folder = p.rsplit("/", 1)[0] if "/" in p else ""
        if name == "sprint-status.yaml":
            roots.add(folder)
            loc = re.search(r"^story_location:\s*[\"']?([^\"'\n#]+)", read(p), re.MULTILINE)
            if loc:
                value = loc.group(1).strip()
                value = re.sub(r"^\{project-root\}/?", "", value)
                value = re.sub(r"^\{output_folder\}", "_bmad-output", value)
                value = value.replace(
                    "{implementation_artifacts}", "_bmad-output/implementation-artifacts"
                )
                if value and "{" not in value and not value.startswith("/"):
                    roots.add(value.strip("/"))
        if p == ".bmad-core/core-config.yaml":
            text = read(p)
            for key in ("devStoryLocation", "prdShardedLocation", "qaLocation"):
                m = re.search(rf"^\s*{key}:\s*[\"']?([^\"'\n#]+)", text, re.MULTILINE)
                if m:
                    roots.add(m.group(1).strip().strip("/"))
        if name == "tickets.toml" or re.match(r"^openspec/changes/", p):
            roots.add(folder if name == "tickets.toml" else "openspec/changes")
    for p in paths:  # the usual homes of stories and epics, when present
        for home in (
            "docs/stories",
            "docs/sprint-artifacts",
            "_bmad-output/implementation-artifacts",
        ):
            if p.startswith(home + "/") and not NOT_PLAN.search(p):
                roots.add(home)
    return sorted(r for r in roots if r)


def is_plan_file(path: str, roots: list[str]) -> bool:
    if CONFIGS.match(path):
        return True
    if not path.endswith(TEXT_SUFFIXES) or NOT_PLAN.search(path):
        return False
    name = path.rsplit("/", 1)[-1]
    if name in ("sprint-status.yaml", "tickets.toml"):
        return True
    if re.match(r"^(docs|_bmad-output/planning-artifacts)/(epics?|prd)([/-].*)?\.md$", path):
        return re.search(r"epic", path) is not None
    if re.match(r"^docs/tech-spec-epic-\d+.*\.md$", path):
        return True
    return any(path == r or path.startswith(r + "/") for r in roots)


def front_matter_broken(original: str, shaped: str) -> str:
    """Why the shaped front matter fails to read where the original read, else ""."""
    try:
        import yaml
    except ImportError:  # the check is a help, not a need
        return ""

    def block(text: str) -> str | None:
        parts = text.split("\n---", 1)
        return parts[0][4:] if text.startswith("---\n") and len(parts) == 2 else None

    before, after = block(original), block(shaped)
    if before is None or after is None:
        return ""
    try:
        yaml.safe_load(before)
    except yaml.YAMLError:
        return ""
    try:
        yaml.safe_load(after)
    except yaml.YAMLError as exc:
        return str(exc).splitlines()[0]
    return ""


def weight(fixture: dict[str, Any]) -> int:
    """The fixture's size as written to disk, near enough."""
    return len(json.dumps(fixture, indent=1, ensure_ascii=False).encode())


def build(git_dir: str, source: str, layout: str, licence: str) -> dict[str, Any]:
    commit = git(git_dir, "rev-parse", "HEAD").decode().strip()
    listing = git(git_dir, "ls-tree", "-r", "-l", "HEAD").decode("utf-8", "replace")
    sizes: dict[str, int] = {}
    for row in listing.splitlines():
        meta, _, path = row.partition("\t")
        parts = meta.split()
        if len(parts) == 4 and parts[1] == "blob":
            sizes[path] = int(parts[3]) if parts[3].isdigit() else 0
    paths = sorted(sizes)

    def read(path: str) -> str:
        return git(git_dir, "show", f"HEAD:{path}").decode("utf-8", "replace")

    roots = plan_roots(paths, read)
    plan = [p for p in paths if is_plan_file(p, roots) and sizes[p] < 4_000_000]
    raw = {p: read(p) for p in plan}
    for p in plan:
        broken = front_matter_broken(raw[p], shape(p, raw[p], 0)) if p.endswith(".md") else ""
        if broken:
            print(f"{p}: the shaped front matter no longer reads: {broken}", file=sys.stderr)
    fixture: dict[str, Any] = {
        "source": source,
        "commit": commit,
        "licence": licence,
        "layout": layout,
        "files": [],
    }
    for level in range(5):
        files = [{"path": p, "size": sizes[p], "text": shape(p, raw[p], level)} for p in plan]
        fixture["files"] = files
        fixture["trim_level"] = level
        if weight(fixture) <= PROJECT_CAP:
            break
    if weight(fixture) > PROJECT_CAP:
        # Still too big: leave out plan files that are no story (reports, evidence, archives),
        # biggest first, and say how many.
        story_like = re.compile(
            r"\d+[-.]\d+|^[A-Za-z]{1,8}-\d|spec-|stor|sprint-status|tickets|config|tasks\.md|epic"
        )
        optional = sorted(
            (f for f in fixture["files"] if not story_like.search(f["path"].rsplit("/", 1)[-1])),
            key=lambda f: -len(f["text"]),
        )
        dropped = 0
        for f in optional:
            if weight(fixture) <= PROJECT_CAP:
                break
            fixture["files"].remove(f)
            dropped += 1
        fixture["dropped"] = dropped
    # Empty copies of plan-named files (a test fixture's sprint-status.yaml) would be plans of
    # their own: the distractors are the project's source files only.
    others = [
        p
        for p in paths
        if p not in raw
        and re.match(r"^(src|app|lib|tests?|packages|apps)/", p)
        and p.rsplit("/", 1)[-1] not in ("sprint-status.yaml", "tickets.toml", "tasks.md")
    ]
    step = max(1, len(others) // PLACEHOLDERS)
    for p in others[::step][:PLACEHOLDERS]:
        fixture["files"].append({"path": p, "size": sizes[p], "text": "", "placeholder": True})
    return fixture


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir")
    parser.add_argument("source", help="owner/name on GitHub")
    parser.add_argument("layout", choices=("v4", "v5", "v6", "v63", "v7", "openspec"))
    parser.add_argument("--licence", default="none stated")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    fixture = build(args.git_dir, args.source, args.layout, args.licence)
    out = args.out or (
        Path(__file__).resolve().parents[1]
        / "fixtures"
        / "corpus"
        / (args.source.replace("/", "--") + ".json")
    )
    if out.exists():  # keep what a person wrote down about this project
        old = json.loads(out.read_text())
        for key in ("checked_by_hand", "ambiguous"):
            if key in old:
                fixture[key] = old[key]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
    plan = sum(1 for f in fixture["files"] if not f.get("placeholder"))
    print(f"{out.name}: {plan} plan files, {out.stat().st_size} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
