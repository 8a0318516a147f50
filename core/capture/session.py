"""Capture mode: run the real client once against the loopback and show what it sent, part by
part.

The prompt is composed as a run would compose it; its ``system.md`` and ``user.md`` go to a
temporary folder (never the project), the client is launched with the argv a run uses, its API
base URL pointed at :class:`~.loopback.LoopbackCapture` and a dummy key, ``HOME`` a temporary
folder of its own. The main request (the one carrying promptdeck's system text) is taken apart
into the client's own system text, promptdeck's appended system text, the tool schemas, the
user turn and the rest of the JSON (model, settings, quoting): the parts' bytes sum to the
request body's bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.base import LaunchRequest
from ..agents.claude import ClaudeAgent
from ..errors import EXIT_CAPTURE, PromptdeckError
from ..project.trust import check_trusted
from ..project.workspace import Workspace
from ..prompt.request import ComposedPrompt
from ..tokens.counter import TokenCounter
from .loopback import CapturedRequest, LoopbackCapture

CAPTURE_TIMEOUT = 120.0
"""Seconds the client may take before the capture stops (the process is killed)."""
CLIENTS = ("claude",)
_DUMMY_KEY = "sk-ant-capture-not-a-key"
# Variables that could point the client elsewhere or at a real account.
_DROPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "PROMPTDECK_")
_DROPPED_NAMES = ("http_proxy", "https_proxy", "all_proxy")


class CaptureError(PromptdeckError):
    """The capture could not be made (no client, it hung, it sent nothing promptdeck wrote)."""

    exit_code = EXIT_CAPTURE


@dataclass(frozen=True)
class RequestPart:
    """One part of the captured request, with its size.

    Attributes:
        name: ``client system``, ``promptdeck system``, ``tools``, ``user turn`` or ``envelope``.
        text: the part's text as the model reads it (tools and envelope: their JSON).
        bytes: the part's size in the request body.
        tokens: its tokens with promptdeck's encoding (an estimate for another model's).
    """

    name: str
    text: str
    bytes: int
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        """``name``, ``bytes``, ``tokens`` (the text stays out of JSON)."""
        return {"name": self.name, "bytes": self.bytes, "tokens": self.tokens}


@dataclass(frozen=True)
class Capture:
    """What the client sent for one story and phase.

    Attributes:
        request: the main request, exact bytes.
        parts: the request taken apart; their bytes sum to ``request.size``.
        requests: how many requests the client made in all (side requests included).
    """

    client: str
    story_id: str
    phase: str
    request: CapturedRequest
    parts: tuple[RequestPart, ...] = field(default=())
    requests: int = 1

    @property
    def system_text(self) -> str:
        """The request's whole system prompt (its text blocks joined)."""
        return _system_text(self.request.json())

    def to_dict(self) -> dict[str, Any]:
        """The capture as JSON (``capture --json``)."""
        return {
            "client": self.client,
            "story": self.story_id,
            "phase": self.phase,
            "path": self.request.path,
            "request_bytes": self.request.size,
            "cut": self.request.cut,
            "requests": self.requests,
            "parts": [part.to_dict() for part in self.parts],
        }


def _system_text(body: Any) -> str:
    system = body.get("system") if isinstance(body, dict) else None
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "".join(b.get("text", "") for b in system if isinstance(b, dict))
    return ""


def _user_text(messages: Any) -> str:
    """The text of the user messages (string content, or their text blocks), joined."""
    texts: list[str] = []
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "".join(texts)


def _dumped(value: Any) -> str:
    # The client's own JSON spacing is not known; compact JSON is the size of the content.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def request_parts(
    request: CapturedRequest, appended: str, counter: TokenCounter
) -> tuple[RequestPart, ...]:
    """``request`` taken apart around promptdeck's ``appended`` system text.

    The text parts are measured as text (UTF-8), tools as compact JSON; the envelope is the
    rest of the body (model and settings, keys, quoting and escapes), so the parts sum to the
    body's size.
    """
    body = request.json()
    if not isinstance(body, dict):
        raise CaptureError("the captured request is not a JSON object (or was cut)")
    system = _system_text(body)
    ours = appended if appended and appended in system else ""
    client_system = system.replace(ours, "", 1) if ours else system
    user = _user_text(body.get("messages"))
    tools = _dumped(body.get("tools") or [])
    named = [
        ("client system", client_system),
        ("promptdeck system", ours),
        ("tools", tools),
        ("user turn", user),
    ]
    parts = [
        RequestPart(name, text, len(text.encode("utf-8")), counter.count(text))
        for name, text in named
    ]
    rest = request.size - sum(part.bytes for part in parts)
    parts.append(RequestPart("envelope", "", rest, 0))
    return tuple(parts)


def _client_env(home: Path, base_url: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_DROPPED_PREFIXES) and key.lower() not in _DROPPED_NAMES
    }
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY=_DUMMY_KEY,
        NO_PROXY="127.0.0.1,localhost",
        NO_COLOR="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    return env


def _main_request(requests: list[CapturedRequest], appended: str) -> CapturedRequest | None:
    messages = [r for r in requests if r.path.split("?", 1)[0].endswith("/v1/messages")]
    for request in messages:
        if appended and appended in _system_text(request.json()):
            return request
    return None


def capture_prompt(
    workspace: Workspace,
    prompt: ComposedPrompt,
    counter: TokenCounter,
    *,
    client: str = "claude",
    timeout: float = CAPTURE_TIMEOUT,
) -> Capture:
    """Run ``client`` once on ``prompt`` against the loopback and take its request apart.

    Raises:
        CaptureError: the client is missing, did not finish within ``timeout`` seconds, or
            sent no request carrying promptdeck's system text.
        UntrustedConfig: the project's config names the client's program or arguments and
            that version of it is not trusted (as for a run).
    """
    if client not in CLIENTS:
        raise CaptureError(f"capture knows {', '.join(CLIENTS)}, not {client}")
    check_trusted(workspace, client)
    agent = ClaudeAgent(workspace.config)
    with tempfile.TemporaryDirectory(prefix="promptdeck-capture-") as scratch:
        folder = Path(scratch)
        (folder / "home").mkdir()
        (folder / "system.md").write_bytes(prompt.system.encode("utf-8"))
        (folder / "user.md").write_bytes(prompt.user.encode("utf-8"))
        spec = agent.launch(
            LaunchRequest(
                run_dir=folder,
                root=workspace.root,
                story_id=prompt.story.id,
                phase=prompt.request.phase,
            )
        )
        program = spec.argv[0]
        if shutil.which(program) is None:
            raise CaptureError(f"the {client} CLI was not found: {program}")
        with LoopbackCapture() as loopback:
            try:
                subprocess.run(
                    spec.argv,
                    cwd=spec.cwd,
                    input=spec.stdin,
                    env=_client_env(folder / "home", loopback.base_url),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise CaptureError(
                    f"the {client} CLI did not finish within {timeout:.0f} s; capture stopped"
                ) from None
            requests = loopback.requests
    main = _main_request(requests, prompt.system)
    if main is None:
        raise CaptureError(
            f"the {client} CLI sent {len(requests)} request(s), none with promptdeck's system text"
        )
    return Capture(
        client=client,
        story_id=prompt.story.id,
        phase=prompt.request.phase,
        request=main,
        parts=request_parts(main, prompt.system, counter),
        requests=len(requests),
    )
