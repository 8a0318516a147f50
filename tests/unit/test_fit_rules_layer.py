"""Layer-0B, the workspace rules, left out by the user (``--exclude-layer 0B``, the app's
``R``) and proposed by the minimal-drop solver as its last tier: after every file, never
against the injection's error line, never when kept, never a required layer."""

from __future__ import annotations

from pathlib import Path

from _prompt_workspace import ARTIFACTS, FILES
from builders import make_workspace
from promptdeck.core.fit.solver import (
    LAYER_TIER,
    FitTarget,
    composed_measure,
    error_line_target,
    prompt_size,
    solve,
)
from promptdeck.core.injection import Selection
from promptdeck.core.injection.choices import (
    CHOICES_FILE,
    FileChoice,
    chosen_selection,
    remember_choice,
    story_choice,
    toggle_layer_remembered,
)
from promptdeck.core.project import Workspace
from promptdeck.core.prompt import ComposedPrompt, PromptRequest, compose_prompt
from promptdeck.core.run import confirmation_blocks, describe_plan, plan_run
from promptdeck.core.run.runner import left_out_layers
from promptdeck.core.vocabulary import RULES_LAYER, optional_layer

DISCOVERY = f"{ARTIFACTS}/sprint-1-2-discovery-notes.md"
RULES = "Keep functions small.\n" + "Write a test for every change.\n" * 120


def _workspace(tmp_path: Path, rules: str = RULES) -> Workspace:
    files = {**FILES, DISCOVERY: "d" * 3_000 + "\n", ".promptdeck/rules.md": rules}
    return make_workspace(tmp_path / "ws", files)


def _compose(workspace: Workspace, selection: Selection | None = None) -> ComposedPrompt:
    chosen = selection or Selection(discovery=True)
    request = PromptRequest("1-2", "dev", selection=chosen)
    return compose_prompt(workspace, None, request, count_tokens=False)


def _measure(workspace: Workspace, prompt: ComposedPrompt, target: FitTarget):  # type: ignore[no-untyped-def]
    def compose(request: PromptRequest) -> ComposedPrompt:
        return compose_prompt(workspace, None, request, count_tokens=target.unit == "tokens")

    return composed_measure(compose, prompt.request, target)


def _rules_layer(prompt: ComposedPrompt):  # type: ignore[no-untyped-def]
    return next(layer for layer in prompt.layers if layer.layer_id == RULES_LAYER)


def test_only_layer_0b_may_be_left_out() -> None:
    for text in ("0B", "0b", "Layer-0B", "layer-0b", " 0B "):
        assert optional_layer(text) == RULES_LAYER
    for text in ("0A", "1", "Layer-5", "", "rules"):
        assert optional_layer(text) is None


def test_a_left_out_rules_layer_is_empty_said_and_recorded(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    whole = _compose(workspace)
    left = _compose(workspace, Selection(discovery=True, left_out_layers=(RULES_LAYER,)))
    layer = _rules_layer(left)
    assert layer.content == "" and layer.left_out and layer.absence == "left out"
    assert layer.to_dict(content=False)["leftOut"] is True
    assert "Keep functions small." not in left.system
    assert "Keep functions small." in whole.system
    assert any("Layer-0B" in w and "left out by your choice" in w for w in left.warnings)
    # The other layers are the same.
    same = [(a.layer_id, a.sha256) for a in whole.layers if a.layer_id != RULES_LAYER]
    assert same == [(b.layer_id, b.sha256) for b in left.layers if b.layer_id != RULES_LAYER]
    # The confirmation and the run record say so.
    plan = describe_plan(
        workspace, plan_run(workspace, left, agent="replay", dry_run=True), agent="replay"
    )
    blocks = {block.kind: block.lines for block in confirmation_blocks(plan)}
    assert any("left out by you: Layer-0B" in line for line in blocks["choices"])
    rows = left_out_layers(left)
    assert rows == (
        {
            "path": ".promptdeck/rules.md",
            "category": "layer",
            "status": "excluded",
            "why": "left out by you",
            "layer": RULES_LAYER,
        },
    )
    assert left_out_layers(whole) == ()


def test_the_choice_is_remembered_like_a_file_choice(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    root = workspace.root
    toggle_layer_remembered(root, "1-2", "0B")
    assert story_choice(root, "1-2")[0].layers == (RULES_LAYER,)
    assert '"exclude_layers"' in (root / CHOICES_FILE).read_text(encoding="utf-8")
    assert _rules_layer(_compose(workspace)).left_out
    # Put back for this command (--include-layer 0B) wins over what is remembered.
    selection, _ = chosen_selection(root, "1-2", Selection(put_back_layers=(RULES_LAYER,)))
    assert selection.left_out_layers == ()
    # Again: back in, and the story is forgotten.
    toggle_layer_remembered(root, "1-2", "Layer-0B")
    assert story_choice(root, "1-2")[0] == FileChoice()
    assert not _rules_layer(_compose(workspace)).left_out
    # A required layer named in the state file is ignored.
    (root / CHOICES_FILE).write_text(
        '{"version": 1, "stories": {"1-2": {"exclude_layers": ["Layer-1", "0B"]}}}'
    )
    assert story_choice(root, "1-2")[0].layers == (RULES_LAYER,)


def test_files_go_before_the_rules_layer(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    prompt = _compose(workspace)
    before = prompt_size(prompt, "bytes")
    # The discovery file alone makes it fit: the rules stay.
    target = FitTarget(before - 2_000, "bytes", "test")
    answer = solve(prompt, target, _measure(workspace, prompt, target))
    assert [d.path for d in answer.drop] == [DISCOVERY]


def test_the_rules_layer_is_proposed_last_and_applying_it_gives_the_size(
    tmp_path: Path,
) -> None:
    workspace = _workspace(tmp_path)
    prompt = _compose(workspace)
    before = prompt_size(prompt, "bytes")
    rules_bytes = _rules_layer(prompt).bytes
    # More than every file can give: the rules have to go too.
    target = FitTarget(before - 3_100 - rules_bytes // 2, "bytes", "test")
    measure = _measure(workspace, prompt, target)
    answer = solve(prompt, target, measure)
    assert answer.fits and answer.smallest
    assert {d.path for d in answer.drop} == {DISCOVERY, RULES_LAYER}
    layer = next(d for d in answer.drop if d.layer)
    assert layer.tier == LAYER_TIER and layer.category == "layer"
    lines = answer.lines()
    assert "the workspace rules" in lines[0]
    assert any(line.strip().startswith("--exclude-layer 0B") for line in lines)
    assert answer.to_dict()["drop"][-1]["option"] in (
        "--exclude-layer 0B",
        f"--exclude {DISCOVERY}",
    )
    # Applying it (remembered, composed again) gives exactly the predicted size.
    remember_choice(workspace.root, "1-2", FileChoice(excluded=(DISCOVERY,), layers=(RULES_LAYER,)))
    assert prompt_size(_compose(workspace), "bytes") == answer.size_after <= target.limit
    # Kept by the user, the rules are never proposed: nothing else fits.
    kept = solve(prompt, target, measure, keep=["0B"])
    assert not kept.fits
    assert (RULES_LAYER, "you chose to keep it") in kept.kept


def test_the_rules_layer_never_counts_toward_the_error_line(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    prompt = _compose(workspace)
    target = error_line_target(prompt)
    answer = solve(prompt, target, _measure(workspace, prompt, target))
    assert all(not d.layer for d in answer.drop)


def test_missing_rules_are_nothing_to_propose(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", {**FILES, DISCOVERY: "d" * 3_000 + "\n"})
    prompt = _compose(workspace)
    assert _rules_layer(prompt).missing
    target = FitTarget(1_000, "bytes", "test")
    answer = solve(prompt, target, _measure(workspace, prompt, target))
    assert not answer.fits and all(not d.layer for d in answer.drop)
