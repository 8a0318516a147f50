"""The project's obvious verification command: detected as a suggestion, used when allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.prompt.verify import detect_verify_command, resolve_verification

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


@pytest.mark.parametrize(
    ("files", "command", "source"),
    [
        ({"package.json": '{"scripts": {"test": "vitest run"}}'}, "npm test", "package.json"),
        (
            {"package.json": '{"scripts": {"test": "jest"}}', "pnpm-lock.yaml": ""},
            "pnpm test",
            "package.json",
        ),
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"},
            "pytest",
            "pyproject.toml",
        ),
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\n", "uv.lock": ""},
            "uv run pytest",
            "pyproject.toml",
        ),
        ({"setup.cfg": "[tool:pytest]\ntestpaths = tests\n"}, "pytest", "setup.cfg"),
        ({"Cargo.toml": "[package]\nname = 'x'\n"}, "cargo test", "Cargo.toml"),
        ({"go.mod": "module x\n"}, "go test ./...", "go.mod"),
        (
            {"Makefile": "lint:\n\truff .\ntest: lint\n\tpytest\n", "go.mod": ""},
            "make test",
            "Makefile",
        ),
    ],
)
def test_detects_the_obvious_command(
    tmp_path: Path, files: dict[str, str], command: str, source: str
) -> None:
    make_workspace(tmp_path, files)
    found = detect_verify_command(tmp_path)
    assert found is not None and (found.command, found.source) == (command, source)


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"package.json": '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}'},
        {"package.json": "{not json"},
        {"pyproject.toml": "[project]\nname = 'x'\n"},
        {"pyproject.toml": "not = [toml"},
        {"Makefile": "TEST := 1\nbuild:\n\tcc x.c\n"},
    ],
)
def test_nothing_obvious_is_none(tmp_path: Path, files: dict[str, str]) -> None:
    make_workspace(tmp_path, files)
    assert detect_verify_command(tmp_path) is None


def test_detected_command_is_a_suggestion_unless_the_config_says_so(tmp_path: Path) -> None:
    story = "# Story 1.1: X\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] do it\n"
    files = {
        "_bmad-output/implementation-artifacts/1-1-x.md": story,
        "pyproject.toml": "[tool.pytest.ini_options]\n",
    }
    ws = make_workspace(tmp_path / "a", files)
    prompt = compose_prompt(ws, None, PromptRequest("1-1"), count_tokens=False)
    assert prompt.verification is not None and prompt.verification.origin == "none"
    assert "No verification commands are configured" in prompt.system
    assert any("looks like `pytest` (from pyproject.toml)" in w for w in prompt.warnings)

    used = make_workspace(tmp_path / "b", files, verify_use_detected=True)
    prompt = compose_prompt(used, None, PromptRequest("1-1"), count_tokens=False)
    assert resolve_verification(used).origin == "detected"
    assert "- `pytest`" in prompt.system and "No verification commands" not in prompt.system
    assert not any("looks like" in w for w in prompt.warnings)

    configured = make_workspace(
        tmp_path / "c", files, verify_commands=("make check",), verify_use_detected=True
    )
    assert resolve_verification(configured).commands == ("make check",)


def test_real_projects_suggestions() -> None:
    assert detect_verify_command(REAL / "docvet").command == "pytest"  # type: ignore[union-attr]
    todo = detect_verify_command(REAL / "bmad-todo-app")
    assert todo is not None and todo.command == "npm test"
