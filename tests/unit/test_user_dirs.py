"""The user's folders follow the XDG rule: an absolute value is used, an unset, empty or
relative one is ignored (a relative one would point into the folder promptdeck runs in)."""

from __future__ import annotations

from pathlib import Path

from promptdeck.core.project.trust import trust_store_path
from promptdeck.core.project.user_dirs import cache_folder, config_folder


def test_an_absolute_value_is_used(tmp_path: Path) -> None:
    assert config_folder({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "promptdeck"
    assert cache_folder({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "promptdeck"


def test_unset_empty_or_relative_values_fall_back_to_the_home_folder() -> None:
    for value in (None, "", "  ", "relative/xdg", "./here"):
        env = {} if value is None else {"XDG_CONFIG_HOME": value, "XDG_CACHE_HOME": value}
        assert config_folder(env) == Path.home() / ".config" / "promptdeck"
        assert cache_folder(env) == Path.home() / ".cache" / "promptdeck"
    # A repository's own folder never holds what the user trusts.
    assert trust_store_path({"XDG_CONFIG_HOME": ".promptdeck"}).is_absolute()
