"""docs/app.md lists exactly the key ids a ``[keymap]`` may rebind: every id the app and its
screens declare, and no id they do not."""

from __future__ import annotations

import re

from doc_pages import ROOT
from promptdeck.tui.app import PromptdeckApp, known_binding_ids
from promptdeck.tui.bindings import binding_ids

_ID = re.compile(r"`((?:main|app|confirm|quit|help|notices|text-view)\.[\w-]+)`")


def test_the_keymap_ids_listed_are_the_apps() -> None:
    listed = set(_ID.findall((ROOT / "docs" / "app.md").read_text(encoding="utf-8")))
    assert listed == known_binding_ids() | binding_ids(PromptdeckApp)
