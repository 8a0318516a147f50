"""End to end: an interrupted ``codex`` run resumed with ``promptdeck resume``.

The real ``codex`` CLI talks to :class:`FakeResponses` on 127.0.0.1 through a custom provider
(the fake is also every process's HTTPS proxy, so a request meant for another host is recorded
and refused). A first run is left as a ``kill -9`` leaves it (no ``result.json``, its promptdeck
gone); ``promptdeck resume`` then continues it with ``codex exec resume <thread>``, and the API
receives the same developer instructions again — replayed by the thread Codex stored, not sent
by promptdeck a second time — with the resume message as the new user turn.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from e2e_project import (
    PROMPTDECK,
    TIMEOUT,
    agent_cli,
    as_if_killed,
    compose,
    make_project,
    run_folders,
)
from fake_responses import FakeResponses
from loopback_session import _config, _env
from promptdeck.core.fleet import RESUME_MESSAGE
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace

pytestmark = pytest.mark.e2e

CODEX = agent_cli("codex", "@openai/codex")


def _developer(texts: list[list[str]]) -> list[str]:
    return [text for message in texts for text in message]


def test_a_resumed_codex_run_gets_exec_resume_and_the_same_instructions(tmp_path: Path) -> None:
    root = make_project(tmp_path, "Keep functions small.\n")
    system = compose(root)
    home = tmp_path / "home"
    spec = {"root": str(root), "home": str(home), "codex": CODEX}
    replies = ["Still working on the parser.", "Finished the parser.\nIMPLEMENTATION COMPLETE: 1.2"]
    with FakeResponses(replies) as fake:
        (root / ".promptdeck" / "config.toml").write_text(_config(spec, fake), encoding="utf-8")
        trust_config(open_workspace(root))
        env = _env(spec, fake)
        first = subprocess.run(
            [*PROMPTDECK, "run", "1.2", "--phase", "dev", "--agent", "codex"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert first.returncode == 5, first.stderr[-2000:]  # no signal
        [folder] = run_folders(root)
        thread = as_if_killed(folder)
        resumed = subprocess.run(
            [*PROMPTDECK, "resume", folder.name],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        requests = fake.model_requests()
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"session {thread}" in resumed.stdout
    [second] = [p for p in run_folders(root) if p != folder]
    resumed_meta = json.loads((second / "meta.json").read_text())
    argv = resumed_meta["argv"]
    assert argv[argv.index("exec") + 1 :][-3:] == ["resume", thread, "-"]
    assert resumed_meta["continues"] == folder.name
    assert len(requests) >= 2
    first_request, last_request = requests[0], requests[-1]
    # The same instructions: promptdeck's system prompt, exact, after Codex's base prompt —
    # sent with the first run, replayed by the resumed thread.
    assert _developer(first_request.texts("developer"))[1] == system
    assert _developer(last_request.texts("developer")).count(system) == 1
    assert last_request.texts("user")[-1] == [RESUME_MESSAGE]
    assert not any(system[:400] in t for m in last_request.texts("user") for t in m)
    # Every model call went to the loopback fake.
    assert {r.headers.get("host", "").split(":")[0] for r in requests} == {"127.0.0.1"}
