"""The main screen's key table: stable ids a keymap can name, the footer's order within them."""

from __future__ import annotations

from promptdeck.tui.app import PromptdeckApp, known_binding_ids
from promptdeck.tui.bindings import (
    FOOTER_PRIORITY,
    MAIN_BINDINGS,
    binding_ids,
    ids_of,
)
from promptdeck.tui.screens.confirm_run import ConfirmRunScreen
from promptdeck.tui.screens.main import MainScreen


def test_every_key_of_the_main_screen_has_a_unique_main_id() -> None:
    ids = [binding.id for binding in MAIN_BINDINGS]
    assert all(binding_id and binding_id.startswith("main.") for binding_id in ids)
    assert len(set(ids)) == len(ids)
    assert binding_ids(MainScreen) == set(ids)


def test_a_keymap_may_name_the_main_screen_and_the_dialogs_but_nothing_else() -> None:
    known = known_binding_ids()
    assert ids_of(MAIN_BINDINGS) <= known
    assert binding_ids(ConfirmRunScreen) <= known
    assert not any(binding_id.startswith("app.") for binding_id in known)
    assert "main.nothing" not in known


def test_the_footer_orders_only_keys_that_exist() -> None:
    assert set(FOOTER_PRIORITY) <= known_binding_ids() | binding_ids(PromptdeckApp)
    assert len(set(FOOTER_PRIORITY)) == len(FOOTER_PRIORITY)
