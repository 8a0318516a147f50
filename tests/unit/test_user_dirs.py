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


def test_a_path_from_the_environment_naming_a_users_file_is_refused(tmp_path: Path) -> None:
    import os

    from promptdeck.core.project.user_dirs import foreign_file

    def own(head: bytes) -> bool:
        return head.startswith(b"PROMPTDECK")

    assert foreign_file(tmp_path / "missing", own) is None
    (tmp_path / "ours").write_bytes(b"PROMPTDECK cache")
    assert foreign_file(tmp_path / "ours", own) is None
    (tmp_path / "notes").write_text("mine\n")
    (tmp_path / "link").symlink_to(tmp_path / "ours")
    os.mkfifo(tmp_path / "fifo")
    for name, said in (("notes", "not promptdeck's own"), ("link", "symlink"), ("fifo", "regular")):
        reason = foreign_file(tmp_path / name, own)
        assert reason is not None and reason.startswith(str(tmp_path / name)) and said in reason
    assert (tmp_path / "notes").read_text() == "mine\n"
