"""The minimal drop (core/fit/solver.py), the advice built on it, and the per-file choices
(core/injection/choices.py): what is proposed fits, is minimal, names only files really in the
prompt, and applying it gives exactly the size it predicts."""

from __future__ import annotations

import json
import os
from itertools import combinations
from pathlib import Path

import pytest
from _prompt_workspace import ARTIFACTS, FILES, STORY_1_2
from builders import make_workspace
from hypothesis import given, settings
from hypothesis import strategies as st
from promptdeck.core.errors import UsageError
from promptdeck.core.fit.advice import size_options
from promptdeck.core.fit.solver import (
    EXACT_LIMIT,
    LAYER_TIER,
    Droppable,
    FitTarget,
    composed_measure,
    error_line_target,
    minimal_drop,
    parse_target,
    prompt_size,
    solve,
)
from promptdeck.core.injection import Selection
from promptdeck.core.injection.choices import (
    CHOICES_FILE,
    FileChoice,
    remember_choice,
    story_choice,
    toggle_remembered,
)
from promptdeck.core.project import Workspace
from promptdeck.core.prompt import ComposedPrompt, PromptRequest, compose_prompt
from promptdeck.core.run import confirmation_blocks, describe_plan, plan_run
from promptdeck.core.vocabulary import RULES_LAYER

DISCOVERY = f"{ARTIFACTS}/sprint-1-2-discovery-notes.md"
TECH_SPEC = f"{ARTIFACTS}/tech-spec-1-2-registration.md"
ADDED = "docs/architecture.md"
CONTEXT = "_bmad-output/planning-artifacts/sprint-project-context.md"
EVERYTHING = Selection(discovery=True, tech_spec=True, additional_files=(ADDED,))


def _workspace(tmp_path: Path, **config: object) -> Workspace:
    files = {
        **FILES,
        DISCOVERY: "d" * 9_000 + "\n",
        TECH_SPEC: "t" * 6_000 + "\n",
        ADDED: "# Architecture\n" + "a" * 4_000 + "\n",
    }
    return make_workspace(tmp_path / "ws", files, **config)


def _compose(workspace: Workspace, selection: Selection = EVERYTHING, **kw: bool) -> ComposedPrompt:
    return compose_prompt(workspace, None, PromptRequest("1-2", "dev", selection=selection), **kw)


def _measure(workspace: Workspace, prompt: ComposedPrompt, target: FitTarget):  # type: ignore[no-untyped-def]
    counted = target.unit == "tokens"

    def compose(request: PromptRequest) -> ComposedPrompt:
        return compose_prompt(workspace, None, request, count_tokens=counted)

    return composed_measure(compose, prompt.request, target)


def test_targets_read_as_bytes_tokens_or_a_share_of_the_window() -> None:
    assert parse_target("120KiB", 200_000) == FitTarget(122_880, "bytes", "120KiB")
    assert parse_target("150000", 200_000).limit == 150_000
    assert parse_target("30000t", 200_000) == FitTarget(30_000, "tokens", "30000t")
    share = parse_target("80%", 200_000)
    assert (share.limit, share.unit) == (160_000, "tokens")
    for bad in ("", "lots", "-3t", "120%", "0%"):
        with pytest.raises(UsageError):
            parse_target(bad, 200_000)


def test_the_answer_fits_is_minimal_and_applying_it_gives_the_predicted_size(
    tmp_path: Path,
) -> None:
    workspace = _workspace(tmp_path)
    prompt = _compose(workspace, count_tokens=False)
    before = prompt_size(prompt, "bytes")
    # Room for the story and the layers, not for the 9 KB discovery file with the rest.
    target = FitTarget(before - 8_000, "bytes", "test")
    answer = solve(prompt, target, _measure(workspace, prompt, target))
    assert answer.fits and answer.smallest
    assert [item.path for item in answer.drop] == [DISCOVERY]
    assert "every subset of the 4 file(s) was searched" in answer.proof
    # Applying it, as a user does (remembered, then composed again), gives exactly that size.
    remember_choice(workspace.root, "1-2", FileChoice(excluded=(DISCOVERY,)))
    applied = _compose(workspace, count_tokens=False)
    assert prompt_size(applied, "bytes") == answer.size_after <= target.limit
    row = {f.path: f for f in applied.injection.files}[DISCOVERY]
    assert (row.status, row.reason) == ("excluded", "left out by you")


def test_lower_tiers_go_first_and_kept_files_never(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    prompt = _compose(workspace, count_tokens=False)
    before = prompt_size(prompt, "bytes")
    # Either tier-0 file alone would do: the one that gives up least is proposed.
    target = FitTarget(before - 4_000, "bytes", "test")
    measure = _measure(workspace, prompt, target)
    answer = solve(prompt, target, measure)
    assert [d.path for d in answer.drop] == [TECH_SPEC]
    kept = solve(prompt, target, measure, keep=[TECH_SPEC, DISCOVERY])
    # The project context (tier 1) alone is too small; the added file (tier 2) is needed.
    assert [d.path for d in kept.drop] == [ADDED]
    assert "your priorities" not in kept.proof
    assert "only discovery, tech-spec files were needed" in answer.proof
    assert (DISCOVERY, "you chose to keep it") in kept.kept
    assert (STORY_1_2, "the story's own file") in kept.kept
    assert all(d.path != STORY_1_2 for d in answer.drop + kept.drop)


def test_nothing_fits_when_the_story_alone_is_over(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    prompt = _compose(workspace, count_tokens=False)
    answer = solve(
        prompt,
        FitTarget(1_000, "bytes", "1000"),
        _measure(workspace, prompt, FitTarget(1_000, "bytes", "1000")),
    )
    assert not answer.fits and answer.drop == ()
    assert "no set of files it may leave out makes it fit" in answer.lines()[0]


def test_a_token_target_is_checked_by_composing(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    prompt = _compose(workspace)
    target = FitTarget(prompt_size(prompt, "tokens") - 1_500, "tokens", "test")
    answer = solve(prompt, target, _measure(workspace, prompt, target))
    assert answer.fits and answer.drop
    excluded = tuple(d.path for d in answer.drop)
    applied = _compose(workspace, Selection(**{**EVERYTHING.__dict__, "excluded": excluded}))
    assert prompt_size(applied, "tokens") == answer.size_after <= target.limit
    for item in answer.drop:
        back = tuple(p for p in excluded if p != item.path)
        again = _compose(workspace, Selection(**{**EVERYTHING.__dict__, "excluded": back}))
        assert prompt_size(again, "tokens") > target.limit


def test_the_refusal_names_the_files_and_its_size_is_what_applying_gives(
    tmp_path: Path,
) -> None:
    # The story and layers fit in 16 KB; the optional files push the injection over.
    workspace = _workspace(tmp_path, injection_error_bytes=12_000, injection_warn_bytes=8_000)
    prompt = _compose(workspace, count_tokens=False)
    assert prompt.injection.level == "error"
    options = size_options(workspace, prompt)
    assert len(options) == 1
    option = options[0]
    assert set(option.paths) <= {DISCOVERY, TECH_SPEC, ADDED, CONTEXT}
    assert all(path in option.action for path in option.paths)
    applied = _compose(
        workspace,
        Selection(**{**EVERYTHING.__dict__, "excluded": option.paths}),
        count_tokens=False,
    )
    assert applied.injection.level != "error"
    assert applied.injection.size_bytes == option.size_after
    for path in option.paths:
        back = tuple(p for p in option.paths if p != path)
        again = _compose(
            workspace, Selection(**{**EVERYTHING.__dict__, "excluded": back}), count_tokens=False
        )
        assert again.injection.level == "error"
    plan = describe_plan(workspace, plan_run(workspace, prompt, agent="replay"), agent="replay")
    refusal = confirmation_blocks(plan)[-1].lines
    assert any(line.startswith("  • leave out ") for line in refusal)
    assert error_line_target(prompt).limit == 12_000


def test_the_confirmation_lists_the_users_choices(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    remember_choice(workspace.root, "1-2", FileChoice(excluded=(TECH_SPEC,)))
    prompt = _compose(workspace)
    plan = describe_plan(
        workspace, plan_run(workspace, prompt, agent="replay", dry_run=True), agent="replay"
    )
    blocks = {block.kind: block.lines for block in confirmation_blocks(plan)}
    assert blocks["choices"][0] == "your file choices:"
    assert blocks["choices"][1].startswith(f"  left out by you: {TECH_SPEC} (")
    assert plan.to_dict()["choices"] == [blocks["choices"][1].strip()]


def test_the_story_file_stays_in_whatever_is_asked(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    prompt = _compose(workspace, Selection(excluded=(STORY_1_2,)), count_tokens=False)
    row = {f.path: f for f in prompt.injection.files}[STORY_1_2]
    assert row.included
    assert f"{STORY_1_2} is the story's own file: it stays in" in " ".join(prompt.warnings)


def test_an_include_takes_in_a_file_a_toggle_leaves_out(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    prompt = _compose(workspace, Selection(included=(DISCOVERY,)), count_tokens=False)
    rows = {f.path: f for f in prompt.injection.files}
    assert rows[DISCOVERY].included and rows[DISCOVERY].reason == "included by you"
    assert not rows[TECH_SPEC].included
    # A path no toggle knows is added like --file.
    prompt = _compose(workspace, Selection(included=(ADDED,)), count_tokens=False)
    added = {f.path: f for f in prompt.injection.files}[ADDED]
    assert added.included and added.category == "additional"


def test_space_twice_is_no_change(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    root = workspace.root
    assert toggle_remembered(root, "1-2", TECH_SPEC, False) == FileChoice(included=(TECH_SPEC,))
    assert toggle_remembered(root, "1-2", TECH_SPEC, True) == FileChoice()
    assert toggle_remembered(root, "1-2", CONTEXT, True) == FileChoice(excluded=(CONTEXT,))
    assert toggle_remembered(root, "1-2", CONTEXT, False) == FileChoice()
    assert json.loads((root / CHOICES_FILE).read_text())["stories"] == {}


def test_a_remembered_file_that_is_gone_is_dropped_with_a_note(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    remember_choice(workspace.root, "1-2", FileChoice(excluded=(TECH_SPEC, DISCOVERY)))
    (workspace.root / TECH_SPEC).unlink()
    prompt = _compose(workspace, count_tokens=False)
    assert any(
        w.startswith(f"{TECH_SPEC}: remembered as left out of story 1-2, but it no longer exists")
        for w in prompt.warnings
    )
    assert story_choice(workspace.root, "1-2") == (FileChoice(excluded=(DISCOVERY,)), ())


def test_the_state_is_never_written_through_a_symlink(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    outside = tmp_path / "outside.json"
    outside.write_text("keep me")
    state = workspace.root / CHOICES_FILE
    state.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, state)
    remember_choice(workspace.root, "1-2", FileChoice(excluded=(DISCOVERY,)))
    assert outside.read_text() == "keep me"
    assert not state.is_symlink() and "1-2" in json.loads(state.read_text())["stories"]
    # A .promptdeck folder that is a symlink out of the project is refused.
    other = make_workspace(tmp_path / "other", {"README.md": "x\n"})
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", other.root / ".promptdeck")
    with pytest.raises(OSError):
        remember_choice(other.root, "1-2", FileChoice(excluded=("a.md",)))
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_broken_state_file_is_one_note_not_a_failure(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    (workspace.root / ".promptdeck").mkdir(exist_ok=True)
    (workspace.root / CHOICES_FILE).write_text("{not json")
    prompt = _compose(workspace, count_tokens=False)
    assert any("not valid JSON" in w for w in prompt.warnings)


# The solver on random sizes: a pure additive measure stands in for composing.
_ITEMS = st.lists(
    st.tuples(st.integers(1, 5_000), st.integers(0, 2)), min_size=0, max_size=EXACT_LIMIT + 6
)


@settings(max_examples=150, deadline=None)
@given(
    items=_ITEMS,
    fixed=st.integers(0, 20_000),
    limit=st.integers(0, 60_000),
    rules=st.integers(0, 5_000),
)
def test_the_drop_fits_and_no_proper_subset_does(
    items: list[tuple[int, int]], fixed: int, limit: int, rules: int
) -> None:
    pool = [
        Droppable(f"f{i:02}.md", "discovery", tier, size, None)
        for i, (size, tier) in enumerate(items)
    ]
    if rules:
        # The workspace rules layer, the last tier (0: the workspace has no rules).
        pool.append(Droppable(RULES_LAYER, "layer", LAYER_TIER, rules, None, layer=True))
    before = fixed + sum(d.bytes for d in pool)
    target = FitTarget(limit, "bytes", "test")
    sizes = {d.path: d.bytes for d in pool}

    def measure(paths: tuple[str, ...]) -> tuple[int, bool]:
        return before - sum(sizes[p] for p in paths), True

    found = minimal_drop(pool, before, target, measure)
    if before <= limit:
        assert found is not None and found[0] == ()
        return
    if found is None:
        # Only when even every file is not enough.
        assert fixed > limit
        return
    drop, size, smallest, _ = found
    assert size == measure(tuple(d.path for d in drop))[0] <= limit
    # Minimal: putting back any one file breaks it (and sizes only shrink with more left out).
    for item in drop:
        rest = tuple(d.path for d in drop if d is not item)
        assert measure(rest)[0] > limit
    # Priorities: no file above the lowest tier that can make it fit on its own.
    ceiling = max(d.tier for d in drop)
    lower = [d for d in pool if d.tier < ceiling]
    assert before - sum(d.bytes for d in lower) > limit
    # Fewest within that tier ceiling: no fewer files of those tiers fit.
    allowed = sorted((d.bytes for d in pool if d.tier <= ceiling), reverse=True)
    assert before - sum(allowed[: len(drop) - 1]) > limit
    # Called smallest exactly when no fewer files fit, whatever their priority.
    every = sorted((d.bytes for d in pool), reverse=True)
    assert smallest == (before - sum(every[: len(drop) - 1]) > limit)


@settings(max_examples=100, deadline=None)
@given(
    items=st.lists(st.integers(1, 3_000), min_size=0, max_size=8),
    rules=st.integers(1, 3_000),
    limit=st.integers(0, 30_000),
    over_error=st.integers(0, 8_000),
)
def test_the_rules_layer_goes_last_and_never_toward_the_error_line(
    items: list[int], rules: int, limit: int, over_error: int
) -> None:
    files = [Droppable(f"f{i}.md", "additional", 2, size, None) for i, size in enumerate(items)]
    layer = Droppable(RULES_LAYER, "layer", LAYER_TIER, rules, None, layer=True)
    pool = [*files, layer]
    before = 4_000 + sum(items) + rules
    target = FitTarget(limit, "bytes", "test")

    def measure(paths: tuple[str, ...]) -> tuple[int, bool]:
        size = before - sum(d.bytes for d in pool if d.path in paths)
        injection_off = sum(d.bytes for d in files if d.path in paths)
        return size, injection_off >= over_error

    found = minimal_drop(pool, before, target, measure, over_error)
    files_alone = before - sum(items) <= limit and sum(items) >= over_error
    if found is None:
        # Nothing fits: not even every file and the rules (or the files miss the error line).
        assert before - sum(items) - rules > limit or sum(items) < over_error
        return
    drop = found[0]
    assert sum(d.injection_bytes for d in drop) >= over_error
    assert found[1] <= limit
    if files_alone:
        assert layer not in drop


@settings(max_examples=40, deadline=None)
@given(items=st.lists(st.integers(1, 3_000), min_size=1, max_size=10), limit=st.integers(0, 20_000))
def test_the_exact_search_agrees_with_brute_force(items: list[int], limit: int) -> None:
    pool = [Droppable(f"f{i}.md", "discovery", 0, size, None) for i, size in enumerate(items)]
    before = 5_000 + sum(items)
    target = FitTarget(limit, "bytes", "test")

    def measure(paths: tuple[str, ...]) -> tuple[int, bool]:
        return before - sum(d.bytes for d in pool if d.path in paths), True

    found = minimal_drop(pool, before, target, measure)
    fewest = next(
        (
            k
            for k in range(len(pool) + 1)
            if any(measure(tuple(d.path for d in c))[0] <= limit for c in combinations(pool, k))
        ),
        None,
    )
    if fewest is None:
        assert found is None
    else:
        assert found is not None and len(found[0]) == fewest


def test_a_toggle_with_no_files_says_so(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    prompt = _compose(workspace, count_tokens=False)
    assert prompt.injection.toggle_note("discovery") == ""
    (workspace.root / DISCOVERY).unlink()
    prompt = _compose(workspace, count_tokens=False)
    assert prompt.injection.toggle_note("discovery") == "no discovery files for this story"


def test_an_answer_within_the_priorities_is_not_called_smallest_when_fewer_files_fit() -> None:
    # Three small discovery files are given up before one large hand-added file: the answer
    # keeps to the priorities, and says it is not the fewest files overall.
    pool = [
        *(Droppable(f"d{i}.md", "discovery", 0, 1_000, None) for i in range(3)),
        Droppable("big.md", "additional", 2, 5_000, None),
    ]
    before = 10_000
    target = FitTarget(before - 2_500, "bytes", "test")

    def measure(paths: tuple[str, ...]) -> tuple[int, bool]:
        return before - sum(d.bytes for d in pool if d.path in paths), True

    found = minimal_drop(pool, before, target, measure)
    assert found is not None
    drop, _, smallest, proof = found
    assert sorted(d.path for d in drop) == ["d0.md", "d1.md", "d2.md"]
    assert smallest is False
    assert "every subset" not in proof and "not proved smallest" in proof
    assert "fewest among the 3 lower-priority file(s) searched" in proof


def test_an_answer_within_the_priorities_that_is_fewest_overall_says_how_far_it_looked() -> None:
    pool = [
        Droppable("d0.md", "discovery", 0, 3_000, None),
        Droppable("big.md", "additional", 2, 5_000, None),
    ]
    before = 10_000
    target = FitTarget(before - 2_500, "bytes", "test")

    def measure(paths: tuple[str, ...]) -> tuple[int, bool]:
        return before - sum(d.bytes for d in pool if d.path in paths), True

    found = minimal_drop(pool, before, target, measure)
    assert found is not None and found[2] is True
    assert "smallest: every subset of the 2 file(s) was searched" in found[3]
