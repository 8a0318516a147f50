"""Programs are found only on absolute PATH entries outside the project; a path-like name is
taken from the project root; agent numbers are judged before they are shown or summed."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from promptdeck.core.agents.base import Usage
from promptdeck.core.processes import resolve_program, search_path
from promptdeck.core.units import context_share, cost_label, tokens_total, valid_cost


def _program(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_relative_and_project_entries_are_never_searched(tmp_path: Path) -> None:
    root = (tmp_path / "project").resolve()
    _program(root / "bin", "tool")
    outside = _program(tmp_path / "tools", "tool")
    env = {"PATH": f"./bin:bin::{root / 'bin'}:{tmp_path / 'tools'}"}
    assert search_path(root, env) == (str(tmp_path / "tools"),)
    assert resolve_program("tool", root, env) == str(outside)
    assert resolve_program("tool", root, {"PATH": f"./bin:{root / 'bin'}"}) is None


def test_a_path_like_name_is_taken_from_the_project_root(tmp_path: Path) -> None:
    root = (tmp_path / "project").resolve()
    script = _program(root / "tools", "agent")
    assert resolve_program("tools/agent", root, {"PATH": ""}) == str(script)
    assert resolve_program(str(script), None, {"PATH": ""}) == str(script)
    assert resolve_program("tools/missing", root, {"PATH": ""}) is None
    assert resolve_program("a\0b", root) is None


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.0123, "$0.0123"),
        (None, "—"),
        (1e308, "invalid (1e+308)"),
        (-0.5, "invalid (-0.5)"),
        (math.nan, "invalid (nan)"),
        (math.inf, "invalid (inf)"),
        (True, "invalid (bool)"),
    ],
)
def test_a_cost_is_shown_only_when_plausible(value: object, shown: str) -> None:
    assert cost_label(value) == shown
    assert (valid_cost(value) is not None) == shown.startswith("$")


def test_implausible_token_counts_are_named_and_never_summed() -> None:
    assert tokens_total(10, -5, 10**12, 7) == (17, ("invalid (-5)", "invalid (1000000000000)"))
    assert tokens_total(10**400)[1] == ("invalid (a 401-digit number)",)
    usage = Usage(input_tokens=-500, output_tokens=40, cache_read_tokens=2)
    assert usage.context_tokens == 2
    assert usage.total_label() == "42 + invalid (-500)"
    assert "input invalid (-500)" in usage.describe()
    assert context_share(-5, 100) is None and context_share(50, 0) is None
    assert context_share(50, 200) == 0.25
