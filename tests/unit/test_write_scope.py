"""The write scope of a phase (``core/guard/``): what it protects and leaves writable,
how ``[scope]`` widens or narrows it (a widening needs trust), the frozen blocks, the new
``scope-violated`` outcome and exit code, and where the run shows and enforces it."""

from __future__ import annotations

from pathlib import Path

import pytest
from promptdeck.core.errors import EXIT_SCOPE
from promptdeck.core.guard import ScopeGuard, frozen_view, write_scope
from promptdeck.core.guard import scope as scope_module
from promptdeck.core.phases.outcome import exit_code_for, settle_outcome
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.trust import config_trust, program_files
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.run.plan import confirmation_blocks, describe_plan, plan_run
from promptdeck.core.run.prepare import prepare_run
from promptdeck.core.vocabulary import OUTCOMES

ART = "_bmad-output/implementation-artifacts"
PLANNING = "_bmad-output/planning-artifacts"
OWN = f"{ART}/1-1-parse-lines.md"
OTHER = f"{ART}/1-2-write-rows.md"
FILES = {
    OWN: "# Story 1.1: Parse lines\n\nStatus: ready-for-dev\n",
    OTHER: "# Story 1.2: Write rows\n\nStatus: done\n",
    f"{ART}/sprint-status.yaml": (
        "development_status:\n  1-1-parse-lines: ready-for-dev\n  1-2-write-rows: done\n"
    ),
    f"{ART}/epic-1-context.md": "# Epic 1 context\n",
    f"{PLANNING}/prd.md": "# PRD\n",
    f"{PLANNING}/epics.md": "# Epics\n",
    f"{PLANNING}/initiative/tickets.toml": "[[entry]]\nid = 1\n",
    ".promptdeck/rules.md": "# Rules\n",
    ".promptdeck/learnings.md": "# Learnings\n",
    ".promptdeck/locks/1-1.lock": "123\n",
    ".promptdeck/runs/old-run/result.json": "{}\n",
    ".promptdeck/runs/old-run/meta.json": "{}\n",
    ".promptdeck/runs/old-run/stream.jsonl": "\n",
    ".promptdeck/runs/live-run/meta.json": "{}\n",
    "src/app.py": "print('app')\n",
}


def _workspace(tmp_path: Path, extra: dict[str, str] | None = None) -> Workspace:
    root = (tmp_path / "project").resolve()
    for rel, text in {**FILES, **(extra or {})}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return open_workspace(root)


def _scope(workspace: Workspace, story_id: str = "1-1", phase: str = "dev"):  # type: ignore[no-untyped-def]
    return write_scope(workspace, load_catalog(workspace).find(story_id), phase)


def test_the_plan_s_bookkeeping_is_protected_and_the_phase_s_own_story_is_not(
    tmp_path: Path,
) -> None:
    scope = _scope(_workspace(tmp_path))
    protected = set(scope.protected)
    assert {
        f"{ART}/sprint-status.yaml",
        f"{ART}/epic-1-context.md",
        f"{PLANNING}/prd.md",
        f"{PLANNING}/epics.md",
        f"{PLANNING}/initiative/tickets.toml",
        OTHER,
        ".promptdeck/rules.md",
        ".promptdeck/runs/old-run/result.json",
        ".promptdeck/runs/old-run/meta.json",
    } <= protected
    # Writable: the phase's own story, the shared learnings, promptdeck's own records and
    # locks (this run's and any other's running now), and the code.
    for rel in (
        OWN,
        ".promptdeck/learnings.md",
        ".promptdeck/locks/1-1.lock",
        ".promptdeck/runs/old-run/stream.jsonl",
        ".promptdeck/runs/live-run/meta.json",
        "src/app.py",
    ):
        assert rel not in protected, rel
    assert OWN in scope.allowed and scope.frozen == () and scope.notes == ()


def test_the_other_story_s_file_is_protected_for_it_the_other_way_round(tmp_path: Path) -> None:
    scope = _scope(_workspace(tmp_path), "1-2", "review")
    assert OWN in scope.protected and OTHER not in scope.protected


def test_a_missing_sprint_status_is_protected_so_one_created_is_removed(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    (workspace.root / ART / "sprint-status.yaml").unlink()
    scope = _scope(workspace)
    assert f"{ART}/sprint-status.yaml" in scope.protected
    guard = ScopeGuard(workspace.root, scope)
    (workspace.root / ART / "sprint-status.yaml").write_text("development_status: {}\n")
    check = guard.check()
    assert [(v.path, v.change, v.restored) for v in check.violations] == [
        (f"{ART}/sprint-status.yaml", "added", True)
    ]
    assert not (workspace.root / ART / "sprint-status.yaml").exists()


def test_a_touch_that_leaves_the_bytes_is_no_violation(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    guard = ScopeGuard(workspace.root, _scope(workspace))
    path = workspace.root / PLANNING / "prd.md"
    path.write_text(path.read_text())
    assert not guard.check().violated


def test_scope_protect_narrows_and_scope_allow_widens(tmp_path: Path) -> None:
    config = '[scope]\nprotect = ["src/*.py"]\nallow = ["_bmad-output/planning-artifacts/prd.md"]\n'
    scope = _scope(_workspace(tmp_path, {".promptdeck/config.toml": config}))
    assert "src/app.py" in scope.protected
    assert f"{PLANNING}/prd.md" not in scope.protected
    assert f"{PLANNING}/prd.md" in scope.allowed


def test_scope_allow_needs_trust_and_names_no_file_that_runs(tmp_path: Path) -> None:
    config = '[scope]\nallow = ["_bmad-output/planning-artifacts/prd.md"]\n'
    workspace = _workspace(tmp_path, {".promptdeck/config.toml": config})
    trust = config_trust(workspace, "replay")
    assert trust.needed
    assert trust.settings == ('scope.allow = ["_bmad-output/planning-artifacts/prd.md"]',)
    assert program_files(workspace) == ()
    narrowing = _workspace(
        tmp_path / "b", {".promptdeck/config.toml": '[scope]\nprotect = ["x"]\n'}
    )
    assert not config_trust(narrowing, "replay").needed


def test_the_own_story_s_frozen_blocks_are_listed(tmp_path: Path) -> None:
    frozen = (
        "# Story 1.1: Parse lines\n\nStatus: ready-for-dev\n\n"
        "<frozen-after-approval>\nAC\n</frozen-after-approval>\n"
    )
    scope = _scope(_workspace(tmp_path, {OWN: frozen}))
    assert scope.frozen == (OWN,)


@pytest.mark.parametrize(
    ("text", "view"),
    [
        (b"no blocks\n", ()),
        (
            b'a\n<frozen-after-approval by="po">\nx\n</frozen-after-approval>\nb\n'
            b"<frozen-after-approval>y</frozen-after-approval>",
            (
                b'<frozen-after-approval by="po">\nx\n</frozen-after-approval>',
                b"<frozen-after-approval>y</frozen-after-approval>",
            ),
        ),
        (b"<frozen-after-approval>\nnever closed\n", None),
        (b"</frozen-after-approval>\n<frozen-after-approval>x</frozen-after-approval>", None),
        (
            b"<frozen-after-approval><frozen-after-approval>x</frozen-after-approval>"
            b"</frozen-after-approval>",
            None,
        ),
    ],
)
def test_frozen_view(text: bytes, view: tuple[bytes, ...] | None) -> None:
    assert frozen_view(text) == view


def test_scope_violated_is_an_outcome_of_its_own_never_a_success() -> None:
    assert "scope-violated" in OUTCOMES
    assert EXIT_SCOPE == 13
    assert exit_code_for("scope-violated") == 13
    assert settle_outcome("success", scope_violated=True) == "scope-violated"
    assert settle_outcome("failure", scope_violated=True) == "scope-violated"
    assert settle_outcome("success", scope_violated=True, unsaved=True) == "unsaved"


def test_the_launch_carries_the_protected_paths_and_the_confirmation_shows_them(
    tmp_path: Path,
) -> None:
    workspace = _workspace(tmp_path)
    catalog = load_catalog(workspace)
    prompt = compose_prompt(
        workspace, catalog, PromptRequest(story_id="1-1", phase="dev"), count_tokens=False
    )
    prepared = prepare_run(workspace, prompt, agent="replay", dry_run=True)
    assert prepared.request.protected_paths == prepared.scope.protected
    assert f"{ART}/sprint-status.yaml" in prepared.request.protected_paths
    plan = describe_plan(
        workspace, plan_run(workspace, prompt, agent="replay", dry_run=True), agent="replay"
    )
    assert plan.to_dict()["scope"]["protected"] == list(prepared.scope.protected)
    scope_blocks = [block for block in confirmation_blocks(plan) if block.kind == "scope"]
    assert len(scope_blocks) == 1
    assert scope_blocks[0].lines[0].startswith("write scope: ")
    assert "sprint-status.yaml" in scope_blocks[0].text


def test_past_the_cap_one_note_says_how_many_are_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scope_module, "MOST_PROTECTED", 3)
    scope = _scope(_workspace(tmp_path))
    assert len(scope.protected) == 3
    assert len(scope.notes) == 1 and "are not recorded or checked" in scope.notes[0]
    # The plan's own files come first; promptdeck's folder is what the cap leaves out.
    assert f"{ART}/sprint-status.yaml" in scope.protected
