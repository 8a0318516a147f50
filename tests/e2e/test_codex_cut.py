"""Codex's AGENTS.md budget as the real ``codex`` CLI applies it, against promptdeck's preview.

``codex debug prompt-input`` prints the model-visible input Codex would send (no model call);
it runs in a network namespace of its own when ``unshare -rn`` can give one. A 40 KiB root
AGENTS.md and a nested 2 KiB one, run from the nested folder: Codex keeps exactly the bytes
:func:`~promptdeck.core.fit.cuts.codex_chain` says, cut where it says, and the headings it
names as lost are the ones missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from builders import commit_all, write_files
from e2e_project import agent_cli
from promptdeck.core.fit.cuts import CODEX_PROJECT_DOC_MAX_BYTES, codex_chain, codex_line

pytestmark = pytest.mark.e2e

CODEX = agent_cli("codex", "@openai/codex")


def _sections(prefix: str, size: int) -> str:
    text, number = "", 0
    while len(text.encode("utf-8")) < size:
        number += 1
        text += f"## {prefix} {number}\n\n" + " ".join(["rule text"] * 30) + "\n\n"
    return text.encode("utf-8")[:size].decode("utf-8")


def _unshared() -> list[str]:
    if shutil.which("unshare") is None:
        return []
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=30)
    return ["unshare", "-rn"] if probe.returncode == 0 else []


def _instructions(cwd: Path, home: Path) -> str:
    """The AGENTS.md text Codex would send, from inside its ``<INSTRUCTIONS>`` wrapper."""
    env = {"HOME": str(home), "CODEX_HOME": str(home / "codex"), "PATH": "/usr/bin:/bin"}
    (home / "codex").mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [*_unshared(), CODEX, "debug", "prompt-input", "x"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    for item in json.loads(done.stdout):
        for part in item.get("content") or []:
            text = part.get("text", "") if isinstance(part, dict) else ""
            if "<INSTRUCTIONS>\n" in text:
                return text.split("<INSTRUCTIONS>\n", 1)[1].rsplit("\n</INSTRUCTIONS>", 1)[0]
    raise AssertionError("Codex sent no AGENTS.md instructions")


def test_the_agents_md_cut_falls_where_the_preview_says(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_files(
        root,
        {"AGENTS.md": _sections("Root", 40 * 1024), "svc/AGENTS.md": _sections("Nested", 2048)},
    )
    commit_all(root)
    chain = codex_chain(root, root / "svc")
    assert [(f.path, f.bytes) for f in chain] == [("AGENTS.md", 40_960), ("svc/AGENTS.md", 2048)]
    assert [f.kept for f in chain] == [CODEX_PROJECT_DOC_MAX_BYTES, 0]

    sent = _instructions(root / "svc", tmp_path / "home").encode("utf-8")
    root_bytes = (root / "AGENTS.md").read_bytes()
    assert sent == root_bytes[: chain[0].kept]
    assert b"## Nested" not in sent
    line = codex_line(root, root / "svc")
    assert line is not None and line.over and line.size == 43_008
    lost = [heading for f in chain for heading in f.lost_headings]
    assert lost and all(h.encode("utf-8") + b"\n" not in sent for h in lost)
    kept_headings = [h for h in root_bytes.decode().splitlines() if h.startswith("## ")]
    assert all(h.encode("utf-8") in sent for h in kept_headings if h not in lost)


def test_under_the_budget_the_chain_arrives_whole_joined_by_a_blank_line(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_files(
        root,
        {"AGENTS.md": _sections("Root", 30_000), "svc/AGENTS.md": _sections("Nested", 2048)},
    )
    commit_all(root)
    chain = codex_chain(root, root / "svc")
    assert [f.kept for f in chain] == [30_000, 2048]
    sent = _instructions(root / "svc", tmp_path / "home").encode("utf-8")
    assert (
        sent == (root / "AGENTS.md").read_bytes() + b"\n\n" + (root / "svc/AGENTS.md").read_bytes()
    )
