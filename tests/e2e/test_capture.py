"""``promptdeck capture`` with the real ``claude`` and ``codex`` CLIs: the request each records
holds ``compose --part system`` byte for byte, promptdeck's layers are that many bytes, the
parts sum to the request's size, the rules file the client loaded is a part of its own, text
that arrives twice is flagged, nothing is written to the project and the capture is kept in
the user's cache folder."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from e2e_project import PROMPTDECK, TIMEOUT, agent_cli, compose, make_project
from promptdeck.core.capture import remembered_capture, request_streams

pytestmark = pytest.mark.e2e

CLIENTS = {
    "claude": agent_cli("claude", "@anthropic-ai/claude-code"),
    "codex": agent_cli("codex", "@openai/codex"),
}
RULES = (
    "# Project rules\n\nKeep every function small and name it after what it does, never how.\n\n"
    "Run the whole test suite before saying a story is done; überprüfe every test that ran.\n"
)
RULES_FILE = {"claude": "CLAUDE.md", "codex": "AGENTS.md"}


def _capture(
    root: Path, home: Path, client: str, *extra: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "CODEX_", "PROMPTDECK_"))
    }
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / "cache"),
        NO_COLOR="1",
        **{f"PROMPTDECK_{client.upper()}_BIN": CLIENTS[client]},
    )
    home.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [*PROMPTDECK, "capture", "--client", client, "--story", "1.2", "--phase", "dev", *extra],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    return done, env


def _files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if ".git" not in p.parts)


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_the_captured_request_holds_compose_and_the_parts_sum(tmp_path: Path, client: str) -> None:
    root = make_project(tmp_path, RULES, {"CLAUDE.md": RULES, "AGENTS.md": RULES})
    expected = compose(root)
    before = _files(root)
    done, env = _capture(root, tmp_path / "home", client, "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    parts = {part["name"]: part for part in report["parts"]}
    assert sum(part["bytes"] for part in report["parts"]) == report["request_bytes"]
    ours = [part for part in report["parts"] if part["kind"] == "promptdeck"]
    assert [p["name"].split()[0] for p in ours if p["name"] != "layer joiners"] == [
        f"Layer-{n}" for n in ("0A", "0B", "1", "2", "3", "4", "5", "6")
    ]
    assert sum(part["bytes"] for part in ours) == len(expected.encode("utf-8"))
    assert parts["client system"]["bytes"] > 0 and parts["tools"]["bytes"] > 0
    assert parts["envelope"]["bytes"] >= 0
    assert report["window"] > 0 and 0 < report["share"] < 1
    # The rules file the client loaded by itself, and the same text in our Layer-0B.
    rules = parts[RULES_FILE[client]]
    assert rules["kind"] == "rules" and rules["bytes"] == len(RULES.encode("utf-8"))
    assert {(d["first"], d["second"]) for d in report["duplicates"]} == {
        (RULES_FILE[client], "Layer-0B Workspace rules")
    }
    # The request as kept: compose's system prompt byte for byte in what the model reads.
    kept = remembered_capture(client, report["client_version"], environ=env)
    assert kept is not None and kept.request.size == report["request_bytes"]
    assert expected in request_streams(kept.request.json())[0]
    assert _files(root) == before  # nothing was written to the project


def test_codex_keeps_only_the_start_of_a_long_agents_md(tmp_path: Path) -> None:
    rules = "".join(f"## Rule {n}\n\n" + "rule text " * 60 + "\n\n" for n in range(80))
    root = make_project(tmp_path, "Rules.\n", {"AGENTS.md": rules})
    done, _ = _capture(root, tmp_path / "home", "codex", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    part = next(p for p in report["parts"] if p["name"] == "AGENTS.md")
    assert part["bytes"] == 32_768
    assert part["note"] == f"32,768 of its {len(rules.encode()):,} bytes sent"
    assert sum(p["bytes"] for p in report["parts"]) == report["request_bytes"]


def test_a_missing_client_is_one_line(tmp_path: Path) -> None:
    root = make_project(tmp_path, "Rules.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPTDECK_")}
    env.update(HOME=str(tmp_path / "home"), PROMPTDECK_CLAUDE_BIN=str(tmp_path / "no-claude"))
    done = subprocess.run(
        [*PROMPTDECK, "capture", "--story", "1.2"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 12
    assert len(done.stderr.strip().splitlines()) == 1
    assert "claude CLI was not found" in done.stderr
