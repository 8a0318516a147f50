"""What the retro sees: its epic's own section, the execution summary from the run records,
and summaries of the largest stories when the whole epic would pass the warning line."""

from __future__ import annotations

import json
from pathlib import Path

from _prompt_workspace import ARTIFACTS, make_workspace
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.prompt.retro import section_of, summarise_story

EPICS = """\
# Epic breakdown

## Epic 1: Accounts

Users get accounts. Goal: sign-up in under a minute.

### Story 1.1: User login

Log in.

## Epic 10: Billing

Money things.

## Epic 2: Reports
"""


def _retro(root: Path, **extra: str):
    workspace = open_workspace(make_workspace(root, extra or None))
    return compose_prompt(
        workspace, load_catalog(workspace), PromptRequest("1-2", phase="retro"), count_tokens=False
    )


def _context(prompt) -> str:
    return next(x for x in prompt.layers if x.layer_id == "Layer-5").content


def test_only_the_epics_own_section_is_given(tmp_path: Path) -> None:
    prompt = _retro(tmp_path, **{"_bmad-output/planning-artifacts/epics.md": EPICS})
    context = _context(prompt)
    assert "From `_bmad-output/planning-artifacts/epics.md`:" in context
    assert "Goal: sign-up in under a minute." in context and "### Story 1.1: User login" in context
    assert "Billing" not in context and "Epic 2: Reports" not in context
    assert not any("no section for epic" in w for w in prompt.warnings)


def test_sharded_epic_file_and_missing_section(tmp_path: Path) -> None:
    sharded = _retro(
        tmp_path / "a", **{"_bmad-output/planning-artifacts/epics/epic-1-accounts.md": "Scope."}
    )
    assert "From `_bmad-output/planning-artifacts/epics/epic-1-accounts.md`" in _context(sharded)
    missing = _retro(tmp_path / "b")
    assert any("no section for epic 1" in w for w in missing.warnings)
    assert "No section for epic 1 was found" in _context(missing)


def test_section_of_respects_levels_fences_and_id_boundaries() -> None:
    text = "## Epic 1: A\nbody\n```\n## Epic 2: not a heading\n```\n### Sub\nx\n## Epic 2: B\n"
    assert (
        section_of(text, "1")
        == "## Epic 1: A\nbody\n```\n## Epic 2: not a heading\n```\n### Sub\nx"
    )
    assert section_of("## Epic 10: X\n", "1") is None
    assert section_of("# Epic 01 - Y\nz\n", "1") == "# Epic 01 - Y\nz"


def _run(root: Path, n: int, story: str, phase: str, outcome: str, **signal: str) -> None:
    folder = root / ".promptdeck" / "runs" / f"r{n:03d}"
    folder.mkdir(parents=True)
    meta = {"story": story, "phase": phase, "mode": "create", "started_ts": 1000.0 + n}
    (folder / "meta.json").write_text(json.dumps(meta))
    result = {"outcome": outcome, "duration_s": 30.0, "signal": signal or None}
    (folder / "result.json").write_text(json.dumps(result))


def test_execution_summary_counts_from_the_run_records(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _run(root, 1, "1-2", "dev", "failure", name="IMPLEMENTATION BLOCKED", reason="no db")
    _run(root, 2, "1-2", "failure", "success", name="ANALYSIS COMPLETE", reason="Retry")
    _run(root, 3, "1-2", "dev", "success", name="IMPLEMENTATION COMPLETE")
    _run(root, 4, "1-2", "review", "success", name="REVIEW PASSED")
    _run(root, 5, "1-3", "dev", "failure", name="IMPLEMENTATION BLOCKED", reason="unclear")
    _run(root, 6, "1-3", "failure", "success", name="ANALYSIS COMPLETE", reason="Skip")
    context = _context(_retro(root))
    assert (
        "- **Stories**: 3 — completed 2, failed 0, skipped 1, in progress 0, not run 0" in context
    )
    assert "- **Dev attempts**: 3" in context
    assert "- **Runs recorded**: 6, total duration 3 min 00 s" in context
    assert (
        "- 1-2 User registration: **completed**, 2 dev attempt(s) — review: REVIEW PASSED"
        in context
    )
    assert "- 1-3 Password reset: **skipped**, 1 dev attempt(s)" in context


def test_stories_are_summarised_largest_first_only_over_the_warning_line(tmp_path: Path) -> None:
    big = (
        "# Story 1.2: User registration\n\nStatus: review\n\n## Dev Notes\n\n"
        + "padding line\n" * 9000
        + "\n## Code Review Record\n\n- HIGH: email is not validated (fixed)\n"
        + "- LOW: naming\n\n## Failure Analysis Record\n\n**Recommendation**: Retry\n"
    )
    root = tmp_path / "ws"
    (root / ".promptdeck").mkdir(parents=True)
    (root / ".promptdeck" / "config.toml").write_text("[injection]\nwarn_bytes = 100000\n")
    prompt = _retro(root, **{f"{ARTIFACTS}/1-2-user-registration.md": big})
    assert prompt.summarised == ("1-2",)
    assert prompt.injection.size_bytes <= 100000
    assert f"{ARTIFACTS}/1-2-user-registration.md" not in {
        f.path for f in prompt.injection.included()
    }
    assert f"{ARTIFACTS}/1-1-user-login.md" in {f.path for f in prompt.injection.included()}
    context = _context(prompt)
    assert "## Story summaries" in context and "The story files of 1-2 are summarised" in context
    assert "- HIGH: email is not validated (fixed)" in context
    assert "Code Review Record" in context and "**Recommendation**: Retry" in context
    assert "— except those of 1-2, summarised above" in context
    assert any("the story files of 1-2 are summarised" in w for w in prompt.warnings)
    # Under the line nothing is summarised.
    small = _retro(tmp_path / "small")
    assert small.summarised == () and "## Story summaries" not in _context(small)


def test_summary_lists_record_headings_and_findings() -> None:
    from promptdeck.core.prompt.retro import StoryOutcome
    from promptdeck.core.stories.model import Story

    story = Story(id="1-2", key="1-2", title="T", status="done", source="bmad", group="1")
    text = (
        "# Story 1.2: T\n\n## Story Kickoff Insights\n\n### Identified Risks\n- risk\n\n"
        "## Party Review Record\n\n**Verdict**: Approved\n- MEDIUM: a test is missing\n"
    )
    summary = summarise_story(text, story, "s.md", StoryOutcome("1-2", "T", "completed", 1, "ok"))
    assert "Story Kickoff Insights › Identified Risks" in summary
    assert "Party Review Record" in summary and "- **Outcome**: completed — ok" in summary
    assert "  - **Verdict**: Approved" in summary and "  - MEDIUM: a test is missing" in summary


def test_an_openspec_change_retro_reads_its_proposal(tmp_path: Path) -> None:
    workspace = open_workspace(make_workspace(tmp_path))
    prompt = compose_prompt(
        workspace,
        load_catalog(workspace),
        PromptRequest("add-auth:2", phase="retro"),
        count_tokens=False,
    )
    context = _context(prompt)
    # The proposal is injected with the change's files: the section points to it, once.
    assert "It is `openspec/changes/add-auth/proposal.md`, in `<file_injections>` below." in context
    assert context.count("Users need accounts.") == 1
    assert "- **Stories**: 2 — completed 1, failed 0" in context
