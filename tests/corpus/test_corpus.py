"""How right promptdeck reads real plans: the corpus of public projects, project by project.

Each fixture in ``tests/fixtures/corpus/`` is written out as a fresh git repository and read by
the installed ``promptdeck doctor --json`` as a new user would (no config, an empty home). Its
stories are compared with what :mod:`corpus.expected` — a separate, deliberately plain reader —
says a person reading the project sees. The table printed per project:

* ``exp`` stories expected (stories marked ambiguous are left out), ``found`` of them listed;
* ``status`` found stories whose status is the one written (as a board word, or verbatim when
  it is none), ``own`` found stories whose file is their own;
* ``other`` stories listed whose file is another story's own file or a companion (context,
  retro, report) — a story shown with somebody else's prompt;
* ``extra`` stories listed that the project does not have;
* ``unread`` entries promptdeck calls unreadable, and of them ``false`` those that do name a
  story a person reads (a sprint-status line of a story, or the only file of a missing one).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from corpus.expected import Plan, Story, expected_plan

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
PROMPTDECK = Path(sys.executable).parent / "promptdeck"
GIT = ("git", "-c", "user.name=x", "-c", "user.email=x@y", "-c", "init.defaultBranch=main")


@dataclass
class Row:
    """One project's line of the table, with the disagreements behind it."""

    project: str
    layout: str
    expected: int = 0
    found: int = 0
    status: int = 0
    own: int = 0
    other: int = 0
    extra: int = 0
    unread: int = 0
    false_unread: int = 0
    problems: list[str] = field(default_factory=list)


def norm(story_id: str) -> str:
    """Ids compared as a person reads them: ``1.2`` is ``1-2``, ``29-01`` is ``29-1``."""
    parts = story_id.strip().lower().replace(".", "-").split("-")
    return "-".join(p.lstrip("0") or "0" if p.isdigit() else p for p in parts)


def loose(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text).strip().casefold()


def same_status(found: Any, story: Story) -> bool:
    """The board word, or for a word that is none the written words (decoration aside, and
    the first words are enough: ``superseded — see 9-1`` may show as ``superseded``)."""
    if story.known:
        return bool(found == story.status)
    shown, written = loose(str(found)), loose(story.status_written)
    return bool(shown) and (shown == written or written.startswith(shown + " "))


def materialize(fixture: dict[str, Any], root: Path) -> None:
    """Write the fixture's files and commit them, as a project's checkout would be."""
    root.mkdir(parents=True)
    for entry in fixture["files"]:
        target = root / entry["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(entry["text"], encoding="utf-8")
    env = git_env(root)
    subprocess.run([*GIT, "init", "-q"], cwd=root, env=env, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, env=env, check=True)
    subprocess.run([*GIT, "commit", "-qm", "plan"], cwd=root, env=env, check=True)


def git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PROMPTDECK"))}
    env.update(
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".state"),
        XDG_DATA_HOME=str(home / ".data"),
        NO_COLOR="1",
        COLUMNS="200",
    )
    return env


def doctor(root: Path, home: Path) -> dict[str, Any]:
    home.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [str(PROMPTDECK), "doctor", "--json", "--root", str(root)],
        cwd=root,
        env=git_env(home),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0 or not done.stdout.strip().startswith("{"):
        return {"error": (done.stderr or done.stdout)[-400:]}
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def compare(name: str, plan: Plan, report: dict[str, Any]) -> Row:
    row = Row(name, plan.layout)
    if "error" in report:
        row.problems.append(f"doctor failed: {report['error']}")
        report = {"stories": [], "unreadable": []}
    wanted = {norm(s.id): s for s in plan.stories}
    counted = {k: s for k, s in wanted.items() if not s.ambiguous}
    row.expected = len(counted)
    owners: dict[str, set[str]] = {}
    for s in plan.stories:
        for path in s.own:
            owners.setdefault(path, set()).add(norm(s.id))
    names = {norm(a): norm(s.id) for s in plan.stories for a in s.aliases}
    names.update({norm(s.id): norm(s.id) for s in plan.stories})
    listed: dict[str, dict[str, Any]] = {}
    for story in report["stories"]:  # each under the id a person gives it
        listed.setdefault(names.get(norm(story["id"]), norm(story["id"])), story)
    for key, story in counted.items():
        found = listed.get(key)
        if found is None:
            row.problems.append(
                f"missing {story.id} ({story.key or 'file'}: {story.status_written!r})"
            )
            continue
        row.found += 1
        if same_status(found["status"], story):
            row.status += 1
        else:
            row.problems.append(
                f"status {story.id}: promptdeck {found['status']!r},"
                f" written {story.status_written!r} → {story.status!r}"
            )
        path = found.get("path")
        if (path in story.own) if story.own else not path or path not in owners:
            row.own += 1
        else:
            row.problems.append(f"file {story.id}: promptdeck {path!r}, own {sorted(story.own)}")
    for key, found in listed.items():
        path = found.get("path") or ""
        holders = owners.get(path, set())
        if key not in wanted:
            # A story a person does not read; when its file is an expected story's own file
            # and that story is missing, it is that story under another id (counted missing).
            row.extra += 1
            row.problems.append(f"extra {found['id']} ({path or 'no file'})")
            if holders and all(h not in listed for h in holders):
                continue
        theirs = {h for h in holders if h in counted and h != key}
        if path in plan.companions or (theirs and key not in holders):
            row.other += 1
            row.problems.append(f"another's file: {found['id']} shown with {path}")
    # An unreadable entry is false when it names a story a person reads: a sprint-status line
    # of a story (even if its file was read instead), or a story file whose story is missing
    # (a second file of a story that was read is rightly set aside).
    lines = {s.line: norm(s.id) for s in plan.stories if s.line}
    for entry in report["unreadable"]:
        row.unread += 1
        path = entry.get("path") or ""
        named = {k for k in owners.get(path, set()) if k in counted and k not in listed}
        if path == plan.plan_file and lines.get(entry.get("line")) in counted:
            named.add(lines[entry["line"]])
        if named:
            row.false_unread += 1
            row.problems.append(f"unreadable, yet names {', '.join(sorted(named))}: {entry}")
    return row


def read_project(fixture_path: Path, tmp: Path) -> Row:
    fixture = json.loads(fixture_path.read_text(encoding="utf-8"))
    name = fixture_path.stem
    root = tmp / name / "project"
    materialize(fixture, root)
    return compare(name, expected_plan(fixture), doctor(root, tmp / name / "home"))


def table(rows: list[Row]) -> str:
    head = (
        "project",
        "layout",
        "exp",
        "found",
        "status",
        "own",
        "other",
        "extra",
        "unread",
        "false",
    )
    body: list[tuple[str | int, ...]] = [
        (
            r.project,
            r.layout,
            r.expected,
            r.found,
            r.status,
            r.own,
            r.other,
            r.extra,
            r.unread,
            r.false_unread,
        )
        for r in rows
    ]
    total = [sum(int(r[i]) for r in body) for i in range(2, len(head))]
    body.append(("TOTAL", "", *total))
    widths = [max(len(str(r[i])) for r in [head, *body]) for i in range(len(head))]
    lines = [
        "  ".join(
            str(c).ljust(w) if i < 2 else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in [head, *body]
    ]
    return "\n".join(lines)


@pytest.mark.xdist_group("corpus")
def test_corpus_of_real_plans(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """promptdeck finds ≥ 99 % of the stories of real projects, each with the status written
    and never with another story's file."""
    fixtures = sorted(FIXTURES.glob("*.json"))
    assert len(fixtures) >= 32
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = list(pool.map(lambda f: read_project(f, tmp_path), fixtures))
    with capsys.disabled():
        print("\n" + table(rows))
    expected = sum(r.expected for r in rows)
    found = sum(r.found for r in rows)
    wrong_status = found - sum(r.status for r in rows)
    others = sum(r.other for r in rows)
    problems = "\n".join(f"{r.project}: {p}" for r in rows for p in r.problems[:5])
    assert found >= 0.99 * expected, f"found {found} of {expected} stories\n{problems}"
    assert wrong_status == 0, f"{wrong_status} stories show a status not written\n{problems}"
    assert others == 0, f"{others} stories are shown with another story's file\n{problems}"


if (
    __name__ == "__main__"
):  # every disagreement: PYTHONPATH=tests python tests/corpus/test_corpus.py [name…]
    import tempfile

    wanted_names = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        chosen = [
            f
            for f in sorted(FIXTURES.glob("*.json"))
            if not wanted_names or any(n in f.stem for n in wanted_names)
        ]
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda f: read_project(f, Path(tmp)), chosen))
        print(table(results))
        for r in results:
            for problem in r.problems:
                print(f"{r.project}: {problem}")
