"""An agent that rewrites the plan is put back: ``sprint-status.yaml``, another story's file, a
``tickets.toml`` and a frozen block of its own story file edited in a dev phase end the run
``scope-violated`` (exit 13), every file byte for byte as before, the attempt kept as a diff in
the run folder, nothing staged or committed and ``--auto`` stopped there. Protected files that
are symlinks, FIFOs, huge, or change type during the run are recorded as what they are and
never read through; ``[scope]`` paths outside the project are refused in one line. The demo's
own runs never trip the guard."""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable
from pathlib import Path

from _run_helpers import agent_files, cli, cloned_workspace, git, run_folders
from app_helpers import set_agent_settings
from promptdeck.core.guard import VIOLATIONS_FILE, ScopeGuard, WriteScope, write_scope
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace

ARTIFACTS = "_bmad-output/implementation-artifacts"
OWN_REL = f"{ARTIFACTS}/1-1-parse-lines.md"
OTHER_REL = f"{ARTIFACTS}/1-2-write-rows.md"
SPRINT_REL = f"{ARTIFACTS}/sprint-status.yaml"
TICKETS_REL = f"{ARTIFACTS}/tickets.toml"
EPICS_REL = "_bmad-output/planning-artifacts/epics.md"
OWN = (
    "# Story 1.1: Parse lines\n\nStatus: in-progress\n\n"
    '<frozen-after-approval reason="approved by the PO">\n'
    "## Acceptance Criteria\n\n1. Lines are parsed.\n"
    "</frozen-after-approval>\n\n## Tasks / Subtasks\n\n- [ ] Write the parser\n"
)
OTHER = "# Story 1.2: Write rows\n\nStatus: done\n\n## Dev Agent Record\n\nAll done.\n"
SPRINT = (
    "development_status:\n  epic-1: in-progress\n"
    "  1-1-parse-lines: in-progress\n  1-2-write-rows: done\n"
)
TICKETS = '[[entry]]\nid = 1\ntype = "story"\ntitle = "Parse lines"\n'
PLAN = {
    OWN_REL: OWN,
    OTHER_REL: OTHER,
    SPRINT_REL: SPRINT,
    TICKETS_REL: TICKETS,
    EPICS_REL: "# Epics\n\n## Epic 1: Lines\n",
}

REWRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    root = Path(sys.argv[2])
    art = root / "_bmad-output/implementation-artifacts"
    status = art / "sprint-status.yaml"
    status.write_text(status.read_text().replace("1-2-write-rows: done", "1-2-write-rows: backlog"))
    (art / "1-2-write-rows.md").write_text("# Story 1.2: Write rows\\n\\nStatus: backlog\\n")
    with (art / "tickets.toml").open("a") as handle:
        handle.write('[[entry]]\\nid = 9\\ntype = "story"\\ntitle = "Invented"\\n')
    own = art / "1-1-parse-lines.md"
    own.write_text(
        own.read_text().replace("1. Lines are parsed.", "1. Anything goes.")
        + "\\n## Dev Agent Record\\n\\nDone.\\n"
    )
    (root / "src.py").write_text("print('work')\\n")
    print("IMPLEMENTATION COMPLETE: 1.1", flush=True)
    """
)


def _bytes(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in PLAN}


def test_an_agent_that_rewrites_the_plan_is_put_back_and_nothing_is_staged(
    tmp_path: Path,
) -> None:
    root = cloned_workspace(tmp_path, {**PLAN, **agent_files(REWRITER)})
    before = _bytes(root)
    head = git(root, "rev-parse", "HEAD").strip()
    done = cli(root, "run", "1-1", "--auto")
    assert done.code == 13, done.stderr
    assert "scope-violated" in done.stderr
    after = _bytes(root)
    assert {rel: data for rel, data in after.items() if rel != OWN_REL} == {
        rel: data for rel, data in before.items() if rel != OWN_REL
    }
    # The story's own file: its frozen block as approved, the agent's own record kept.
    assert after[OWN_REL] == before[OWN_REL] + b"\n## Dev Agent Record\n\nDone.\n"
    # --auto stopped at the violation: one run, no review.
    folders = run_folders(root)
    assert len(folders) == 1
    diff = (folders[0] / VIOLATIONS_FILE).read_text()
    for rel in (SPRINT_REL, OTHER_REL, TICKETS_REL, OWN_REL):
        assert f"a/{rel}" in diff, rel
    assert "+1. Anything goes." in diff and "-1. Anything goes." not in diff
    result = json.loads((folders[0] / "result.json").read_text())
    assert result["outcome"] == "scope-violated" and result["exit_code"] == 13
    restored = [w for w in result["warnings"] if w.startswith("write scope: ")]
    assert any(SPRINT_REL in w and "restored" in w for w in restored)
    assert git(root, "diff", "--cached", "--name-only") == ""
    assert git(root, "rev-parse", "HEAD").strip() == head
    # The records show it too: `runs` lists the outcome, `show` names the files put back.
    assert "scope-violated" in cli(root, "runs").stdout
    shown = cli(root, "show", folders[0].name)
    assert f"{TICKETS_REL}: changed by the agent; restored" in shown.stdout + shown.stderr


def test_a_dry_run_shows_the_scope_in_text_and_json(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {**PLAN, **agent_files(REWRITER)})
    text = cli(root, "run", "1-1", "--phase", "dev", "--dry-run")
    assert text.code == 0, text.stderr
    assert "write scope:" in text.stdout and "sprint-status.yaml" in text.stdout
    payload = json.loads(cli(root, "run", "1-1", "--phase", "dev", "--dry-run", "--json").stdout)
    scope = payload["scope"]
    assert {SPRINT_REL, OTHER_REL, TICKETS_REL, EPICS_REL} <= set(scope["protected"])
    assert OWN_REL not in scope["protected"] and OWN_REL in scope["allowed"]
    assert scope["frozen"] == [OWN_REL]


# -- hostile protected files, checked through the guard itself ------------------------------


def _guard(tmp_path: Path, extra: dict[str, str] | None = None) -> tuple[Path, WriteScope]:
    root = (tmp_path / "project").resolve()
    for rel, text in {**PLAN, **(extra or {})}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    workspace = open_workspace(root)
    story = load_catalog(workspace).find("1-1")
    return root, write_scope(workspace, story, "dev")


def test_a_protected_symlink_out_of_the_project_is_never_read_and_a_planted_one_is_removed(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    trap = outside / "fifo"
    os.mkfifo(trap)  # read through, it would hang the check
    users = outside / "users.yaml"
    users.write_text("the user's own\n")
    root, scope = _guard(tmp_path)
    (root / EPICS_REL).unlink()
    (root / EPICS_REL).symlink_to(trap)
    guard = ScopeGuard(root, scope)
    # The agent swaps sprint-status.yaml for a link to the user's file and writes "through" it.
    (root / SPRINT_REL).unlink()
    (root / SPRINT_REL).symlink_to(users)
    check = guard.check()
    assert [v.path for v in check.violations] == [SPRINT_REL]
    assert check.violations[0].restored
    assert not (root / SPRINT_REL).is_symlink()
    assert (root / SPRINT_REL).read_text() == SPRINT
    assert users.read_text() == "the user's own\n"
    assert os.readlink(root / EPICS_REL) == str(trap)


def test_fifos_huge_files_and_type_changes_end_in_one_line_each(tmp_path: Path) -> None:
    huge_rel = "_bmad-output/planning-artifacts/prd.md"
    root, scope = _guard(tmp_path, {huge_rel: "x" * (2 * 1024 * 1024)})
    fifo_rel = "_bmad-output/planning-artifacts/architecture.md"
    os.mkfifo(root / fifo_rel)
    scope = WriteScope((*scope.protected, fifo_rel), scope.frozen, scope.allowed)
    guard = ScopeGuard(root, scope)
    assert any("fingerprinted" in note for note in guard.notes)
    (root / huge_rel).write_text("y" * (2 * 1024 * 1024))
    (root / TICKETS_REL).unlink()
    (root / TICKETS_REL).mkdir()  # a file become a folder
    (root / OTHER_REL).unlink()
    os.mkfifo(root / OTHER_REL)  # a file become a FIFO
    (root / EPICS_REL).unlink()  # deleted
    check = guard.check()
    by_path = {v.path: v for v in check.violations}
    assert set(by_path) == {huge_rel, TICKETS_REL, OTHER_REL, EPICS_REL}
    assert not by_path[huge_rel].restored and "1 MiB" in by_path[huge_rel].detail
    assert not by_path[TICKETS_REL].restored and "folder" in by_path[TICKETS_REL].detail
    assert by_path[OTHER_REL].restored and (root / OTHER_REL).read_text() == OTHER
    assert by_path[EPICS_REL].restored and (root / EPICS_REL).read_text().startswith("# Epics")
    assert all("\n" not in v.line() for v in check.violations)
    assert os.path.exists(root / fifo_rel)  # the untouched FIFO: recorded, never opened


def test_unbalanced_markers_freeze_the_whole_file(tmp_path: Path) -> None:
    unbalanced = OWN.replace("</frozen-after-approval>\n", "")
    root, scope = _guard(tmp_path, {OWN_REL: unbalanced})
    assert scope.frozen == (OWN_REL,)
    guard = ScopeGuard(root, scope)
    assert [n for n in guard.notes if "unbalanced" in n] == [
        f"{OWN_REL}: its <frozen-after-approval> markers are unbalanced; the whole file is "
        "treated as frozen"
    ]
    with (root / OWN_REL).open("a") as handle:
        handle.write("\n## Dev Agent Record\n")
    check = guard.check()
    assert [v.path for v in check.violations] == [OWN_REL]
    assert (root / OWN_REL).read_text() == unbalanced


def test_an_append_outside_the_frozen_blocks_is_the_phase_s_own(tmp_path: Path) -> None:
    root, scope = _guard(tmp_path)
    guard = ScopeGuard(root, scope)
    with (root / OWN_REL).open("a") as handle:
        handle.write("\n## Dev Agent Record\n\nDone.\n")
    assert not guard.check().violated


def test_scope_settings_outside_the_project_are_refused_and_the_rest_still_checked(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not the project's\n")
    config = (
        '[scope]\nprotect = ["../outside.txt", "/etc/passwd", "docs/*.md"]\nallow = ["../../x"]\n'
    )
    root, scope = _guard(
        tmp_path, {".promptdeck/config.toml": config, "docs/guide.md": "# Guide\n"}
    )
    assert scope.notes == (
        "[scope] protect = '../outside.txt' names a path outside the project; refused",
        "[scope] protect = '/etc/passwd' names a path outside the project; refused",
        "[scope] allow = '../../x' names a path outside the project; refused",
    )
    assert "docs/guide.md" in scope.protected and SPRINT_REL in scope.protected
    assert not any(".." in path or path.startswith("/") for path in scope.protected)
    guard = ScopeGuard(root, scope)
    (root / "docs/guide.md").write_text("# Rewritten\n")
    (root / SPRINT_REL).write_text("development_status: {}\n")
    check = guard.check()
    assert {v.path for v in check.violations} == {"docs/guide.md", SPRINT_REL}
    assert outside.read_text() == "not the project's\n"


def test_the_demo_s_own_runs_never_violate_the_scope(
    tmp_path: Path, copy_demo: Callable[[Path], Path]
) -> None:
    root = copy_demo(tmp_path / "ledgerline")
    config = root / ".promptdeck" / "config.toml"
    config.write_text(
        config.read_text() + "\n[flow]\nauto_kickoff = true\nauto_retro = true\n", "utf-8"
    )
    set_agent_settings(root, replay_delay=0.0)  # commits the config too
    for story in ("1-3", "1-4", "add-recurring-payments:2"):
        done = cli(root, "run", story, "--auto", "--agent", "replay")
        assert done.code == 0, done.stderr
    results = [json.loads((f / "result.json").read_text()) for f in run_folders(root)]
    phases = {r["phase"] for r in results}
    assert {"kickoff", "dev", "review", "uat", "retro"} <= phases, phases
    assert [r["outcome"] for r in results if r["outcome"] != "success"] == []
    assert not any((f / VIOLATIONS_FILE).exists() for f in run_folders(root))


def test_only_the_frozen_blocks_go_back_and_the_phase_s_own_edits_stay(tmp_path: Path) -> None:
    root, scope = _guard(tmp_path)
    guard = ScopeGuard(root, scope)
    own = root / OWN_REL
    own.write_text(
        own.read_text().replace("1. Lines are parsed.", "1. Anything goes.")
        + "\n## Dev Agent Record\n\nDone.\n"
    )
    check = guard.check()
    [violation] = check.violations
    assert (violation.path, violation.restored) == (OWN_REL, True)
    assert violation.detail == "the blocks put back, the rest kept"
    assert own.read_text() == OWN + "\n## Dev Agent Record\n\nDone.\n"
    assert "+1. Anything goes." in check.diff
