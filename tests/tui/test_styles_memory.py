"""The stylesheet Textual parsed, remembered from one start to the next: what a start with the
memory styles is what Textual parses itself, nothing is parsed again, and a memory made for
other variables, another Textual or without this user's seal is never used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.project import open_workspace
from promptdeck.core.tokens import answers as answer_cache
from promptdeck.core.tokens import shared_results
from promptdeck.tui import app as app_module
from promptdeck.tui import styles_memory
from promptdeck.tui.session.opening import OpeningHelper
from promptdeck.tui.styles_memory import StylesMemory, install, remembered, to_remember
from textual.css import stylesheet as textual_stylesheet
from textual.css.stylesheet import Stylesheet


def _rules(sheet: Stylesheet) -> list[tuple[Any, ...]]:
    """The parsed rules as Textual applies them: what they select, what they set, how they
    rank."""
    return [
        (
            rule.selectors,
            sorted((name, repr(value)) for name, value in rule.styles.get_rules().items()),
            rule.is_default_rules,
            rule.tie_breaker,
            sorted(rule.selector_names),
            sorted(rule.pseudo_classes),
        )
        for rule in sheet.rules
    ]


def _copy(sheet: Stylesheet) -> Stylesheet:
    """A stylesheet with ``sheet``'s sources and variables, nothing parsed yet."""
    fresh = Stylesheet(variables=dict(sheet._variables))
    for read_from, source in sheet.source.items():
        fresh.add_source(
            source.content,
            read_from=read_from,
            is_default_css=source.is_defaults,
            tie_breaker=source.tie_breaker,
            scope=source.scope,
        )
    return fresh


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The CSS Textual's parser is handed, as it is handed it."""
    handed: list[str] = []
    real = textual_stylesheet.parse

    def counted(scope: str, css: str, *args: Any, **kwargs: Any) -> Any:
        handed.append(css)
        return real(scope, css, *args, **kwargs)

    monkeypatch.setattr(textual_stylesheet, "parse", counted)
    return handed


async def _parsed_by_the_app(root: Path) -> tuple[Stylesheet, StylesMemory]:
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_preview(pilot, "1-1")
        memory = to_remember(app.stylesheet, None)
        assert memory is not None and memory.parsed
        return _copy(app.stylesheet), memory


@run_async
async def test_a_stylesheet_given_the_memory_parses_nothing_and_rules_alike(
    demo_root: Path, parses: list[str]
) -> None:
    sheet, memory = await _parsed_by_the_app(demo_root)
    expected = _copy(sheet)
    expected.parse()
    parses.clear()

    assert install(sheet, memory)
    sheet.parse()
    assert parses == []
    assert _rules(sheet) == _rules(expected)
    # Everything it holds was parsed: nothing more to remember.
    assert to_remember(sheet, memory) is None


@run_async
async def test_a_memory_of_other_variables_or_another_textual_is_not_used(
    demo_root: Path, parses: list[str]
) -> None:
    sheet, memory = await _parsed_by_the_app(demo_root)
    other_variables = {**memory.variables, "primary": "#123456"}
    assert not install(sheet, StylesMemory(memory.textual, other_variables, memory.parsed))
    assert not install(sheet, StylesMemory("0.0.1", memory.variables, memory.parsed))
    assert not install(sheet, None)
    parses.clear()
    sheet.parse()
    assert parses  # parsed by Textual, as without a memory


@run_async
async def test_a_launch_remembers_the_styles_and_the_next_one_is_sent_them(
    demo_root: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "REMEMBER_AFTER_SECONDS", 0.05)
    monkeypatch.setattr(answer_cache, "SETTLE_SECONDS", 0.0)
    workspace = open_workspace(demo_root)
    config = workspace.config

    def launch() -> Any:
        # A launch forks its helper before it opens the result store (SQLite's state never
        # crosses a fork): as a new process would, this one closes what it opened.
        shared_results().close()
        helper = OpeningHelper.start(workspace, config.tokens_encoding, None, config.delivery)
        assert helper is not None, "this platform forks"
        # As at a launch, where the helper starts before Textual is imported: its first part
        # is there when the app is made.
        assert helper.wait(10.0)
        return make_app(demo_root, opening=helper)

    assert remembered(None) is None
    first = launch()
    async with first.run_test(size=(120, 40)) as pilot:
        await wait_for_preview(pilot, "1-1")
        await wait_for(pilot, lambda: remembered(None) is not None, "the styles remembered")
    assert parses

    parses.clear()
    again = launch()
    assert again._styles is not None  # sent by the helper, first of its parts
    async with again.run_test(size=(120, 40)) as pilot:
        await wait_for_preview(pilot, "1-1")
    # The main screen's styles came from the memory: Textual parsed none of them again.
    assert not [css for css in parses if "#story-tree" in css or "StoryTree" in css]


def test_a_memory_without_this_users_seal_is_never_sent(demo_root: Path) -> None:
    memory = StylesMemory("1", {}, ())
    assert styles_memory.remember(memory, None)
    assert remembered(None) is not None
    key = styles_memory.memory_key(None)
    store = shared_results()
    entry = store.get(styles_memory.KIND, key)
    store.put(styles_memory.KIND, key, {**entry, "seal": "0" * 64})
    assert remembered(None) is None


def test_nothing_is_remembered_or_sent_with_remembered_answers_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PROMPTDECK_ANSWER_CACHE", "off")
    assert not styles_memory.remember(StylesMemory("1", {}, ()), None)
    assert remembered(None) is None
