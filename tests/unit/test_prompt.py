"""compose_prompt: one ComposedPrompt is what every face shows and every agent receives."""

from __future__ import annotations

from pathlib import Path

import pytest
from _prompt_workspace import CHANGE, STORY_1_2, make_workspace
from promptdeck.core.errors import StoryNotFound, UsageError
from promptdeck.core.injection.model import Selection
from promptdeck.core.layers.model import JOINER, LAYER_IDS, signature, system_text
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest
from promptdeck.core.stories.model import Story, StoryCatalog, Task
from promptdeck.core.tokens.counter import TokenCounter


def fake_counter() -> TokenCounter:
    # One token per word: exact, fast and independent of the bundled encoder.
    class Fake:
        def encode_ordinary(self, text: str) -> list[int]:
            return [0] * len(text.split())

    return TokenCounter("o200k_base", builder=lambda _name: Fake())


def compose(root: Path, request: PromptRequest, *, count: bool = False) -> ComposedPrompt:
    workspace = open_workspace(root)
    return compose_prompt(
        workspace,
        load_catalog(workspace),
        request,
        counter=fake_counter(),
        count_tokens=count,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def test_system_is_the_eight_layers_joined(root: Path) -> None:
    prompt = compose(root, PromptRequest("1-2"))
    assert tuple(x.layer_id for x in prompt.layers) == LAYER_IDS
    assert prompt.system == system_text(prompt.layers)
    assert prompt.signature == signature(prompt.layers)
    assert prompt.messages == (
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.user},
    )


def test_layer_bytes_and_joiner_add_up_to_the_system_total(root: Path) -> None:
    prompt = compose(root, PromptRequest("1-2"), count=True)
    system_bytes = len(prompt.system.encode("utf-8"))
    assert prompt.system_meter.bytes == system_bytes
    assert sum(x.bytes for x in prompt.layers) + prompt.joiner.bytes == system_bytes
    # Layer-0B is empty (no rules), so seven layers and six joiners.
    assert prompt.joiner.bytes == 6 * len(JOINER)
    tokens = [x.tokens for x in prompt.layers]
    assert all(t is not None for t in tokens)
    assert sum(t or 0 for t in tokens) + (prompt.joiner.tokens or 0) == prompt.system_meter.tokens
    assert prompt.counted


def test_without_token_counts_everything_has_bytes_and_no_tokens(root: Path) -> None:
    prompt = compose(root, PromptRequest("1-2"))
    assert not prompt.counted
    assert prompt.system_meter.tokens is None and prompt.user_meter.tokens is None
    assert prompt.system_meter.bytes > 0


def test_same_request_same_prompt(root: Path) -> None:
    first = compose(root, PromptRequest("1-2"))
    second = compose(root, PromptRequest("1.2"))
    assert first.system == second.system
    assert first.signature == second.signature


def test_user_message_is_the_phase_task(root: Path) -> None:
    assert compose(root, PromptRequest("1-2")).user == "Implement story 1-2: User registration."
    review = compose(root, PromptRequest("add-auth:2", phase="review"))
    assert review.user == "Review the staged implementation of story add-auth:2: Login endpoint."


def test_context_layer_holds_story_transfers_then_injection(root: Path) -> None:
    prompt = compose(root, PromptRequest("1-2"))
    context = prompt.layers[6].content
    story_at = context.index("## Story 1-2: User registration")
    transfers_at = context.index("## Transfers")
    xml_at = context.index("<file_injections rule=")
    assert story_at < transfers_at < xml_at
    assert context.endswith(prompt.injection.text)
    assert prompt.layers[6].source == "input:contextEnvelope"


def test_openspec_dev_prompt_is_seed_003(root: Path) -> None:
    prompt = compose(root, PromptRequest("add-auth:2"))
    context = prompt.layers[6].content
    assert "- [ ] 2.1 Add POST /login" in context
    assert "1.1 Add the users table" not in context
    # Every scenario reaches the agent once: in the injected spec files, which the prompt
    # names with their requirements, rather than copied next to them.
    assert context.count("Scenario: Wrong password") == 1
    assert "`<promise>COMPLETE</promise>`" in prompt.layers[3].content  # Layer-2 contract
    assert "the id `" not in prompt.layers[3].content  # promise tags carry no id
    included = {f.path for f in prompt.injection.included()}
    assert {f"{CHANGE}/proposal.md", f"{CHANGE}/design.md"} <= included
    # tasks.md holds every story's group: the prompt carries this story's own, once.
    assert f"{CHANGE}/tasks.md" not in included


def test_selection_changes_the_injection(root: Path) -> None:
    with_context = compose(root, PromptRequest("1-2"))
    without = compose(root, PromptRequest("1-2", selection=Selection(project_context=False)))
    assert "Python 3.11, pytest" in with_context.system
    assert "Python 3.11, pytest" not in without.system
    added = compose(root, PromptRequest("1-2", selection=Selection(additional_files=("x.md",))))
    assert any(f.path == "x.md" and f.status == "missing" for f in added.injection.files)


def test_retry_reason_gives_the_retry_section_in_optimize(root: Path) -> None:
    retry = compose(root, PromptRequest("1-2", mode="optimize", retry_reason="db locked"))
    assert "> db locked" in retry.system
    assert "## Mode: optimize" in retry.system
    abnormal = compose(root, PromptRequest("1-2", mode="optimize"))
    assert "### Retry" not in abnormal.system
    assert "## Mode: optimize" in abnormal.system


def test_retry_reason_outside_optimize_is_a_usage_error(root: Path) -> None:
    with pytest.raises(UsageError, match="optimize"):
        compose(root, PromptRequest("1-2", retry_reason="x"))


def test_retry_reason_on_another_phase_warns(root: Path) -> None:
    prompt = compose(root, PromptRequest("1-2", phase="review", mode="optimize", retry_reason="x"))
    assert any("dev phase only" in w for w in prompt.warnings)


def test_learnings_join_the_dev_prompt_only_with_entries(root: Path) -> None:
    learnings = root / ".promptdeck" / "learnings.md"
    learnings.write_text("- Dates are UTC.\n")
    assert "### Shared Learnings" in compose(root, PromptRequest("1-2")).system
    learnings.write_text("")
    assert "Shared Learnings" not in compose(root, PromptRequest("1-2")).system


@pytest.mark.parametrize(
    ("request_", "error"),
    [
        (PromptRequest("9-9"), StoryNotFound),
        (PromptRequest("1-2", phase="deploy"), UsageError),
        (PromptRequest("1-2", mode="rewrite"), UsageError),
    ],
)
def test_bad_requests(root: Path, request_: PromptRequest, error: type[Exception]) -> None:
    with pytest.raises(error):
        compose(root, request_)


def test_story_without_a_file_composes_with_a_warning(root: Path) -> None:
    prompt = compose(root, PromptRequest("1-3"))
    assert any("1-3 has no story file" in w for w in prompt.warnings)
    assert "Password reset" in prompt.system


def test_oversized_injection_is_reported_not_raised(root: Path) -> None:
    (root / STORY_1_2).write_text("# Story 1.2: User registration\n\n" + "x" * 90_000)
    (root / "big.md").write_text("y" * 90_000)
    prompt = compose(root, PromptRequest("1-2", selection=Selection(additional_files=("big.md",))))
    assert prompt.injection.level == "error"
    # The verdict comes from stat: the file past the error line is listed, not read.
    big = next(f for f in prompt.injection.files if f.path == "big.md")
    assert big.status == "too-large" and big.tokens is None
    assert "y" * 100 not in prompt.system
    assert prompt.injection.size_bytes > 180_000


def test_works_with_a_catalog_built_by_hand(root: Path) -> None:
    story = Story(
        id="9-1",
        key="9-1",
        title="Hand made",
        status="ready-for-dev",
        source="bmad",
        group="9",
        tasks=(Task("Do it", False),),
    )
    prompt = compose_prompt(
        open_workspace(root), StoryCatalog((story,)), PromptRequest("9-1"), count_tokens=False
    )
    assert "- [ ] Do it" in prompt.system


def test_template_override_shows_in_the_prompt_and_its_source(root: Path) -> None:
    folder = root / ".promptdeck" / "templates"
    folder.mkdir()
    (folder / "layer-3-entry-dev.md").write_text("## Role\n\nBuild $story_id carefully.\n")
    prompt = compose(root, PromptRequest("1-2"))
    entry = prompt.layers[4]
    assert entry.source == ".promptdeck/templates/layer-3-entry-dev.md"
    assert entry.content == "## Role\n\nBuild 1-2 carefully."
