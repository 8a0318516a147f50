"""The clients' cut lines (core/cut_lines.py): Codex's AGENTS.md budget file by file, Claude
Code's large-CLAUDE.md warning, the one-argument limit and BMAD's size targets."""

from __future__ import annotations

from pathlib import Path

from builders import write_files
from promptdeck.core.fit.cuts import (
    CODEX_PROJECT_DOC_MAX_BYTES,
    claude_lines,
    codex_chain,
    codex_line,
    cut_lines,
)
from promptdeck.core.project import open_workspace
from promptdeck.core.prompt import PromptRequest, compose_prompt


def test_the_codex_cut_names_the_file_the_byte_and_the_headings_lost(tmp_path: Path) -> None:
    # "## Setup" starts 4 bytes before the cut: a heading cut in two is lost.
    head = "# Rules\n\n" + "x" * (CODEX_PROJECT_DOC_MAX_BYTES - 14) + "\n"
    write_files(
        tmp_path,
        {
            "AGENTS.md": head + "## Setup\n\nmore\n## Tests\n\nmore\n",
            "svc/AGENTS.override.md": "## Service\n\nsvc\n",
            "svc/AGENTS.md": "never read: the override wins\n",
            "svc/deep/AGENTS.md": "   \n\n",
        },
    )
    chain = codex_chain(tmp_path, tmp_path / "svc" / "deep")
    # The whitespace-only file costs nothing and is not listed, as Codex skips it.
    assert [f.path for f in chain] == ["AGENTS.md", "svc/AGENTS.override.md"]
    assert chain[0].kept == CODEX_PROJECT_DOC_MAX_BYTES
    assert chain[0].lost_headings == ("## Setup", "## Tests")
    assert chain[1].kept == 0 and chain[1].lost_headings == ("## Service",)
    line = codex_line(tmp_path, tmp_path / "svc")
    assert line is not None and line.over
    assert f"AGENTS.md is cut at byte {CODEX_PROJECT_DOC_MAX_BYTES:,}" in line.says
    assert "not sent: svc/AGENTS.override.md" in line.says
    assert "headings lost: ## Setup, ## Tests, ## Service" in line.says
    # Run from the root (as promptdeck runs Codex), the nested file is not in the chain at all.
    assert [f.path for f in codex_chain(tmp_path)] == ["AGENTS.md"]
    # A working folder outside the project reads nothing outside it.
    assert [f.path for f in codex_chain(tmp_path, tmp_path.parent)] == ["AGENTS.md"]


def test_under_the_budget_nothing_is_lost(tmp_path: Path) -> None:
    write_files(tmp_path, {"AGENTS.md": "## A\n\nsmall\n"})
    line = codex_line(tmp_path)
    assert line is not None and not line.over and line.size == 12
    assert codex_line(tmp_path / "nowhere") is None


def test_claude_warns_on_a_large_claude_md_by_characters(tmp_path: Path) -> None:
    # 30,000 three-byte characters: 90,000 bytes but 30,000 characters, under the line.
    write_files(tmp_path, {"CLAUDE.md": "ü" * 30_000, "CLAUDE.local.md": "a" * 40_001})
    found = {line.subject: line for line in claude_lines(tmp_path)}
    assert not found["CLAUDE.md"].over and found["CLAUDE.md"].size == 30_000
    assert found["CLAUDE.local.md"].over
    assert "over about 40,000" in found["CLAUDE.local.md"].says


def test_the_prompt_lines_and_bmad_targets(tmp_path: Path) -> None:
    art = "_bmad-output/implementation-artifacts"
    write_files(
        tmp_path,
        {
            f"{art}/sprint-status.yaml": "development_status:\n  1-2-reg: ready-for-dev\n",
            f"{art}/1-2-reg.md": "# Story 1.2: Reg\n\nStatus: ready-for-dev\n\n"
            + "word " * 2_000
            + "\n",
            "AGENTS.md": "## Rules\n",
        },
    )
    workspace = open_workspace(tmp_path)
    prompt = compose_prompt(workspace, None, PromptRequest("1-2", "dev"))
    lines = cut_lines(prompt, workspace.root)
    by_name = {line.name: line for line in lines}
    spec = by_name["story spec target"]
    assert spec.over and spec.size is not None and spec.size > 1_600
    assert by_name["one-argument limit"].size == prompt.system_meter.bytes
    assert by_name["one-argument limit"].on_system_scale
    assert lines[0].over  # over ones first


def test_a_large_agents_md_at_the_git_root_pushes_the_projects_own_out(tmp_path: Path) -> None:
    # Codex's chain starts at the git root, above the workspace, under one 32 KiB budget.
    (tmp_path / ".git").mkdir()
    write_files(
        tmp_path,
        {"AGENTS.md": "# Root\n\n" + "r" * (40 * 1024), "app/AGENTS.md": "# App rules\n\nx\n"},
    )
    chain = codex_chain(tmp_path / "app")
    assert [(f.path, f.kept) for f in chain] == [
        ("../AGENTS.md", CODEX_PROJECT_DOC_MAX_BYTES),
        ("AGENTS.md", 0),
    ]
    line = codex_line(tmp_path / "app")
    assert line is not None and line.over
    assert "pushing out the project's own AGENTS.md (not sent at all)" in line.says
