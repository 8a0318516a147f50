"""What a plan's lists of files can ask for: a ``context:`` list of tens of thousands of
entries is read up to a bound, in time linear in its length (the command runs in a
subprocess that must finish within its generous wall-clock bound); and a dotfile or a secrets
file it names (``.env``, ``.git/config``), like one a v4 project always loads, is a row with
its reason, never sent unless the user takes it in by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from _run_helpers import cli
from builders import make_workspace, write_files
from promptdeck.core.injection.builder import build_injection, build_story_injection
from promptdeck.core.injection.candidates import StoryContextFile
from promptdeck.core.injection.model import SECRET_LIKE_REASON, Selection, is_secret_like
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.plans.context_files import MAX_CONTEXT_ENTRIES
from promptdeck.core.project.workspace import Workspace, open_workspace

ART = "_bmad-output/implementation-artifacts"
SPEC = f"{ART}/spec-1-1-probe.md"


def _spec(paths: list[str]) -> str:
    listed = "".join(f"  - {path}\n" for path in paths)
    return f"---\nstatus: ready-for-dev\ncontext:\n{listed}---\n"


def _rows(workspace: Workspace, included: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """The rows of story 1-1's injection; ``included``: files the user took in by hand."""
    story = load_catalog(workspace).find("1-1")
    injection = build_injection(
        workspace,
        "dev",
        (),
        story_files=story.files,
        context_files=[StoryContextFile(path, "context: list") for path in story.context_files],
        included_files=included,
        count_tokens=False,
    )
    assert ("SECRET-VALUE" in injection.text) is bool(included)
    return {f.path: (f.status, f.reason) for f in injection.files}


def test_a_context_list_of_ninety_thousand_entries_is_bounded_and_linear(
    tmp_path: Path,
) -> None:
    paths = [f"d/{index}" for index in range(90_000)]
    root = tmp_path / "project"
    present = {f"d/{index}": "x\n" for index in range(MAX_CONTEXT_ENTRIES + 1)}
    write_files(root, {SPEC: _spec(paths), **present})
    done = cli(root, "inspect", "1-1")
    # 3: the spec itself, a megabyte of list, is over the injection's error line.
    assert done.code == 3, done.stderr
    rows = {line.split("\t")[1] for line in done.stdout.splitlines() if line.startswith("file\t")}
    assert f"d/{MAX_CONTEXT_ENTRIES - 1}" in rows
    assert f"d/{MAX_CONTEXT_ENTRIES}" not in rows
    doctor = cli(root, "doctor")
    assert f"'context' lists 90,000 files; the first {MAX_CONTEXT_ENTRIES:,} are read" in (
        doctor.stdout + doctor.stderr
    )


def test_a_context_list_past_the_bound_keeps_its_first_entries(tmp_path: Path) -> None:
    paths = [f"d/{index}.md" for index in range(MAX_CONTEXT_ENTRIES + 10)]
    ws = make_workspace(tmp_path / "project", {SPEC: _spec(paths), "d/0.md": "x\n"})
    catalog = load_catalog(ws)
    story = catalog.find("1-1")
    assert story.context_files == tuple(paths[:MAX_CONTEXT_ENTRIES])
    assert any(
        f"lists {MAX_CONTEXT_ENTRIES + 10:,} files" in entry.reason
        and entry.path == SPEC
        and entry.line == 4 + MAX_CONTEXT_ENTRIES
        for entry in catalog.unreadable
    )


@pytest.mark.parametrize(
    ("path", "secret"),
    [
        (".env", True),
        ("config/prod.env", True),
        (".git/config", True),
        ("deploy/.npmrc", True),
        ("docs/.hidden/notes.md", True),
        ("docs/ok.md", False),
        ("../outside.md", False),
        ("docs/environment.md", False),
    ],
)
def test_which_paths_are_secret_like(path: str, secret: bool) -> None:
    assert is_secret_like(path) is secret


def test_context_entries_naming_dotfiles_or_env_files_are_rows_not_sent(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "project",
        {
            SPEC: _spec(["'{project-root}/.env'", ".git/config", "config/prod.env", "docs/ok.md"]),
            ".env": "TOKEN=SECRET-VALUE\n",
            ".git/config": "[remote]\n  url = SECRET-VALUE\n",
            "config/prod.env": "KEY=SECRET-VALUE\n",
            "docs/ok.md": "fine\n",
        },
    )
    rows = _rows(ws)
    for secret in (".env", ".git/config", "config/prod.env"):
        assert rows[secret] == ("excluded", SECRET_LIKE_REASON)
    assert rows["docs/ok.md"] == ("included", "context: list")
    taken = _rows(ws, included=(".env",))
    assert taken[".env"][0] == "included"


def test_a_v4_always_load_dotfile_is_a_row_not_sent(tmp_path: Path) -> None:
    config = (
        "devStoryLocation: docs/stories\ndevLoadAlwaysFiles:\n"
        "  - docs/architecture/coding-standards.md\n  - .env\n"
    )
    ws = make_workspace(
        tmp_path / "project",
        {
            ".bmad-core/core-config.yaml": config,
            "docs/stories/1.1.story.md": "# Story 1.1: Probe\n\n## Status\n\nApproved\n",
            "docs/architecture/coding-standards.md": "standards\n",
            ".env": "TOKEN=SECRET-VALUE\n",
        },
    )
    ws = open_workspace(ws.root)
    story = load_catalog(ws).find("1.1")
    injection = build_story_injection(
        ws, story, Selection(), command_name="dev", count_tokens=False
    )
    rows = {f.path: (f.status, f.reason) for f in injection.files}
    assert "SECRET-VALUE" not in injection.text
    assert rows[".env"] == ("excluded", SECRET_LIKE_REASON)
    assert rows["docs/architecture/coding-standards.md"][0] == "included"


def test_a_v4_always_load_list_past_the_bound_is_one_line(tmp_path: Path) -> None:
    listed = "".join(f"  - docs/a{index}.md\n" for index in range(1200))
    config = f"devStoryLocation: docs/stories\ndevLoadAlwaysFiles:\n{listed}"
    root = tmp_path / "project"
    write_files(
        root,
        {
            ".bmad-core/core-config.yaml": config,
            "docs/stories/1.1.story.md": "# Story 1.1: Probe\n\n## Status\n\nApproved\n",
        },
    )
    ws = open_workspace(root)
    assert len(ws.config.bmad_always_load) == 1000
    assert ws.config.bmad_always_load[-1] == "docs/a999.md"
    done = cli(root, "doctor")
    assert ".bmad-core/core-config.yaml:1003" in done.stdout + done.stderr
    assert "devLoadAlwaysFiles lists 1,200 files; the first 1,000 are read" in (
        done.stdout + done.stderr
    )
