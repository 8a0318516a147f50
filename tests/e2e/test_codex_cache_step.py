"""The cache ``inspect --cache`` predicts for Codex is what the real ``codex`` sends: story 1.2
stepped through dev then review (cache-aware delivery) against the loopback fake of the
Responses API; the two phases' requests share, in OpenAI's 128-token steps from 1,024, what was
predicted from a capture before dev ran (within 1 %)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from e2e_project import PROMPTDECK, TIMEOUT, make_project
from promptdeck.core.capture import measured_shared
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.tokens import get_counter
from test_codex_cli import CODEX, _session

pytestmark = pytest.mark.e2e

CONTEXT = "_bmad-output/planning-artifacts/sprint-project-context.md"
REPLIES = ["Done.\nIMPLEMENTATION COMPLETE: 1.2", "Fine.\nREVIEW PASSED: 1.2"]


def test_dev_then_review_share_what_inspect_predicted(tmp_path: Path) -> None:
    config = (
        f'delivery = "cache-aware"\n\n[agent]\ncodex_bin = "{CODEX}"\n'
        'codex_args = ["-m", "gpt-5.5"]\n'
    )
    files = {
        ".promptdeck/config.toml": config,
        CONTEXT: "# Project context\n\n" + "Python 3.11, pytest, no ORM. " * 400 + "\n",
    }
    root = make_project(tmp_path, "Keep functions small.\n", files)
    trust_config(open_workspace(root))
    home = tmp_path / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CODEX_", "PROMPTDECK_"))
    }
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / "cache"), NO_COLOR="1")
    env["PROMPTDECK_CODEX_BIN"] = CODEX

    def promptdeck(*args: str) -> str:
        done = subprocess.run(
            [*PROMPTDECK, *args], cwd=root, env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    promptdeck("capture", "--client", "codex", "--story", "1.2", "--phase", "dev")
    (root / ".promptdeck/config.toml").write_text(
        config.replace("[agent]", '[agent]\ndefault = "codex"')
    )
    trust_config(open_workspace(root))
    report = json.loads(promptdeck("inspect", "1.2", "--cache", "--json", "--phases", "dev,review"))
    (pair,) = report["client_cache"]["pairs"]
    seen = _session(
        root,
        home,
        REPLIES,
        ["run", "1.2", "--phase", "dev", "--delivery", "cache-aware"],
        ["run", "1.2", "--phase", "review", "--delivery", "cache-aware"],
    )
    assert [r["returncode"] for r in seen.results] == [0, 0], seen.results[-1]["stderr"][-2000:]
    first, second = (r.body for r in seen.model_requests()[:2])
    size, tokens, _ = measured_shared(first, second, get_counter(), "openai")
    print(f"predicted {pair['bytes']:,} B {pair['tokens']:,} tok, sent {size:,} B {tokens:,} tok")
    assert tokens >= 1024 and tokens % 128 == 0
    # Within 1 %, and never more than one 128-token step apart: the capture switches Codex's
    # plugin catalogue and update check off, which a run leaves on, so its own text differs.
    assert abs(pair["tokens"] - tokens) <= min(0.01 * tokens, 128), (pair, tokens)
