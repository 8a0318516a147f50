"""What an OpenSpec folder can hold to slow every plan load: a schema's ``generates`` glob
built to backtrack, a schema of endless artifacts, specs of a hundred thousand requirement
headings each. Each is read in time linear in its size (the commands are run in a
subprocess that must finish within its generous wall-clock bound), or is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _run_helpers import cli
from builders import write_files
from promptdeck.core.plans.openspec import (
    MAX_GLOB_CHARS,
    MAX_SCHEMA_ARTIFACTS,
    Glob,
    parse_requirements,
)

CHANGE = "openspec/changes/add-login"
TASKS = "## 1. Login form\n\n- [ ] 1.1 Draw it\n"
BACKTRACKING = "*a" * 14 + "*b"


def _change(tmp_path: Path, schema: str, extra: dict[str, str] | None = None) -> Path:
    root = tmp_path / "project"
    write_files(
        root,
        {
            "openspec/config.yaml": "schema: custom\n",
            "openspec/schemas/custom/schema.yaml": schema,
            f"{CHANGE}/proposal.md": "# Add login\n",
            f"{CHANGE}/tasks.md": TASKS,
            **(extra or {}),
        },
    )
    return root


def test_a_backtracking_generates_glob_does_not_hang_the_plan(tmp_path: Path) -> None:
    schema = (
        "name: custom\nartifacts:\n"
        f"  - id: notes\n    generates: '{BACKTRACKING}'\n"
        "  - id: tasks\n    generates: tasks.md\n"
    )
    names = {f"{CHANGE}/{'a' * 60}{index}": "x\n" for index in range(20)}
    root = _change(tmp_path, schema, {**names, f"{CHANGE}/{'a' * 14}b": "kept\n"})
    done = cli(root, "stories", "--json")
    assert done.code == 0, done.stderr
    story = json.loads(done.stdout)["stories"][0]
    assert story["id"] == "add-login:1"
    assert story["files"] == [f"{CHANGE}/{'a' * 14}b"]


def test_a_glob_too_long_or_too_many_artifacts_is_one_line(tmp_path: Path) -> None:
    too_long = "*" + "a" * MAX_GLOB_CHARS
    many = "".join(
        f"  - id: a{index}\n    generates: 'n{index}.md'\n"
        for index in range(MAX_SCHEMA_ARTIFACTS + 5)
    )
    schema = f"name: custom\nartifacts:\n  - id: long\n    generates: '{too_long}'\n{many}"
    root = _change(tmp_path, schema, {f"{CHANGE}/n0.md": "first\n"})
    done = cli(root, "stories", "--json")
    assert done.code == 0, done.stderr
    data = json.loads(done.stdout)
    reasons = [entry["reason"] for entry in data["skipped"]]
    assert f"{MAX_SCHEMA_ARTIFACTS + 6:,} artifacts; the first {MAX_SCHEMA_ARTIFACTS} are read" in (
        reasons
    )
    assert (
        f"artifact 'long': a 'generates' glob over {MAX_GLOB_CHARS} characters; not matched"
        in reasons
    )
    assert data["stories"][0]["files"] == [f"{CHANGE}/n0.md"]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("specs/**/spec.md", "specs/auth/spec.md", True),
        ("specs/**/spec.md", "specs/spec.md", True),
        ("specs/**/spec.md", "specs/area/auth/spec.md", True),
        ("specs/**", "specs/area/auth/spec.md", True),
        ("*.md", "design.md", True),
        ("*.md", "specs/design.md", False),
        ("d?sign.md", "design.md", True),
        ("d?sign.md", "dsign.md", False),
        ("[dx]esign.md", "design.md", True),
        ("[!dx]esign.md", "design.md", False),
        ("[a-e]*.md", "design.md", True),
        (BACKTRACKING, "a" * 200, False),
        (BACKTRACKING, "a" * 14 + "b", True),
        ("x*y*z", "xzy", False),
    ],
)
def test_generates_globs_match_as_openspec_reads_them(
    pattern: str, path: str, matches: bool
) -> None:
    assert Glob.parse(pattern).matches(path) is matches


def test_specs_of_a_hundred_thousand_requirements_each_are_read_in_one_pass(
    tmp_path: Path,
) -> None:
    spec = "### Requirement: R\n" * 100_000
    specs = {f"{CHANGE}/specs/cap{index}/spec.md": spec for index in range(3)}
    root = tmp_path / "project"
    write_files(
        root, {f"{CHANGE}/proposal.md": "# Add login\n", f"{CHANGE}/tasks.md": TASKS, **specs}
    )
    done = cli(root, "stories")
    assert done.code == 0, done.stderr
    assert "add-login:1" in done.stdout


def test_requirements_keep_their_scenarios_and_text() -> None:
    text = (
        "## ADDED Requirements\n\n### Requirement: Login\nIntro.\n\n#### Scenario: Good\nok\n"
        "#### Scenario: Bad\nno\n##### Note\nn\n### Requirement: Logout\nBye.\n"
        "## REMOVED Requirements\n\n### Requirement: Old\ngone\n"
    )
    found = parse_requirements(text, "auth")
    assert [(r.name, r.text) for r in found] == [("Login", "Intro."), ("Logout", "Bye.")]
    assert [(s.name, s.text) for s in found[0].scenarios] == [
        ("Good", "ok"),
        ("Bad", "no\n##### Note\nn"),
    ]
