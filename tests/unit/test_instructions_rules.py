"""Seed 004, Requirements 1, 2 and 4: the bundled instructions and the workspace rules."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

import pytest
from _prompt_workspace import make_workspace
from promptdeck.core.errors import EXIT_USAGE, AssetMissing
from promptdeck.core.layers.instructions import INSTRUCTIONS_SOURCE, load_instructions
from promptdeck.core.layers.rules import RULES_CANDIDATES, read_rules
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest

# --- Requirement 1: instructions ship with the package ------------------------------------------


def test_instructions_asset_is_in_the_installed_package() -> None:
    # Fails the build when packaging drops the asset (package-data globs).
    asset = resources.files("promptdeck.core").joinpath("assets", "instructions.md")
    assert asset.is_file()
    assert asset.read_text(encoding="utf-8").strip()


def test_load_instructions_reads_the_asset_with_its_hash() -> None:
    found = load_instructions()
    asset = resources.files("promptdeck.core").joinpath("assets", "instructions.md")
    assert found.text == asset.read_text(encoding="utf-8")
    assert found.sha256 == hashlib.sha256(asset.read_bytes()).hexdigest()
    assert found.source == INSTRUCTIONS_SOURCE
    assert found.short_hash == found.sha256[:8]


@pytest.mark.parametrize(
    ("content", "why"), [(None, "missing"), (b"\xff\xfe", "not UTF-8"), (b"  \n", "empty")]
)
def test_missing_or_broken_instructions_is_asset_missing(
    tmp_path: Path, content: bytes | None, why: str
) -> None:
    path = tmp_path / "instructions.md"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(AssetMissing, match=why) as caught:
        load_instructions(path)
    assert caught.value.exit_code == EXIT_USAGE
    assert "reinstall promptdeck" in str(caught.value)


def test_missing_instructions_stops_the_cli_with_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from promptdeck.cli import main
    from promptdeck.core.layers import instructions

    make_workspace(tmp_path)
    monkeypatch.setattr(instructions, "instructions_asset", lambda: tmp_path / "gone.md")
    code = main(["compose", "1-2", "--root", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert "instructions.md (Layer-0A) is missing" in captured.err


def test_instructions_say_what_the_agent_must_know() -> None:
    text = " ".join(load_instructions().text.split())
    assert "Do not read them again" in text  # injected files
    assert "do not start the next story" in text  # story scope
    assert "on a line of its own" in text  # signals
    assert "Story files are append-only" in text  # records


def test_instructions_do_not_come_from_the_users_project(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {"instructions.md": "EVIL", "assets/instructions.md": "EVIL"})
    workspace = open_workspace(root)
    prompt = compose_prompt(
        workspace, load_catalog(workspace), PromptRequest("1-2"), count_tokens=False
    )
    assert "EVIL" not in prompt.layers[0].content
    assert prompt.layers[0].content == load_instructions().text.strip("\n")


# --- Requirement 2: order, and rules read fresh -------------------------------------------------


def _compose(root: Path) -> ComposedPrompt:
    workspace = open_workspace(root)
    return compose_prompt(
        workspace, load_catalog(workspace), PromptRequest("1-2"), count_tokens=False
    )


def test_order_is_instructions_then_rules_then_the_rest_then_user(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {".promptdeck/rules.md": "RULE: use tabs.\n"})
    prompt = _compose(root)
    system = prompt.system
    assert system.startswith(load_instructions().text.strip("\n"))
    assert system.index("RULE: use tabs.") < system.index("## Guardrails")
    messages = prompt.messages
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == system


def test_rules_are_read_fresh_at_every_compose(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {".promptdeck/rules.md": "first rules\n"})
    first = _compose(root)
    (root / ".promptdeck" / "rules.md").write_text("second rules\n")
    second = _compose(root)
    assert "first rules" in first.layers[1].content
    assert "second rules" in second.layers[1].content
    assert first.signature != second.signature


@pytest.mark.parametrize("configured", [".ads/rules.md", "AGENTS.md"])
def test_rules_path_is_configurable(tmp_path: Path, configured: str) -> None:
    root = make_workspace(
        tmp_path,
        {
            configured: "Be brief.\n",
            ".promptdeck/config.toml": f'[paths]\nrules = "{configured}"\n',
        },
    )
    prompt = _compose(root)
    rules_layer = prompt.layers[1]
    assert rules_layer.source == configured
    assert rules_layer.content.endswith("Be brief.")
    assert prompt.rules is not None
    assert prompt.rules.short_hash == hashlib.sha256(b"Be brief.\n").hexdigest()[:8]


def test_read_rules_reports_path_hash_and_mtime(tmp_path: Path) -> None:
    (tmp_path / ".promptdeck").mkdir()
    target = tmp_path / ".promptdeck" / "rules.md"
    target.write_bytes(b"Rule one.\n")
    found = read_rules(Workspace(tmp_path.resolve(), Config()))
    assert found.status == "ok" and found.present and found.warning is None
    assert found.path == ".promptdeck/rules.md"
    assert found.sha256 == hashlib.sha256(b"Rule one.\n").hexdigest()
    assert found.mtime == target.stat().st_mtime


# --- Requirement 4: missing or broken rules --------------------------------------------------


@pytest.mark.parametrize(
    ("content", "status", "why"),
    [(None, "missing", "looked for"), (b"\xff\xfe\x00x", "not-utf8", "not valid UTF-8")],
)
def test_missing_or_broken_rules_still_compose_with_a_warning(
    tmp_path: Path, content: bytes | None, status: str, why: str
) -> None:
    root = make_workspace(tmp_path)
    if content is not None:
        (root / ".promptdeck" / "rules.md").write_bytes(content)
    prompt = _compose(root)
    rules_layer = prompt.layers[1]
    assert [x.layer_id for x in prompt.layers][:2] == ["Layer-0A", "Layer-0B"]
    assert rules_layer.missing is True and rules_layer.required is False
    assert rules_layer.content == ""
    assert prompt.rules is not None and prompt.rules.status == status
    warnings = prompt.warnings
    assert any(why in w and "Layer-0B" in w and ".promptdeck/rules.md" in w for w in warnings)
    # Instructions are still injected first.
    assert prompt.system.startswith("# promptdeck instructions")


def test_rules_outside_the_project_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("SECRET RULES\n")
    root = tmp_path / "project"
    make_workspace(root, {".promptdeck/config.toml": f'[paths]\nrules = "{outside}"\n'})
    prompt = _compose(root)
    assert "SECRET RULES" not in prompt.system
    assert prompt.rules is not None and prompt.rules.status == "outside-project"


# --- the project's own rules file, found in a documented order ---------------------------------


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"AGENTS.md": "a", "CLAUDE.md": "c"}, "AGENTS.md"),
        ({"CLAUDE.md": "c", ".github/copilot-instructions.md": "g"}, "CLAUDE.md"),
        (
            {".github/copilot-instructions.md": "g", ".cursorrules": "x"},
            ".github/copilot-instructions.md",
        ),
        ({".cursor/rules/b.mdc": "b", ".cursor/rules/a.mdc": "a"}, ".cursor/rules/a.mdc"),
        ({".cursorrules": "x"}, ".cursorrules"),
        ({".promptdeck/rules.md": "p", "AGENTS.md": "a"}, ".promptdeck/rules.md"),
    ],
)
def test_rules_are_found_in_the_documented_order(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = read_rules(Workspace(tmp_path.resolve(), Config()))
    assert found.path == expected and found.status == "ok"
    assert found.sha256 == hashlib.sha256((tmp_path / expected).read_bytes()).hexdigest()
    assert ".cursor/rules/" in found.looked_for


def test_configured_rules_win_over_the_documented_order(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("agents\n")
    found = read_rules(Workspace(tmp_path.resolve(), Config(paths_rules="docs/rules.md")))
    assert found.path == "docs/rules.md" and found.status == "missing"
    assert found.looked_for == ()
    assert found.warning is not None and "docs/rules.md: not found" in found.warning


def test_no_rules_file_names_every_candidate_and_how_to_set_one(tmp_path: Path) -> None:
    found = read_rules(Workspace(tmp_path.resolve(), Config()))
    assert found.status == "missing"
    assert found.warning is not None
    for candidate in RULES_CANDIDATES:
        assert candidate in found.warning
    assert "[paths] rules" in found.warning
