"""End to end with the real ``codex`` CLI against a loopback fake of the OpenAI Responses API.

The CLI runs for real — its argv, the profile promptdeck links into ``CODEX_HOME``, stdin,
``--json`` — and talks to :class:`FakeResponses` on 127.0.0.1 through a custom provider. The
tests check the recorded requests: what ``promptdeck compose --part system`` prints arrives
exactly as Codex developer instructions (Codex's own base prompt kept ahead of it), the user
message arrives alone as the user's turn, a 140 KB system prompt included; the reply's signal
sets the exit code; a second ``chat`` turn carries only its message. The process's HTTPS proxy
is the fake itself, so anything meant to leave the loopback is recorded and refused (Codex does
try other hosts, see docs/CODEX.md): nothing reaches them.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from e2e_project import PNG, PROMPTDECK, TIMEOUT, agent_cli, compose, make_project
from fake_responses import ResponsesRequest, is_model_request, is_outbound
from loopback_session import session

pytestmark = pytest.mark.e2e

CODEX = agent_cli("codex", "@openai/codex")
LOOPBACK_SESSION = Path(__file__).with_name("loopback_session.py")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    rules = "  Keep functions small. Überprüfe alles.\n\n"
    return make_project(tmp_path, rules, {"docs/screen.png": PNG})


def _in_namespace(*args: str) -> list[str]:
    """The argv running ``loopback_session.py args`` in a network namespace of its own."""
    return ["unshare", "-rn", sys.executable, str(LOOPBACK_SESSION), *args]


def _isolated() -> bool:
    """True when ``unshare -rn`` can give the run a network namespace of its own."""
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(_in_namespace("--probe"), capture_output=True, timeout=60)
    return done.returncode == 0


ISOLATED = _isolated()


@dataclass
class Session:
    """What a loopback session gave: the commands' results and the fake's requests."""

    results: list[dict[str, Any]]
    requests: list[ResponsesRequest]

    def model_requests(self) -> list[ResponsesRequest]:
        return [r for r in self.requests if is_model_request(r)]

    def outbound(self) -> list[ResponsesRequest]:
        return [r for r in self.requests if is_outbound(r)]


def _session(root: Path, home: Path, replies: list[str], *commands: list[str]) -> Session:
    """Run promptdeck ``commands`` against the fake: in a network namespace whose only
    interface is the loopback where ``unshare`` allows it, else with the fake as the
    processes' HTTPS proxy (which records and refuses anything meant for another host)."""
    spec = {
        "root": str(root),
        "home": str(home),
        "codex": CODEX,
        "replies": replies,
        "commands": [[*PROMPTDECK, *argv, "--agent", "codex"] for argv in commands],
    }
    if ISOLATED:
        spec_file, out_file = home.parent / "spec.json", home.parent / "out.json"
        spec_file.write_text(json.dumps(spec))
        done = subprocess.run(
            _in_namespace(str(spec_file), str(out_file)),
            capture_output=True,
            text=True,
            timeout=TIMEOUT * 3,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        out = json.loads(out_file.read_text())
        assert out["interfaces"] == ["lo"]
    else:
        out = session(spec)
    return Session(out["results"], [ResponsesRequest(**r) for r in out["requests"]])


def _developer_parts(request: ResponsesRequest) -> list[str]:
    return [text for message in request.texts("developer") for text in message]


def _check_delivery(request: ResponsesRequest, system: str, user: str) -> None:
    developer = request.texts("developer")
    # Codex's own base prompt first, kept; then promptdeck's system prompt, exact, as the
    # first part of the next developer message.
    assert developer[0][0].startswith("You are Codex")
    assert developer[1][0] == system
    users = request.texts("user")
    # The user's turn is the message alone (Codex wraps attached images in tags of its own).
    wrappers = [t for t in users[-1] if t.startswith("<image name=") or t == "</image>"]
    assert [t for t in users[-1] if t not in wrappers] == [user]
    assert not any(system[:400] in text for message in users for text in message)


def _user_md(root: Path, number: int = 0) -> str:
    runs = sorted((root / ".promptdeck" / "runs").glob("*/user.md"))
    return runs[number].read_text(encoding="utf-8")


def _no_leftovers(home: Path, seen: Session) -> None:
    assert not list((home / ".codex").glob("promptdeck-*"))
    assert {r.headers.get("host", "").split(":")[0] for r in seen.model_requests()} == {"127.0.0.1"}


def test_run_delivers_the_exact_system_prompt_as_developer_instructions(
    project: Path, tmp_path: Path
) -> None:
    system = compose(project)
    home = tmp_path / "home"
    reply = "Implemented the parser.\nIMPLEMENTATION COMPLETE: 1.2"
    seen = _session(project, home, [reply], ["run", "1.2", "--phase", "dev"])
    done, requests = seen.results[0], seen.model_requests()
    assert requests, f"the fake API saw no request; stderr: {done['stderr'][-2000:]}"
    assert done["returncode"] == 0, done["stderr"][-2000:]
    assert "IMPLEMENTATION COMPLETE: 1.2" in done["stdout"]
    _check_delivery(requests[0], system, _user_md(project))
    result = json.loads(next((project / ".promptdeck" / "runs").glob("*/result.json")).read_text())
    # Context use from the last model call, as Codex's own session record has it.
    assert result["context_tokens"] == 12_000 and result["context_window"] > 0
    assert result["usage"]["input"] + result["usage"]["cache_read"] == 12_000
    _no_leftovers(home, seen)


def test_a_failure_signal_exits_4(project: Path, tmp_path: Path) -> None:
    system = compose(project)
    home = tmp_path / "home"
    reply = "I could not finish.\nIMPLEMENTATION BLOCKED: 1.2 - no fixture"
    seen = _session(project, home, [reply], ["run", "1.2", "--phase", "dev"])
    done, requests = seen.results[0], seen.model_requests()
    assert requests and _developer_parts(requests[0])[1] == system
    assert done["returncode"] == 4, done["stderr"][-2000:]
    _no_leftovers(home, seen)


def test_a_140_kb_system_prompt_and_an_image_arrive_whole(project: Path, tmp_path: Path) -> None:
    line = "The ledger keeps every amount in cents; never round twice.\n"
    (project / "big-context.md").write_text(line * (140 * 1024 // len(line) + 1))
    system = compose(project, "--file", "big-context.md")
    assert len(system.encode("utf-8")) > 140 * 1024  # over MAX_ARG_STRLEN: argv could not
    home = tmp_path / "home"
    argv = ["run", "1.2", "--phase", "dev", "--file", "big-context.md"]
    argv += ["--image", "docs/screen.png"]
    seen = _session(project, home, ["All checks pass.\nIMPLEMENTATION COMPLETE: 1.2"], argv)
    done, requests = seen.results[0], seen.model_requests()
    assert requests, f"the fake API saw no request; stderr: {done['stderr'][-2000:]}"
    assert done["returncode"] == 0, done["stderr"][-2000:]
    _check_delivery(requests[0], system, _user_md(project))
    images = requests[0].images()
    assert len(images) == 1 and images[0].startswith("data:image/png;base64,")
    assert base64.b64decode(images[0].split(",", 1)[1]) == PNG
    meta = json.loads(next((project / ".promptdeck" / "runs").glob("*/meta.json")).read_text())
    assert meta["images"] == [{"path": "docs/screen.png", "type": "image/png", "bytes": len(PNG)}]
    _no_leftovers(home, seen)


def test_chat_sends_the_system_prompt_once(project: Path, tmp_path: Path) -> None:
    system = compose(project)
    home = tmp_path / "home"
    replies = ["Started on the parser.", "Done.\nIMPLEMENTATION COMPLETE: 1.2"]
    argv = ["chat", "1.2", "-m", "Start with the parser.", "-m", "Finish."]
    seen = _session(project, home, replies, argv)
    done, requests = seen.results[0], seen.model_requests()
    assert done["returncode"] == 0, done["stderr"][-2000:]
    assert len(requests) == 2, done["stderr"][-2000:]
    first, second = requests
    _check_delivery(first, system, _user_md(project, 0))
    assert _user_md(project, 0).endswith("\n\nStart with the parser.")
    # The second turn: only "Finish." is new; the system prompt is in the thread's replayed
    # developer instructions once, and in no user message.
    assert second.texts("user")[-1] == ["Finish."]
    texts = [t for role in ("developer", "user") for m in second.texts(role) for t in m]
    assert sum(text.count(system) for text in texts) == 1
    assert _user_md(project, 1) == "Finish."
    logs = sorted((project / ".promptdeck" / "runs").glob("*/session.log"))
    assert "counters: initial=1 reinjections=0 failures=0" in logs[-1].read_text()
    _no_leftovers(home, seen)


@pytest.mark.parametrize("delivery", ["layered", "cache-aware"])
def test_both_deliveries_send_what_compose_prints(
    project: Path, tmp_path: Path, delivery: str
) -> None:
    system = compose(project, "--delivery", delivery)
    user = compose(project, "--delivery", delivery, "--part", "user")
    # Composed before the run: the run writes the story's status back, and so changes it.
    review = compose(project, "--delivery", delivery, "--phase", "review")
    reply = "Implemented the parser.\nIMPLEMENTATION COMPLETE: 1.2"
    seen = _session(
        project,
        tmp_path / "home",
        [reply],
        ["run", "1.2", "--phase", "dev", "--delivery", delivery],
    )
    done, requests = seen.results[0], seen.model_requests()
    assert requests, f"the fake API saw no request; stderr: {done['stderr'][-2000:]}"
    assert done["returncode"] == 0, done["stderr"][-2000:]
    _check_delivery(requests[0], system, user)
    assert _user_md(project) == user
    if delivery == "cache-aware":
        assert user.startswith("## Contract")
        assert review == system
