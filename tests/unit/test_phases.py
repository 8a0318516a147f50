"""The six phases (seed 002): contracts, policies, transfers, and context isolation."""

from __future__ import annotations

from pathlib import Path

import pytest
from _prompt_workspace import CHANGE, STORY_1_2, make_workspace
from promptdeck.core.errors import UsageError
from promptdeck.core.phases.table import PHASE_NAMES, PHASES, SIGNAL_SPECS, get_phase, signal_specs
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import ComposedPrompt, FailureInfo, PromptRequest


def compose(root: Path, story: str, phase: str, **request: object) -> ComposedPrompt:
    workspace = open_workspace(root)
    return compose_prompt(
        workspace,
        load_catalog(workspace),
        PromptRequest(story, phase=phase, **request),  # type: ignore[arg-type]
        count_tokens=False,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def layer(prompt: ComposedPrompt, layer_id: str) -> str:
    return next(x.content for x in prompt.layers if x.layer_id == layer_id)


# --- definitions ------------------------------------------------------------------------------


def test_six_phases_in_flow_order() -> None:
    assert PHASE_NAMES == ("kickoff", "dev", "review", "failure", "uat", "retro")
    assert {p.name for p in PHASES if p.required} == {"dev", "review"}
    assert {p.name for p in PHASES if not p.blocking} == {"kickoff", "failure", "uat", "retro"}
    assert {p.name for p in PHASES if p.scope == "epic"} == {"uat", "retro"}


def test_unknown_phase_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown phase 'deploy'"):
        get_phase("deploy")


@pytest.mark.parametrize(
    ("phase", "lines"),
    [
        ("kickoff", ["KICKOFF COMPLETE: {id}"]),
        ("dev", ["IMPLEMENTATION COMPLETE: {id}", "IMPLEMENTATION BLOCKED: {id} - {reason}"]),
        (
            "review",
            [
                "REVIEW PASSED: {id}",
                "REVIEW PASSED WITH FIXES: {id} - Fixed {count} issues",
                "REVIEW FAILED: {id} - {reason}",
            ],
        ),
        ("failure", ["ANALYSIS COMPLETE: {id} - {recommendation}"]),
        ("uat", ["UAT COMPLETE: Epic {id}"]),
        ("retro", ["RETRO COMPLETE: Epic {id}"]),
    ],
)
def test_each_phase_contract_lists_its_signals(phase: str, lines: list[str]) -> None:
    specs = get_phase(phase).contract_signals("bmad")
    assert [spec.template for spec in specs] == lines


def test_openspec_dev_is_told_the_promise_tags_and_accepts_both_families() -> None:
    dev = get_phase("dev")
    assert [s.template for s in dev.contract_signals("openspec")] == [
        "<promise>COMPLETE</promise>",
        "<promise>FAILED: {reason}</promise>",
    ]
    assert {s.family for s in dev.signals} == {"phase", "promise"}
    assert {s.family for s in get_phase("review").signals} == {"phase"}


@pytest.mark.parametrize("spec", SIGNAL_SPECS, ids=lambda s: s.kind)
def test_every_signal_pattern_matches_its_example_and_not_a_sentence(spec: object) -> None:
    from promptdeck.core.phases.table import SignalSpec

    assert isinstance(spec, SignalSpec)
    ident = "add-auth:2" if "Epic" not in spec.template else "1"
    line = spec.example(ident)
    found = spec.pattern.match(line)
    assert found is not None
    if "id" in spec.pattern.groupindex:
        assert found.group("id") == ident
    assert spec.pattern.match(f"  {line}  ")
    assert not spec.pattern.match(f"I will print {line} when done")
    assert spec.outcome in ("success", "failure", "info")


def test_signal_outcomes() -> None:
    outcome = {spec.kind: spec.outcome for spec in SIGNAL_SPECS}
    assert outcome["implementation-blocked"] == "failure"
    assert outcome["review-failed"] == "failure"
    assert outcome["promise-failed"] == "failure"
    assert outcome["review-passed-with-fixes"] == "success"
    assert outcome["analysis-complete"] == "info"
    assert signal_specs("review") == get_phase("review").signals
    assert not SIGNAL_SPECS[1].pattern.match("REVIEW PASSED WITH FIXES: 1-2 - Fixed 2 issues")


def test_review_passed_does_not_match_with_fixes() -> None:
    passed = next(s for s in SIGNAL_SPECS if s.kind == "review-passed")
    assert not passed.pattern.match("REVIEW PASSED WITH FIXES: 1-2 - Fixed 2 issues")


@pytest.mark.parametrize("name", PHASE_NAMES)
def test_composed_contract_shows_every_signal_of_the_phase(root: Path, name: str) -> None:
    prompt = compose(root, "1-2", name)
    contract = layer(prompt, "Layer-2")
    ident = "1" if get_phase(name).scope == "epic" else "1-2"
    for spec in get_phase(name).contract_signals("bmad"):
        assert f"`{spec.display(ident)}`" in contract


# --- apply policy ------------------------------------------------------------------------------


def test_apply_policies(root: Path) -> None:
    dev = layer(compose(root, "1-2", "dev"), "Layer-6")
    assert "`git add -A`" in dev and "requiresValidation: yes" in dev
    review = layer(compose(root, "1-2", "review"), "Layer-6")
    assert "Stage your fixes with `git add -A`" in review
    for name in ("uat", "retro"):
        text = layer(compose(root, "1-2", name), "Layer-6")
        assert "Write new files only" in text and "Stage nothing" in text
    for name in ("kickoff", "failure"):
        text = layer(compose(root, "1-2", name), "Layer-6")
        assert "end of the story file; change no other file" in " ".join(text.split())
        assert "requiresValidation: no" in text


def test_verification_commands_come_from_config(root: Path) -> None:
    (root / ".promptdeck" / "config.toml").write_text('[verify]\ncommands = ["make check"]\n')
    prompt = compose(root, "1-2", "dev")
    assert "- `make check`" in layer(prompt, "Layer-6")
    assert "- `make check`" in layer(prompt, "Layer-5")


# --- transfers ---------------------------------------------------------------------------------


def test_review_receives_the_story_file_with_its_dev_agent_record(root: Path) -> None:
    story = root / STORY_1_2
    story.write_text(story.read_text() + "\n## Dev Agent Record\n\nUsed bcrypt.\n")
    prompt = compose(root, "1-2", "review")
    context = layer(prompt, "Layer-5")
    assert "including its Dev Agent Record" in " ".join(context.split())
    assert f'<file path="{STORY_1_2}">' in context
    assert "Used bcrypt." in context
    assert "`git diff --staged`" in context


def test_failure_analysis_receives_type_signal_and_message(root: Path) -> None:
    failure = FailureInfo.for_phase("dev", "Cannot resolve circular dependency")
    prompt = compose(root, "1-2", "failure", failure=failure)
    context = layer(prompt, "Layer-5")
    assert "- **Type**: dev phase" in context
    assert "- **Signal**: IMPLEMENTATION BLOCKED" in context
    assert '- **Message**: "Cannot resolve circular dependency"' in context
    assert not any("without failure information" in w for w in prompt.warnings)


def test_failure_analysis_without_information_warns(root: Path) -> None:
    prompt = compose(root, "1-2", "failure")
    assert any("without failure information" in w for w in prompt.warnings)
    assert "No failure information was given" in layer(prompt, "Layer-5")


@pytest.mark.parametrize("name", ["retro", "uat"])
def test_epic_phases_receive_every_story_file_of_the_epic(root: Path, name: str) -> None:
    prompt = compose(root, "1-2", name)
    included = {f.path for f in prompt.injection.included()}
    assert "_bmad-output/implementation-artifacts/1-1-user-login.md" in included
    assert STORY_1_2 in included
    context = layer(prompt, "Layer-5")
    assert "- 1-3: Password reset (backlog) — no story file" in context
    assert "All 3 story files of epic 1" in " ".join(context.split())
    assert prompt.user.startswith(("Run the retrospective of epic 1", "Write the UAT plan"))


def test_retro_of_an_openspec_change_uses_the_change_as_epic(root: Path) -> None:
    prompt = compose(root, "add-auth:2", "retro")
    assert "`RETRO COMPLETE: Epic add-auth`" in layer(prompt, "Layer-2")
    assert "docs/sprints/epic-add-auth-retro.md" in layer(prompt, "Layer-5")
    assert {f"{CHANGE}/tasks.md", f"{CHANGE}/proposal.md"} <= {
        f.path for f in prompt.injection.included()
    }


# --- isolation (seed 002's three tests) ---------------------------------------------------------


@pytest.mark.parametrize("story", ["1-2", "add-auth:2"])
@pytest.mark.parametrize("mode", ["create", "optimize"])
def test_dev_prompt_has_no_review_language(root: Path, story: str, mode: str) -> None:
    prompt = compose(root, story, "dev", mode=mode)
    for text in (prompt.system, prompt.user):
        assert "code review" not in text.lower()
        assert "severity" not in text.lower()


def test_review_prompt_sees_the_code_for_the_first_time(root: Path) -> None:
    prompt = compose(root, "1-2", "review")
    assert "You are seeing this code for the first time" in prompt.system
    assert "`git diff --staged`" in layer(prompt, "Layer-3")
    assert "severity" in prompt.system  # the review policy is the review's own


def test_kickoff_is_told_to_append_its_insights_to_the_story_file(root: Path) -> None:
    prompt = compose(root, "1-2", "kickoff")
    entry = layer(prompt, "Layer-3")
    assert "`## Story Kickoff Insights`" in entry
    assert "end of the story file" in " ".join(entry.split())
