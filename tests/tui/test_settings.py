"""The user's settings file: defaults, remembering the theme, tolerance of a broken file."""

from __future__ import annotations

from pathlib import Path

from promptdeck.tui.settings import UserSettings, load_settings, save_settings, settings_path


def test_settings_path_follows_xdg_config_home(tmp_path: Path) -> None:
    path = settings_path({"XDG_CONFIG_HOME": str(tmp_path)})
    assert path == tmp_path / "promptdeck" / "settings.toml"


def test_settings_path_defaults_under_home_config() -> None:
    path = settings_path({})
    assert path == Path.home() / ".config" / "promptdeck" / "settings.toml"


def test_missing_file_gives_defaults_without_notice(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path / "settings.toml")
    assert loaded.settings == UserSettings()
    assert loaded.notice is None
    assert loaded.writable


def test_theme_round_trips_and_keeps_other_keys(tmp_path: Path) -> None:
    path = tmp_path / "promptdeck" / "settings.toml"
    path.parent.mkdir()
    path.write_text('editor = "vim"\n\n[keys]\nquit = "ctrl+q"\n', encoding="utf-8")
    assert save_settings(UserSettings(theme="promptdeck-light"), path) is None
    assert load_settings(path).settings.theme == "promptdeck-light"
    text = path.read_text(encoding="utf-8")
    assert 'editor = "vim"' in text
    assert 'quit = "ctrl+q"' in text


def test_malformed_file_gives_notice_and_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("theme = [unclosed\n", encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.settings == UserSettings()
    assert loaded.notice is not None and str(path) in loaded.notice
    assert not loaded.writable
    problem = save_settings(UserSettings(theme="promptdeck-dark"), path)
    assert problem is not None and "not remembered" in problem
    assert path.read_text(encoding="utf-8") == "theme = [unclosed\n"


def test_wrong_type_for_theme_gives_notice(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("theme = 3\n", encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.settings.theme is None
    assert loaded.notice is not None and "theme" in loaded.notice


def test_keymap_table_is_read_and_kept_when_the_theme_is_saved(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('[keymap]\n"main.run_phase" = "f5"\n', encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.notice is None and loaded.settings.keymap == {"main.run_phase": "f5"}
    assert save_settings(UserSettings(theme="promptdeck-light"), path) is None
    assert load_settings(path).settings.keymap == {"main.run_phase": "f5"}


def test_a_keymap_of_the_wrong_shape_is_ignored_with_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('theme = "promptdeck-light"\n[keymap]\n"main.run_phase" = 5\n')
    loaded = load_settings(path)
    assert loaded.settings.keymap == {} and loaded.settings.theme == "promptdeck-light"
    assert loaded.notice is not None and "[keymap]" in loaded.notice


def test_open_phase_is_read_and_an_unknown_phase_is_named(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('open_phase = "review"\n', encoding="utf-8")
    assert load_settings(path).settings.open_phase == "review"
    path.write_text('theme = "x"\nopen_phase = "lunch"\n', encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.settings.open_phase is None and loaded.settings.theme == "x"
    assert loaded.notice is not None and "open_phase" in loaded.notice


def test_saving_never_writes_through_a_file_planted_beside_the_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    (tmp_path / "settings.toml.tmp").symlink_to(victim)

    assert save_settings(UserSettings(theme="nord"), path) is None

    assert victim.read_text(encoding="utf-8") == "keep me\n"
    assert not path.is_symlink()
    assert load_settings(path).settings.theme == "nord"
