"""``promptdeck compose`` and ``promptdeck inspect`` through a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
ARTIFACTS = "_bmad-output/implementation-artifacts"
STORY = f"{ARTIFACTS}/1-2-user-registration.md"
FILES = {
    STORY: """\
# Story 1.2: User registration

Status: ready-for-dev

## Acceptance Criteria

1. A new email creates an account — naïve “quotes” kept.

## Tasks / Subtasks

- [ ] Task 1: Registration form (AC: 1)
""",
    "_bmad-output/planning-artifacts/sprint-project-context.md": "# Context\n\nPython.\n",
    ".promptdeck/rules.md": "Always write tests.\n",
    "openspec/changes/add-auth/proposal.md": "# Change: Add auth\n",
    "openspec/changes/add-auth/tasks.md": "## 1. Login\n\n- [ ] 1.1 POST /login\n",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for relpath, text in FILES.items():
        path = tmp_path / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def run(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [PROMPTDECK, *args, "--root", str(root)],
        capture_output=True,
        env=env,
        timeout=120,
    )


def composed(root: Path, **request: object) -> object:
    workspace = open_workspace(root)
    return compose_prompt(
        workspace,
        load_catalog(workspace),
        PromptRequest("1-2", **request),  # type: ignore[arg-type]
        count_tokens=False,
    )


def test_compose_system_is_byte_exact(root: Path) -> None:
    done = run(root, "compose", "1-2", "--part", "system")
    assert done.returncode == 0, done.stderr
    expected = composed(root).system  # type: ignore[attr-defined]
    assert done.stdout == expected.encode("utf-8")
    assert not done.stdout.endswith(b"\n")


def test_compose_user_is_byte_exact(root: Path) -> None:
    done = run(root, "compose", "1-2", "--phase", "review", "--part", "user")
    assert done.returncode == 0
    assert done.stdout == b"Review the staged implementation of story 1-2: User registration."


def test_compose_messages_and_layers_are_json(root: Path) -> None:
    messages = json.loads(run(root, "compose", "1-2", "--part", "messages").stdout)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == composed(root).system  # type: ignore[attr-defined]
    layers = json.loads(run(root, "compose", "1-2", "--part", "layers").stdout)
    assert [x["layerId"] for x in layers][:2] == ["Layer-0A", "Layer-0B"]
    assert len(layers) == 8
    assert layers[1]["source"] == ".promptdeck/rules.md"
    assert all(isinstance(x["tokens"], int) for x in layers)


def test_compose_injection_is_the_xml(root: Path) -> None:
    done = run(root, "compose", "1-2", "--part", "injection", "--no-project-context")
    assert done.stdout.startswith(b"<file_injections rule=")
    assert b"sprint-project-context" not in done.stdout
    assert done.stdout.endswith(b"</file_injections>")


def test_compose_retry_reason_implies_optimize(root: Path) -> None:
    done = run(root, "compose", "1-2", "--retry-reason", "db locked")
    assert done.returncode == 0
    assert b"> db locked" in done.stdout and b"## Mode: optimize" in done.stdout
    bad = run(root, "compose", "1-2", "--mode", "create", "--retry-reason", "x")
    assert bad.returncode == 2 and bad.stdout == b""
    assert bad.stderr.decode().count("\n") == 1


def test_compose_failure_phase_takes_the_failure(root: Path) -> None:
    done = run(
        root, "compose", "1-2", "--phase", "failure", "--failure-phase", "review",
        "--failure-message", "tests still red",
    )  # fmt: skip
    assert done.returncode == 0
    text = done.stdout.decode()
    assert "- **Signal**: REVIEW FAILED" in text
    assert '"tests still red"' in text


def test_compose_unknown_story_is_exit_2(root: Path) -> None:
    done = run(root, "compose", "7-7")
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"no story '7-7'" in done.stderr
    assert b"Traceback" not in done.stderr


def test_inspect_json_keys(root: Path) -> None:
    done = run(root, "inspect", "1-2", "--phase", "review", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    for key in (
        "story", "phase", "files", "total", "envelope", "encoding", "warnings", "layers",
        "signature", "system", "user", "argv_limit", "level",
    ):  # fmt: skip
        assert key in data
    assert data["story"] == "1-2" and data["phase"] == "review"
    assert data["argv_limit"] == 131072
    assert [x["layerId"] for x in data["layers"]] == [
        "Layer-0A", "Layer-0B", "Layer-1", "Layer-2", "Layer-3", "Layer-4", "Layer-5", "Layer-6",
    ]  # fmt: skip
    for row in data["layers"]:
        assert {"layerId", "title", "required", "source", "bytes", "tokens", "sha256"} <= set(row)
    for row in data["files"]:
        assert {"path", "category", "status", "bytes", "tokens", "reason"} <= set(row)
    expected = composed(root, phase="review")
    assert data["signature"] == expected.signature  # type: ignore[attr-defined]
    assert data["system"]["bytes"] == expected.system_meter.bytes  # type: ignore[attr-defined]
    layer_bytes = sum(x["bytes"] for x in data["layers"]) + data["joiner"]["bytes"]
    assert layer_bytes == data["system"]["bytes"]
    # The injection's own total keeps its meaning.
    assert data["total"]["bytes"] == len(expected.injection.text.encode())  # type: ignore[attr-defined]


def test_inspect_table_shows_layers_above_files(root: Path) -> None:
    done = run(root, "inspect", "1-2")
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    # Piped: one record a line, its kind first.
    assert out.index("layer\tLayer-0A\t") < out.index("layer\tLayer-6\t") < out.index("file\t")
    assert "template:layer-1-guardrails.md" in out
    assert "(envelope)" in out and "(joiners)" in out
    assert "131,072" in out
    assert "system prompt" in out and "user message" in out


def test_inspect_warns_when_rules_are_missing(root: Path) -> None:
    (root / ".promptdeck" / "rules.md").unlink()
    done = run(root, "inspect", "1-2")
    assert done.returncode == 0
    assert b"Layer-0B (workspace rules) is missing" in done.stderr
    assert b"Workspace rules (missing)" in done.stdout


def _oversize(root: Path) -> None:
    (root / STORY).write_text("# Story 1.2: User registration\n\n" + "x" * 80_000)
    (root / f"{ARTIFACTS}/1-2-tech-spec.md").write_text("y" * 80_000)


def test_compose_over_the_error_line_is_exit_3_with_one_line(root: Path) -> None:
    _oversize(root)
    done = run(root, "compose", "1-2", "--tech-spec")
    assert done.returncode == 3
    assert done.stdout == b""
    err = done.stderr.decode()
    assert err.count("\n") == 1
    assert "153,600-byte limit" in err and "1-2-tech-spec.md" in err


def test_inspect_over_the_error_line_still_reports_and_exits_3(root: Path) -> None:
    _oversize(root)
    done = run(root, "inspect", "1-2", "--tech-spec", "--json")
    assert done.returncode == 3
    data = json.loads(done.stdout)
    assert data["level"] == "error"
    assert len(data["layers"]) == 8
    table = run(root, "inspect", "1-2", "--tech-spec")
    assert table.returncode == 3
    assert b"file\t" in table.stdout and b"\terror\t" in table.stdout


@pytest.mark.parametrize("phase", ["kickoff", "dev", "review", "failure", "uat", "retro"])
def test_every_phase_composes_for_both_sources(root: Path, phase: str) -> None:
    for story in ("1-2", "add-auth:1"):
        done = run(root, "compose", story, "--phase", phase, "--part", "layers")
        assert done.returncode == 0, done.stderr
        assert len(json.loads(done.stdout)) == 8


def test_every_prompt_size_says_what_it_counts(root: Path) -> None:
    """The bytes sent to the agent (system prompt + user message as composed) are one figure,
    labelled; a file's size on disk is shown only where the file is not read, and says so."""
    system = run(root, "compose", "1-2", "--part", "system").stdout
    user = run(root, "compose", "1-2", "--part", "user").stdout
    size = json.loads(run(root, "inspect", "1-2", "--json").stdout)["size"]
    assert size["sent_bytes"] == len(system) + len(user)
    assert (size["system_bytes"], size["user_bytes"]) == (len(system), len(user))
    assert (size["label"], size["unread_bytes"]) == ("sent to the agent", 0)
    composed_size = json.loads(run(root, "compose", "1-2", "--json").stdout)["size"]
    assert composed_size == size
    text = run(root, "inspect", "1-2").stdout.decode()
    assert (
        f"prompt {len(system) + len(user):,} B sent to the agent (system prompt "
        f"{len(system):,} B + user message {len(user):,} B, as composed)"
    ) in text.splitlines()
    assert f"system prompt {len(system):,} B sent to the agent · " in text
    # A file too large to read: its size on disk is named apart, never as sent.
    big = root / "docs" / "big.md"
    big.parent.mkdir()
    big.write_text("x" * 200_000, encoding="utf-8")
    done = run(root, "inspect", "1-2", "--json", "--include", "docs/big.md")
    assert done.returncode == 3, done.stderr
    answer = json.loads(done.stdout)
    row = next(f for f in answer["files"] if f["path"] == "docs/big.md")
    assert (row["status"], row["bytes"], row["bytes_label"]) == (
        "too-large",
        200_000,
        "on disk, not read",
    )
    assert answer["size"]["unread_bytes"] == 200_000
    assert answer["size"]["sent_bytes"] == answer["system"]["bytes"] + answer["user"]["bytes"]
    shown = run(root, "inspect", "1-2", "--include", "docs/big.md").stdout.decode()
    assert "; 200,000 B more on disk, not read" in shown
    big_row = next(line for line in shown.splitlines() if line.startswith("file\tdocs/big.md"))
    assert big_row.split("\t")[-1].startswith("on disk, not read: ")
