"""PreviewComposer: the preview's debounce, delta and two-pass compose, without a screen."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from promptdeck.core.errors import StoryNotFound
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest
from promptdeck.core.tokens.counter import TokenCounter
from promptdeck.tui.session.preview_composer import PreviewComposer


def word_counter() -> TokenCounter:
    # One token per word: exact, fast and independent of the bundled encoder.
    class Words:
        def encode_ordinary(self, text: str) -> list[int]:
            return [0] * len(text.split())

    return TokenCounter("o200k_base", builder=lambda _name: Words())


class SteppedClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def workspace(demo_root: Path) -> Workspace:
    return open_workspace(demo_root)


def composed(workspace: Workspace, request: PromptRequest, *, counted: bool) -> ComposedPrompt:
    return compose_prompt(
        workspace,
        load_catalog(workspace),
        request,
        counter=word_counter(),
        count_tokens=counted,
    )


def first_story(workspace: Workspace) -> str:
    return load_catalog(workspace).stories[0].id


def test_an_isolated_change_composes_at_once_and_a_burst_waits() -> None:
    clock = SteppedClock()
    composer = PreviewComposer(debounce=0.1, clock=clock)
    assert composer.request(None) == 0.0
    clock.now += 0.05
    assert composer.request(None) == 0.1
    clock.now += 0.5
    assert composer.request(None) == 0.0


def test_the_first_change_keeps_the_shown_prompt_as_the_base_until_a_counted_pass(
    workspace: Workspace,
) -> None:
    story = first_story(workspace)
    before = composed(workspace, PromptRequest(story), counted=True)
    wider = PromptRequest(
        story, selection=Selection(project_context=not Selection().project_context)
    )
    after = composed(workspace, wider, counted=True)
    composer = PreviewComposer(clock=SteppedClock())
    composer.request(before)
    assert composer.delta_base is before
    # A second change before the first settled keeps the first base.
    composer.request(after)
    assert composer.delta_base is before
    byte_change = after.system_meter.bytes - before.system_meter.bytes
    assert byte_change != 0
    quick = composer.delta(after, counted=False)
    assert quick != ""
    assert composer.delta_base is before
    settled = composer.delta(after, counted=True)
    assert settled != ""
    assert composer.delta_base is None
    assert composer.delta(after, counted=True) == ""


def test_a_new_story_shows_no_delta(workspace: Workspace) -> None:
    catalog = load_catalog(workspace)
    one, two = catalog.stories[0].id, catalog.stories[1].id
    first = composed(workspace, PromptRequest(one), counted=True)
    second = composed(workspace, PromptRequest(two), counted=True)
    composer = PreviewComposer(clock=SteppedClock())
    composer.request(first, story_changed=True)
    assert composer.delta_base is None
    composer.request(first)
    # The base is of another story: nothing to compare.
    assert composer.delta(second, counted=True) == ""
    composer.request(second)
    composer.forget_delta()
    assert composer.delta_base is None


def test_compose_returns_the_counted_prompt_and_may_show_the_quick_one_first(
    workspace: Workspace,
) -> None:
    request = PromptRequest(first_story(workspace))
    quick: list[ComposedPrompt] = []
    final = asyncio.run(
        PreviewComposer.compose(
            workspace, load_catalog(workspace), request, word_counter(), quick.append
        )
    )
    assert final.counted
    assert final.system_meter.tokens is not None
    assert len(quick) <= 1
    for prompt in quick:
        assert not prompt.counted
        assert prompt.system == final.system


def test_compose_lets_an_unknown_story_raise_its_error(workspace: Workspace) -> None:
    shown: list[ComposedPrompt] = []
    with pytest.raises(StoryNotFound):
        asyncio.run(
            PreviewComposer.compose(
                workspace,
                load_catalog(workspace),
                PromptRequest("no-such-story"),
                word_counter(),
                shown.append,
            )
        )
    assert shown == []


def test_show_hands_each_pass_with_its_delta_and_the_counted_one_settles_it(
    workspace: Workspace,
) -> None:
    story = first_story(workspace)
    before = composed(workspace, PromptRequest(story), counted=True)
    wider = PromptRequest(story, selection=Selection(discovery=True, tech_spec=True))
    composer = PreviewComposer(clock=SteppedClock())
    composer.request(before)
    passes: list[tuple[ComposedPrompt, bool, str]] = []

    def on_pass(prompt: ComposedPrompt, counted: bool, delta: str) -> None:
        passes.append((prompt, counted, delta))

    catalog = load_catalog(workspace)
    asyncio.run(composer.show(workspace, catalog, wider, word_counter(), 0.0, on_pass))
    *quick, (final, counted, delta) = passes
    assert counted and final.counted and final.request == wider
    assert [c for _p, c, _d in quick] == [False] * len(quick) and len(quick) <= 1
    expected = (
        composed(workspace, wider, counted=True).system_meter.bytes - before.system_meter.bytes
    )
    assert expected != 0 and delta.startswith("+" if expected > 0 else "-")
    assert composer.delta_base is None


def test_a_counted_pass_within_the_grace_is_the_only_pass(workspace: Workspace) -> None:
    request = PromptRequest(first_story(workspace))
    quick: list[ComposedPrompt] = []
    final = asyncio.run(
        PreviewComposer.compose(
            workspace, load_catalog(workspace), request, word_counter(), quick.append, grace=60.0
        )
    )
    assert final.counted
    # Composed once and painted once: no byte-only pass was shown (nor started).
    assert quick == []


def test_a_count_still_waiting_for_its_encoder_shows_the_byte_only_pass_first(
    workspace: Workspace,
) -> None:
    built = threading.Event()

    class Words:
        def encode_ordinary(self, text: str) -> list[int]:
            return [0] * len(text.split())

    def slow_builder(_name: str) -> Words:
        # The encoder is built only once the byte-only pass has been shown.
        assert built.wait(timeout=60), "the byte-only pass was never shown"
        return Words()

    counter = TokenCounter("o200k_base", builder=slow_builder)
    request = PromptRequest(first_story(workspace))
    quick: list[ComposedPrompt] = []

    def shown(prompt: ComposedPrompt) -> None:
        quick.append(prompt)
        built.set()

    final = asyncio.run(
        PreviewComposer.compose(
            workspace, load_catalog(workspace), request, counter, shown, grace=0.0
        )
    )
    assert [p.counted for p in quick] == [False]
    assert final.counted and final.system == quick[0].system


def test_a_prepared_compose_is_the_one_the_next_show_of_its_request_uses(
    workspace: Workspace,
) -> None:
    catalog = load_catalog(workspace)
    story = first_story(workspace)
    composer = PreviewComposer(clock=SteppedClock())
    counter = word_counter()
    request = PromptRequest(story)
    prepared = composer.prepare(workspace, catalog, request, counter)
    passes: list[tuple[ComposedPrompt, bool, str]] = []

    def on_pass(prompt: ComposedPrompt, counted: bool, delta: str) -> None:
        passes.append((prompt, counted, delta))

    asyncio.run(composer.show(workspace, catalog, request, counter, 0.0, on_pass))
    assert [(p, c) for p, c, _d in passes] == [(prepared.result(timeout=60), True)]
    assert passes[0][0] is prepared.result()
    # Used once: another request composes afresh.
    other = PromptRequest(story, selection=Selection(discovery=True, tech_spec=True))
    composer.prepare(workspace, catalog, request, counter)
    passes.clear()
    asyncio.run(composer.show(workspace, catalog, other, counter, 0.0, on_pass))
    assert passes[-1][0].request.selection.discovery and passes[-1][1]
