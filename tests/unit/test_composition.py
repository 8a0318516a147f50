"""The picture of the prompt: blocks that add up to the system prompt, largest first, the
lines on the same scale, and a chart that fits its width."""

from __future__ import annotations

from pathlib import Path

import pytest
from promptdeck.core.demo.bundle import prepare_demo
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.composition import apportion, chart_lines, composition_of
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest
from promptdeck.core.tokens.counter import ARGV_LIMIT_BYTES, get_counter


@pytest.fixture(scope="module")
def prompt(tmp_path_factory: pytest.TempPathFactory) -> ComposedPrompt:
    root = prepare_demo(tmp_path_factory.mktemp("composition") / "ledgerline")
    workspace = open_workspace(root)
    catalog = load_catalog(workspace)
    request = PromptRequest(story_id="1-1", phase="dev", mode="create")
    return compose_prompt(workspace, catalog, request, counter=get_counter("o200k_base"))


def test_bytes_blocks_add_up_to_the_system_prompt_largest_first(prompt: ComposedPrompt) -> None:
    chart = composition_of(prompt, "bytes")
    assert chart.total == prompt.system_meter.bytes
    assert sum(block.size for block in chart.blocks) == chart.total
    sizes = [block.size for block in chart.blocks]
    assert sizes == sorted(sizes, reverse=True)
    included = [f for f in prompt.injection.files if f.status == "included"]
    files = [b for b in chart.blocks if b.kind == "file"]
    assert {b.label for b in files} == {f"file {f.path}" for f in included}
    assert dict(chart.lines) == {
        "warn": prompt.injection.warn_bytes,
        "argv": ARGV_LIMIT_BYTES,
        "error": prompt.injection.error_bytes,
    }
    assert not chart.estimated and chart.scale == prompt.injection.error_bytes


def test_token_blocks_are_counted_and_lines_are_estimated(prompt: ComposedPrompt) -> None:
    chart = composition_of(prompt, "tokens")
    assert chart.total == prompt.system_meter.tokens and chart.estimated
    # Token counts of parts need not add up exactly (boundaries), but nearly.
    assert abs(sum(block.size for block in chart.blocks) - chart.total) <= len(chart.blocks)
    argv = dict(chart.lines)["argv"]
    assert argv == round(ARGV_LIMIT_BYTES * chart.total / prompt.system_meter.bytes)


def test_apportion_gives_exactly_the_cells() -> None:
    assert apportion([5, 3, 2], 10) == [5, 3, 2]
    assert sum(apportion([7, 7, 7], 10)) == 10
    assert apportion([0, 0], 5) == [0, 0]


@pytest.mark.parametrize("width", [40, 80, 200])
def test_chart_lines_fit_and_the_bar_is_proportional(prompt: ComposedPrompt, width: int) -> None:
    chart = composition_of(prompt, "bytes")
    lines = chart_lines(chart, width)
    assert all(len(line) <= width for line in lines)
    bar = lines[1]
    filled = len(bar.rstrip("·"))
    assert filled == min(round(chart.total / chart.scale * width), width)
    assert lines[2].count("│") == 3 and "argv" in lines[3]
    assert lines[4].endswith(chart.blocks[0].label[-10:]) or "…" in lines[4]


def test_an_unknown_measure_is_refused(prompt: ComposedPrompt, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown measure"):
        composition_of(prompt, "lines")
