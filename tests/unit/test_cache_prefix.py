"""The cacheable-prefix meter and the cache-aware delivery, on a real composed workspace."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from _prompt_workspace import STORY_1_2, make_workspace
from promptdeck.core.cost.prefix import common_prefix_bytes, compose_sequence, measure_cache
from promptdeck.core.errors import UsageError
from promptdeck.core.layers.composer import compose_system_instruction
from promptdeck.core.layers.delivery import SYSTEM_LAYERS, check_delivery
from promptdeck.core.layers.model import system_text
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest

PHASES = ("kickoff", "dev", "review")


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = make_workspace(tmp_path, {"AGENTS.md": "# Rules\n\n- Keep it small.\n"})
    return Workspace(root=root.resolve(), config=Config())


def _prefix(first: str, second: str) -> int:
    a, b = first.encode("utf-8"), second.encode("utf-8")
    length = 0
    while length < min(len(a), len(b)) and a[length] == b[length]:
        length += 1
    return length


@pytest.mark.parametrize("delivery", ["layered", "cache-aware"])
def test_shared_prefix_bytes_is_the_common_prefix_of_the_two_system_prompts(
    workspace: Workspace, delivery: str
) -> None:
    prompts = compose_sequence(workspace, "1-2", phases=PHASES, delivery=delivery)
    meter = measure_cache(workspace, "1-2", phases=PHASES, delivery=delivery)
    assert [(p.before, p.after) for p in meter.pairs] == [("kickoff", "dev"), ("dev", "review")]
    for pair, before, after in zip(meter.pairs, prompts, prompts[1:], strict=False):
        assert pair.shared_prefix_bytes == _prefix(before.system, after.system)
        assert pair.system_bytes == len(after.system.encode("utf-8"))


def _bulk(workspace: Workspace) -> None:
    """Make the story's file the bulk of the injection (a few KiB every phase shares)."""
    with (workspace.root / STORY_1_2).open("a", encoding="utf-8") as story:
        story.write("\n" + "\n".join(f"Background line {n}." for n in range(300)) + "\n")


def test_layered_delivery_parts_at_the_contract_and_flags_the_injection_behind_it(
    workspace: Workspace,
) -> None:
    _bulk(workspace)
    meter = measure_cache(workspace, "1-2", phases=PHASES, delivery="layered")
    stable = {layer.layer_id: layer.stable for layer in meter.layers}
    assert stable["Layer-0A"] and stable["Layer-1"]
    assert not stable["Layer-2"] and not stable["Layer-3"]
    assert meter.pairs[0].parts_at == "Layer-2"
    assert not meter.pairs[0].whole
    assert any(
        "volatile Layer-2 (Contract)" in flag and "injected files" in flag for flag in meter.flags
    )


def test_cache_aware_delivery_shares_the_whole_system_block_between_dev_and_review(
    workspace: Workspace,
) -> None:
    prompts = compose_sequence(workspace, "1-2", phases=("dev", "review"), delivery="cache-aware")
    meter = measure_cache(workspace, "1-2", phases=("dev", "review"), delivery="cache-aware")
    dev, review = prompts
    assert dev.system == review.system
    assert meter.pairs[0].shared_prefix_bytes == len(review.system.encode("utf-8"))
    assert meter.pairs[0].whole
    assert not any("volatile" in flag for flag in meter.flags)
    # The story's file is written by the phases (status, records): it heads the user turn with
    # the per-phase layers, out of the shared system block, and the delivery says so.
    assert STORY_1_2 not in dev.system and STORY_1_2 in dev.user
    assert dev.delivered is not None and dev.delivered.moved == (STORY_1_2,)
    assert "## Role" not in dev.system
    contract = next(layer for layer in review.layers if layer.layer_id == "Layer-2")
    assert review.user.startswith(contract.content)
    transfers = (
        str(review.compose_input.context_envelope["transfers"]) if review.compose_input else ""
    )
    assert transfers.strip() and transfers.strip() in review.user
    assert transfers.strip() not in review.system


def test_both_deliveries_send_the_same_eight_layers(workspace: Workspace) -> None:
    layered = compose_prompt(workspace, None, PromptRequest("1-2", "review", delivery="layered"))
    aware = compose_prompt(workspace, None, PromptRequest("1-2", "review", delivery="cache-aware"))
    assert layered.signature == aware.signature
    assert layered.system == system_text(layered.layers)
    # Every layer's text reaches the agent in the cache-aware delivery, in the layers' order.
    sent = aware.system + "\n\n" + aware.user
    positions = [sent.find(layer.content[:60]) for layer in aware.layers if layer.content]
    assert -1 not in positions
    heads = [
        aware.user.find(layer.content[:60])
        for layer in aware.layers
        if layer.content and layer.layer_id not in (*SYSTEM_LAYERS, "Layer-5")
    ]
    assert heads == sorted(heads)
    assert aware.messages[0]["content"] == aware.system
    assert aware.messages[-1]["content"] == aware.user
    assert aware.user.endswith(layered.user)


def test_the_composer_contract_is_untouched_by_the_delivery(workspace: Workspace) -> None:
    prompt = compose_prompt(workspace, None, PromptRequest("1-2", "dev", delivery="cache-aware"))
    assert prompt.compose_input is not None
    again = compose_system_instruction(prompt.compose_input, rules=prompt.rules)
    assert [layer.layer_id for layer in again] == [layer.layer_id for layer in prompt.layers]


def test_the_workspace_setting_chooses_the_delivery(workspace: Workspace) -> None:
    aware = replace(workspace, config=Config(delivery="cache-aware"))
    prompt = compose_prompt(aware, None, PromptRequest("1-2", "dev"))
    assert prompt.delivered is not None and prompt.delivered.delivery == "cache-aware"
    assert "## Contract" not in prompt.system


def test_a_prefix_below_the_minimum_is_flagged(workspace: Workspace) -> None:
    meter = measure_cache(
        workspace, "1-2", phases=("kickoff", "dev"), minimum_tokens=10**6, model="m-1"
    )
    assert any(
        "below the 1,000,000-token minimum" in flag and "m-1" in flag for flag in meter.flags
    )
    fine = measure_cache(workspace, "1-2", phases=("kickoff", "dev"), minimum_tokens=1)
    assert not any("minimum" in flag for flag in fine.flags)


def test_a_changed_file_is_named_where_two_prompts_part(workspace: Workspace) -> None:
    before = compose_prompt(workspace, None, PromptRequest("1-2", "dev", delivery="cache-aware"))
    context = "_bmad-output/planning-artifacts/sprint-project-context.md"
    path = workspace.root / context
    path.write_text(path.read_text(encoding="utf-8") + "\nA late note.\n", encoding="utf-8")
    after = compose_prompt(workspace, None, PromptRequest("1-2", "dev", delivery="cache-aware"))
    from promptdeck.core.cost.prefix import part_at

    shared = common_prefix_bytes(before.system.encode(), after.system.encode())
    assert part_at(after, shared) == f"file {context}"


def test_common_prefix_bytes_over_chunk_boundaries() -> None:
    base = b"x" * 10_000
    assert common_prefix_bytes(base, base) == 10_000
    assert common_prefix_bytes(base, base[:8191] + b"y" + base[8192:]) == 8191
    assert common_prefix_bytes(b"", base) == 0


def test_an_unknown_delivery_is_refused() -> None:
    with pytest.raises(UsageError, match="unknown delivery"):
        check_delivery("sideways")


def test_a_volatile_part_before_a_few_shared_bytes_is_not_flagged(tmp_path: Path) -> None:
    from promptdeck.core.cost.prefix import VOLATILE_FLAG_MIN_BYTES, measure_prompts

    small = make_workspace(tmp_path, {"AGENTS.md": "# Rules\n\n- Keep it small.\n"})
    workspace = Workspace(root=small.resolve(), config=Config())
    _bulk(workspace)
    prompts = compose_sequence(workspace, "1-2", phases=("kickoff", "dev"), delivery="layered")
    flagged = measure_prompts(prompts, None)
    assert any("volatile" in flag for flag in flagged.flags)
    # The same two prompts with only a few shared bytes behind the part where they differ.
    after = prompts[1]
    shared = [
        (segment.label, len(segment.text.encode("utf-8")))
        for segment in after.delivered.system  # type: ignore[union-attr]
    ]
    assert sum(size for _, size in shared) > VOLATILE_FLAG_MIN_BYTES
    short = [
        replace(
            prompt,
            delivered=replace(
                prompt.delivered,  # type: ignore[arg-type]
                system=tuple(
                    replace(segment, text=segment.text[:40])
                    for segment in prompt.delivered.system  # type: ignore[union-attr]
                ),
            ),
        )
        for prompt in prompts
    ]
    assert not any("volatile" in flag for flag in measure_prompts(short, None).flags)
