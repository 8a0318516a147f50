"""Hostile plan files: what a spec's ``context:`` list, a v7 tree or a front matter can point
at or hold. Each case is one row or one unreadable entry; nothing outside the project is read,
no FIFO or device is opened, nothing raises."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.injection.builder import build_story_injection
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import Workspace

ART = "_bmad-output/implementation-artifacts"


V7 = "_bmad-output/initiative-probe"


def spec_with_context(tmp_path: Path, *paths: str, layout: str = "spec") -> Workspace:
    """Story 1-1 whose plan lists ``paths``: a v6.3 build spec, or a v7 ticket's plan."""
    listed = "".join(f"  - '{p}'\n" for p in paths)
    if layout == "v7":
        files = {
            "_bmad/custom/config.user.toml": (
                '[modules.bmm]\nactive_initiative = "initiative-probe"\n'
            ),
            f"{V7}/tickets.toml": '[[epic]]\nid = 1\nslug = "epic-probe"\n',
            f"{V7}/epic-probe/tickets.toml": '[[entry]]\nid = 1\ntitle = "Probe"\n',
            f"{V7}/epic-probe/story-probe-plan.md": (
                f"---\nticket: 1\nstatus: in-progress\ncontext:\n{listed}---\n"
            ),
        }
    else:
        files = {f"{ART}/spec-1-1-probe.md": f"---\nstatus: ready-for-dev\ncontext:\n{listed}---\n"}
    return make_workspace(tmp_path / "project", {**files, "docs/ok.md": "fine\n"})


def story_rows(workspace: Workspace) -> dict[str, tuple[str, str]]:
    story = load_catalog(workspace).find("1-1")
    injection = build_story_injection(
        workspace, story, Selection(), command_name="dev", count_tokens=False
    )
    assert "OUTSIDE-SECRET" not in injection.text
    return {f.path: (f.status, f.reason) for f in injection.files if f.category == "story"}


@pytest.mark.parametrize("layout", ["spec", "v7"])
def test_context_entries_pointing_out_of_the_project_are_rows_never_read(
    tmp_path: Path, layout: str
) -> None:
    (tmp_path / "secret.md").write_text("OUTSIDE-SECRET\n")
    ws = spec_with_context(
        tmp_path,
        "{project-root}/../secret.md",
        str(tmp_path / "secret.md"),
        "{project-root}/docs/link.md",
        "{project-root}/docs/ok.md",
        layout=layout,
    )
    (ws.root / "docs/link.md").symlink_to(tmp_path / "secret.md")
    rows = story_rows(ws)
    assert rows["../secret.md"][0] == "outside-project"
    assert rows[str(tmp_path / "secret.md")][0] == "outside-project"
    assert rows["docs/link.md"][0] == "outside-project"
    assert rows["docs/ok.md"] == ("included", "context: list")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
@pytest.mark.parametrize("layout", ["spec", "v7"])
def test_a_context_entry_naming_a_fifo_or_a_device_is_never_opened(
    tmp_path: Path, layout: str
) -> None:
    ws = spec_with_context(
        tmp_path, "{project-root}/docs/pipe.md", "{project-root}/docs/zero.md", layout=layout
    )
    os.mkfifo(ws.root / "docs/pipe.md")
    (ws.root / "docs/zero.md").symlink_to("/dev/zero")
    rows = story_rows(ws)  # a FIFO opened for reading would block here
    assert rows["docs/pipe.md"][0] == "unreadable"
    assert rows["docs/zero.md"][0] in ("unreadable", "outside-project")


def test_context_entries_that_name_no_file_are_reported_with_their_line(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/spec-1-1-probe.md": (
                "---\nstatus: done\ncontext:\n  - '{unknown_folder}/x.md'\n"
                "  - ['a', 'list']\n  - \"bell\\a.md\"\n---\n"
            ),
        },
    )
    catalog = load_catalog(ws)
    lines = sorted(e.line or 0 for e in catalog.unreadable if e.path.endswith("probe.md"))
    assert lines == [4, 5, 6]
    assert catalog.find("1-1").context_files == ()


def test_yaml_aliases_in_front_matter_are_refused_not_expanded(tmp_path: Path) -> None:
    bomb = "---\na: &a ['x','x','x','x','x','x','x','x','x']\n"
    for index in range(1, 12):
        bomb += f"b{index}: &b{index} [*{'a' if index == 1 else f'b{index - 1}'}] \n"
    bomb += "status: done\ncontext: *b11\n---\n"
    ws = make_workspace(tmp_path, {f"{ART}/spec-1-1-bomb.md": bomb})
    catalog = load_catalog(ws)
    entry = [e for e in catalog.unreadable if e.path.endswith("bomb.md")]
    assert entry and "aliases" in entry[0].reason and entry[0].line == 3


def test_hostile_v7_trees_leave_the_rest_of_the_plan_readable(tmp_path: Path) -> None:
    deep = "x = " + "[" * 5000 + "]" * 5000 + "\n"
    ws = make_workspace(
        tmp_path,
        {
            "_bmad/custom/config.user.toml": '[modules.bmm]\nactive_initiative = "initiative-x"\n',
            "_bmad-output/initiative-x/tickets.toml": (
                '[[epic]]\nid = 1\nslug = "good"\n\n[[epic]]\nid = 2\nslug = "deep"\n\n'
                '[[epic]]\nid = 3\nslug = "../../escape"\n'
            ),
            "_bmad-output/initiative-x/epic-good/tickets.toml": '[[entry]]\nid = 1\ntitle = "Ok"\n',
            "_bmad-output/initiative-x/epic-good/story-ok-plan.md": "---\nticket: 1\n",
            "_bmad-output/initiative-x/epic-deep/tickets.toml": deep,
        },
    )
    catalog = load_catalog(ws)
    assert [(s.id, s.status) for s in catalog.stories] == [("1-1", "backlog")]
    where = {(e.path.rsplit("/", 2)[-2], e.line) for e in catalog.unreadable}
    assert ("initiative-x", 9) in where  # the epic whose slug climbs out
    assert any(e.path.endswith("story-ok-plan.md") for e in catalog.unreadable)  # unclosed
    assert any(e.path.endswith("epic-deep/tickets.toml") for e in catalog.unreadable)


def test_an_active_initiative_that_climbs_out_is_refused(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "project",
        {"_bmad/custom/config.user.toml": '[core]\nactive_initiative = "../elsewhere"\n'},
    )
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "tickets.toml").write_text('[[entry]]\nid = 1\ntitle = "OUTSIDE"\n')
    catalog = load_catalog(ws)
    assert catalog.stories == ()
    assert any("not a folder name" in e.reason for e in catalog.unreadable)
