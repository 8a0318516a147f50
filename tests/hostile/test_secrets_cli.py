"""What is sent to the model is what the user meant: only planning documents are key-matched,
hidden files never, every injected file is scanned for secrets (reported by file, line and kind,
never the secret), and ``run`` refuses flagged secrets without ``--allow-secrets`` (exit 8)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hostile._read_helpers import ARTIFACTS, assert_clean, make_cloned, run_cli
from promptdeck.core.injection.builder import build_injection, build_prompt_system_append
from promptdeck.core.secrets.scan import scan_text

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
SSH_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
OPENAI_KEY = "sk-proj-Xq3v9LmPz8KdR2tYw7NcB4hJ6fG1sA0eZ5uI"
KEYS = f"AWS_ACCESS_KEY_ID={AWS_KEY}\nOPENAI_API_KEY={OPENAI_KEY}\n{SSH_KEY}"
NOTES = f"# Ops notes\n\nThe key is below.\n\naws: {AWS_KEY}\n"
AGENT = 'import sys\nprint("IMPLEMENTATION COMPLETE: 1-1")\n'


def _hostile(tmp_path: Path):  # type: ignore[no-untyped-def]
    hostile = make_cloned(
        tmp_path,
        {
            f"{ARTIFACTS}/1-1-deploy.env": KEYS,
            f"{ARTIFACTS}/.1-1-hidden": KEYS,
            f"{ARTIFACTS}/1-1-hidden.md.bak": KEYS,
            f"{ARTIFACTS}/1-1-ops-notes.md": NOTES,
            "agent.py": AGENT,
            ".promptdeck/config.toml": (
                f'[agent]\ncommand_argv = ["{sys.executable}", "agent.py"]\n'
            ),
        },
    )
    # The user has read the clone's config and trusted it: its agent may run.
    assert run_cli(hostile, ["trust"]).code == 0
    return hostile


def _no_secret(text: str) -> None:
    assert AWS_KEY not in text and OPENAI_KEY not in text and "b3BlbnNzaC1rZXkt" not in text


def test_only_visible_planning_documents_are_candidates(tmp_path: Path) -> None:
    hostile = _hostile(tmp_path)
    result = run_cli(hostile, ["inspect", "1-1", "--json"])
    assert_clean(result, hostile, (0,))
    paths = [f["path"] for f in json.loads(result.stdout)["files"]]
    assert f"{ARTIFACTS}/1-1-ops-notes.md" in paths
    for name in ("1-1-deploy.env", ".1-1-hidden", "1-1-hidden.md.bak"):
        assert f"{ARTIFACTS}/{name}" not in paths


def test_secrets_are_reported_by_file_line_and_kind_never_shown(tmp_path: Path) -> None:
    hostile = _hostile(tmp_path)
    notes = f"{ARTIFACTS}/1-1-ops-notes.md"
    inspected = run_cli(hostile, ["inspect", "1-1", "--json"])
    assert_clean(inspected, hostile, (0,))
    payload = json.loads(inspected.stdout)
    assert payload["secrets"] == [{"path": notes, "line": 5, "kind": "AWS Access Key"}]
    _no_secret(inspected.stdout + inspected.stderr)
    table = run_cli(hostile, ["inspect", "1-1"])
    assert_clean(table, hostile, (0,))
    assert "line 5: AWS Access Key" in table.stdout
    assert f"{notes} line 5: looks like a secret (AWS Access Key)" in table.stderr
    _no_secret(table.stdout + table.stderr)
    composed = run_cli(hostile, ["compose", "1-1", "--part", "layers"])
    assert composed.code == 0
    assert f"{notes} line 5: looks like a secret (AWS Access Key)" in composed.stderr


def test_run_refuses_flagged_secrets_unless_allowed(tmp_path: Path) -> None:
    hostile = _hostile(tmp_path)
    base = ["run", "1-1", "--phase", "dev", "--agent", "command", "--no-git"]
    refused = run_cli(hostile, base)
    assert_clean(refused, hostile, (8,))
    errors = [x for x in refused.stderr.splitlines() if not x.startswith("promptdeck: warning:")]
    assert len(errors) == 1
    assert "1-1-ops-notes.md:5: AWS Access Key" in refused.stderr
    assert "--allow-secrets" in refused.stderr
    assert not (hostile.root / ".promptdeck" / "runs").exists()
    allowed = run_cli(hostile, [*base, "--allow-secrets"])
    assert_clean(allowed, hostile, (0,))


def test_chat_refuses_flagged_secrets_on_the_turn_that_sends_them(tmp_path: Path) -> None:
    hostile = _hostile(tmp_path)
    base = ["chat", "1-1", "--agent", "command", "-m", "hello"]
    refused = run_cli(hostile, base)
    assert_clean(refused, hostile, (8,))
    assert "1-1-ops-notes.md:5: AWS Access Key" in refused.stderr
    assert "--allow-secrets" in refused.stderr
    assert not (hostile.root / ".promptdeck" / "runs").exists()
    allowed = run_cli(hostile, [*base, "--allow-secrets"])
    assert_clean(allowed, hostile, (0,))
    assert (hostile.root / ".promptdeck" / "runs").is_dir()


def test_the_scan_finds_the_usual_credentials() -> None:
    kinds = {f.kind for f in scan_text("notes.yaml", f"aws: {AWS_KEY}\n{SSH_KEY}")}
    assert {"AWS Access Key", "Private Key"} <= kinds
    assert scan_text("notes.md", "# Plan\n\nNothing secret here: sha 3f9c2e1.\n") == ()


def test_python_api_rejects_a_string_of_keys_and_skips_a_nul_path(tmp_path: Path) -> None:
    (tmp_path / ARTIFACTS).mkdir(parents=True)
    (tmp_path / ARTIFACTS / "1-4-story.md").write_text("# Story 1.4: x\n", encoding="utf-8")
    with pytest.raises(TypeError, match="story_keys"):
        build_injection(tmp_path, "dev", "1-4")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="story_keys"):
        build_prompt_system_append(tmp_path, "dev", "1-4")  # type: ignore[arg-type]
    injection = build_injection(tmp_path, "dev", ["1-4"], additional_files=["a\0b.md"])
    row = next(f for f in injection.files if f.category == "additional")
    assert row.status == "unreadable" and "NUL" in row.reason
    assert "# Story 1.4: x" in build_prompt_system_append(
        tmp_path, "dev", ["1-4"], additional_files=["a\0b.md"]
    )
