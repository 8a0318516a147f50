"""What changed between two prompts: layers found again in a run's system.md by their
hashes, files by their blocks, and line diffs of what changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.diff import PromptSide, compare, diff_text, side_of_prompt, split_layers
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest
from promptdeck.core.tokens.counter import get_counter

STORY = "_bmad-output/implementation-artifacts/1-1-parse-csv-statement-rows.md"


def _compose(root: Path, **selection: bool) -> ComposedPrompt:
    workspace = open_workspace(root)
    catalog = load_catalog(workspace)
    request = PromptRequest(story_id="1-1", phase="dev", mode="create")
    return compose_prompt(workspace, catalog, request, counter=get_counter("o200k_base"))


@pytest.fixture
def root(tmp_path: Path, copy_demo: Callable[[Path], Path]) -> Path:
    return copy_demo(tmp_path / "ledgerline")


def test_layers_are_found_again_by_their_hashes(root: Path) -> None:
    prompt = _compose(root)
    meta = [{"id": layer.layer_id, "sha256": layer.sha256} for layer in prompt.layers]
    found = split_layers(prompt.system, meta)
    assert found == [(layer.layer_id, layer.content) for layer in prompt.layers]
    # A text that does not match its hashes is not cut at all.
    assert split_layers(prompt.system + "tampered", meta) is None


def test_a_changed_story_file_is_one_changed_part_with_its_lines(root: Path) -> None:
    before = _compose(root)
    story = root / STORY
    story.write_text(story.read_text(encoding="utf-8") + "\nA new acceptance line.\n")
    after = _compose(root)
    diff = compare(side_of_prompt(before, "before"), side_of_prompt(after, "after"))
    changed = {(part.kind, part.name): part for part in diff.changed}
    assert ("file", STORY) in changed
    part = changed[("file", STORY)]
    assert part.change == "changed" and part.new_bytes > part.old_bytes
    assert "+A new acceptance line." in part.lines
    # The file's own change does not show again inside the layer that holds it.
    assert all(
        kind != "layer" or "acceptance" not in "\n".join(p.lines)
        for (kind, _n), p in changed.items()
    )
    text = "\n".join(diff_text(diff))
    assert f"changed  file {STORY}" in text and "+A new acceptance line." in text


def test_added_and_removed_parts_and_the_same_prompt(root: Path) -> None:
    old = PromptSide("a", (("layer", "L1", "x"), ("file", "f.md", "content")))
    new = PromptSide("b", (("layer", "L1", "x"), ("file", "g.md", "other")))
    diff = compare(old, new)
    kinds = {part.name: part.change for part in diff.parts}
    assert kinds == {"L1": "same", "f.md": "removed", "g.md": "added"}
    same = compare(old, old)
    assert not same.changed and "the prompts are the same" in diff_text(same)[-1]
