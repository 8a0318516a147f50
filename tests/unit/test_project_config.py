"""The workspace config: defaults, sections, typed settings, and one clear error for a bad one."""

from __future__ import annotations

from pathlib import Path

import pytest
from promptdeck.core.errors import ConfigError
from promptdeck.core.project.config import coerce_setting, load_config


def test_config_defaults_without_a_file(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.injection_warn_bytes == 100 * 1024
    assert config.injection_error_bytes == 150 * 1024
    assert config.tokens_encoding == "o200k_base"
    assert config.source is None


def test_config_reads_sections(tmp_path: Path) -> None:
    (tmp_path / ".promptdeck").mkdir()
    (tmp_path / ".promptdeck/config.toml").write_text(
        '[paths]\nrules = "AGENTS.md"\nproject_context = ["ctx.md"]\n'
        '[tokens]\nencoding = "cl100k_base"\n[agent]\ntimeout = 30\n'
    )
    config = load_config(tmp_path)
    assert config.paths_rules == "AGENTS.md"
    assert config.paths_project_context == ("ctx.md",)
    assert config.tokens_encoding == "cl100k_base"
    assert config.agent_timeout == 30.0


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("[injection\nwarn_bytes = 1", "valid TOML"),
        ('[injection]\nwarn_bytes = "big"', "injection.warn_bytes: an integer"),
        ("[paths]\nproject_context = [1, 2]", "paths.project_context: a list of strings"),
        ("[paths]\nnonsense = 1", "paths.nonsense: a known setting"),
        ('[tokens]\nencoding = "gpt2"', "tokens.encoding: one of o200k_base, cl100k_base"),
        ("[injection]\nwarn_bytes = 900\nerror_bytes = 10", "injection.warn_bytes"),
        ("[session]\nreinjection_enabled = 1", "session.reinjection_enabled: true or false"),
        ("[read]\nmax_bytes = 0", "read.max_bytes: a positive integer"),
        ('[injection]\nextensions = ["md"]', "injection.extensions"),
    ],
)
def test_bad_config_names_file_key_and_expectation(
    tmp_path: Path, body: str, fragment: str
) -> None:
    (tmp_path / ".promptdeck").mkdir()
    (tmp_path / ".promptdeck/config.toml").write_text(body)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value).startswith(".promptdeck/config.toml")
    assert fragment in str(caught.value)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("value", "annotation", "expected"),
    [
        (3, int | None, 3),
        (2, float | None, 2.0),
        ("x", str | None, "x"),
        (["a"], tuple[str, ...] | None, ("a",)),
    ],
)
def test_an_optional_setting_takes_a_value_of_its_type(
    value: object, annotation: object, expected: object
) -> None:
    assert coerce_setting(value, annotation, "config.toml", "a.b") == expected


@pytest.mark.parametrize(
    ("value", "annotation", "fragment"),
    [
        ("big", int | None, "a.b: an integer"),
        (True, int | None, "a.b: an integer"),
        (1, str | None, "a.b: a string"),
        (1.5, int | str, "a.b: an integer or a string"),
        (1, Path, "a.b: a value of type"),
    ],
)
def test_a_setting_of_the_wrong_type_is_a_config_error_whatever_its_annotation(
    value: object, annotation: object, fragment: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        coerce_setting(value, annotation, "config.toml", "a.b")
    assert str(caught.value).startswith("config.toml: ")
    assert fragment in str(caught.value)


def test_non_utf8_config_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / ".promptdeck").mkdir()
    (tmp_path / ".promptdeck/config.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config(tmp_path)


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("[agent]\ntimeout = -5", "agent.timeout"),
        ("[agent]\ntimeout = 0", "agent.timeout"),
        ("[agent]\ntimeout = nan", "agent.timeout"),
        ("[agent]\nreplay_delay = 1e308", "agent.replay_delay"),
        ("[agent]\nreplay_delay = -1", "agent.replay_delay"),
        ("[agent]\nclaude_context_window = 0", "agent.claude_context_window"),
    ],
)
def test_out_of_range_numbers_are_config_errors(tmp_path: Path, body: str, key: str) -> None:
    (tmp_path / ".promptdeck").mkdir()
    (tmp_path / ".promptdeck/config.toml").write_text(body)
    with pytest.raises(ConfigError, match=key):
        load_config(tmp_path)
