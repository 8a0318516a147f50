"""docs/config.md's example file is the config promptdeck reads: it names every setting a
``.promptdeck/config.toml`` may hold, no setting promptdeck does not know, and each with its
default value."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from doc_pages import ROOT
from promptdeck.core.project.config import _FIELDS, Config, config_from_mapping


def _documented() -> dict[str, Any]:
    page = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(.*?)```", page, re.S)
    assert block is not None, "docs/config.md shows no config file"
    return tomllib.loads(block.group(1))


def _names(table: dict[str, Any], prefix: tuple[str, ...] = ()) -> set[str]:
    names: set[str] = set()
    for key, value in table.items():
        if isinstance(value, dict):
            names |= _names(value, (*prefix, key))
        else:
            names.add("_".join((*prefix, key)))
    return names


def test_every_setting_is_documented_and_none_other() -> None:
    assert _names(_documented()) == set(_FIELDS)


def test_each_value_shown_is_the_default() -> None:
    shown = config_from_mapping(_documented(), "docs/config.md")
    defaults = Config()
    differ = [
        name
        for name, spec in _FIELDS.items()
        if getattr(shown, spec.name) != getattr(defaults, spec.name)
    ]
    assert differ == []
