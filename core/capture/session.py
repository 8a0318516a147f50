"""Capture mode: run the real client once against the loopback and show what it sent, part by
part.

The prompt is composed as a run would compose it; its ``system.md`` and ``user.md`` go to a
temporary folder (never the project), the client is launched with the argv a run uses, its API
base URL pointed at :class:`~.loopback.LoopbackCapture`, a dummy key, ``HOME`` (and Codex's
``CODEX_HOME``) temporary folders of its own and the loopback as its only proxy
(:mod:`.clients`). The main request (the one carrying promptdeck's system text) is taken apart
by :func:`~.parts.split_request`; the parts sum to the request body's bytes.

The client is the program a run would start, found only on absolute ``PATH`` entries outside
the project (:func:`~promptdeck.core.processes.resolve_program`: a repository's ``bin/claude``
on a relative entry never runs), and it starts with the project's own client settings switched
off unless the user trusted the project (:mod:`.clients`).

The capture stops, with one line (exit 12), when the client is missing, says no version or one
older than :data:`~.clients.MINIMUM_VERSIONS`, does not finish within the bound, or tries to
reach any host but the loopback (it is stopped at the first attempt; nothing was sent).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..agents.base import LaunchRequest, LaunchSpec
from ..client_loads import model_window
from ..errors import EXIT_CAPTURE, PromptdeckError
from ..layers.delivery import Delivered, Segment
from ..processes import resolve_program
from ..project.config import Config
from ..project.trust import check_trusted, client_settings_trusted
from ..project.workspace import Workspace
from ..prompt.request import ComposedPrompt
from ..supervisor import ProcessSupervisor
from ..terminal import printable_line
from ..tokens.counter import TokenCounter
from .clients import (
    CLIENTS,
    MINIMUM_VERSIONS,
    client_env,
    client_launch,
    client_program,
    parse_version,
    project_settings_left_out,
    too_old,
)
from .loopback import CapturedRequest, LoopbackCapture
from .model import Capture
from .parts import duplicated_text, request_streams, split_request
from .user_config import place_user_config, read_user_config
from .versions import remember_version, remembered_version

CAPTURE_TIMEOUT = 120.0
"""Seconds the client may take before the capture stops (the process is killed)."""
VERSION_TIMEOUT = 20.0
"""Seconds ``--version`` may take (within the capture's own bound)."""
_STOP_GRACE = 1.0
"""Seconds a stopped client has to end by itself before its session is killed."""
_SAID_BYTES = 4096
"""How much of the client's stdout (its version) and stderr (its last line) is read."""
_CLOSED_PORT = "http://127.0.0.1:9"
"""The proxy ``--version`` gets outside a capture: the discard port, where nothing listens."""
_MODEL_ROUTES = ("/messages", "/responses")


class CaptureError(PromptdeckError):
    """The capture could not be made (no client, too old, it hung, it tried to reach another
    host, it sent nothing promptdeck wrote)."""

    exit_code = EXIT_CAPTURE


def _delivered(prompt: ComposedPrompt) -> Delivered:
    """Where compose put each layer; a prompt composed without segments is one piece each."""
    if prompt.delivered is not None:
        return prompt.delivered
    return Delivered(
        "layered", (Segment("promptdeck system", prompt.system),), (Segment("task", prompt.user),)
    )


def client_path(program: str, client: str, root: Path | None) -> str:
    """The absolute path of the client ``program`` names, found as every program promptdeck
    starts is found (:func:`~promptdeck.core.processes.resolve_program`).

    Raises:
        CaptureError: no such program on an absolute ``PATH`` entry outside the project.
    """
    found = resolve_program(program, None if root is None else root.resolve())
    if found is None:
        raise CaptureError(
            f"the {client} CLI was not found: {printable_line(program)} (looked for on "
            "absolute PATH entries outside the project)"
        )
    return found


def client_version(program: str, client: str, env: dict[str, str], timeout: float) -> str:
    """``program --version``'s version number; ``program`` is an absolute path
    (:func:`client_path`). The answer is remembered for the program file (:mod:`.versions`).

    Raises:
        CaptureError: missing, hung, or no version said.
    """
    try:
        ended, out, _ = _run(
            [program, "--version"],
            Path(env["HOME"]),
            None,
            env,
            time.monotonic() + timeout,
            threading.Event(),
        )
    except OSError as exc:
        raise CaptureError(f"the {client} CLI could not be started: {exc.strerror}") from None
    if not ended:
        raise CaptureError(
            f"the {client} CLI did not finish within {timeout:.0f} s (--version); capture stopped"
        )
    version = parse_version(out)
    if version is None:
        raise CaptureError(f"the {client} CLI said no version number (--version); capture stopped")
    remember_version(program, version)  # a capture's ask answers the next forecast's
    return version


def _checked_version(program: str, client: str, env: dict[str, str], timeout: float) -> str:
    """:func:`client_version`, refused when older than the oldest capture runs."""
    version = client_version(program, client, env, timeout)
    if too_old(client, version):
        oldest = ".".join(map(str, MINIMUM_VERSIONS[client]))
        raise CaptureError(
            f"the {client} CLI is {version}; capture needs {oldest} or later (update it)"
        )
    return version


def installed_version(
    config: Config, client: str, *, timeout: float = VERSION_TIMEOUT, root: Path | None = None
) -> str | None:
    """The version of ``client`` as a run would start it (its ``--version``, run as a capture
    runs the client: a temporary home, no host but a closed loopback port reachable); None
    when it is missing, hangs or says no version. With :func:`~.memory.remembered_capture`,
    this tells whether a kept capture is of the installed version. The answer is remembered
    per program file (:mod:`.versions`): an unchanged client is not started again."""
    with tempfile.TemporaryDirectory(prefix="promptdeck-version-") as scratch:
        folder = Path(scratch)
        for home in ("home", "codex"):
            (folder / home).mkdir()
        env = client_env(client, folder, _CLOSED_PORT)
        try:
            program = client_path(client_program(config, client), client, root)
            return remembered_version(program) or client_version(program, client, env, timeout)
        except CaptureError:
            return None


class _Said:
    """The start of what the client wrote on stdout (its version) and the end of its stderr
    (its last line), each bounded to :data:`_SAID_BYTES`."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()

    def out(self, data: bytes) -> None:
        self.head += data[: max(_SAID_BYTES - len(self.head), 0)]

    def err(self, data: bytes) -> None:
        self.tail = (self.tail + data)[-_SAID_BYTES:]

    def last_line(self) -> str:
        lines = self.tail.decode("utf-8", "replace").splitlines()
        said = next((line.strip() for line in reversed(lines) if line.strip()), "")
        return printable_line(said)[:200]


def _run(
    argv: Sequence[str],
    cwd: Path,
    stdin: bytes | None,
    env: dict[str, str],
    deadline: float,
    stop: threading.Event,
) -> tuple[bool, str, str]:
    """Run the client under the run's own process supervisor
    (:class:`~promptdeck.core.supervisor.ProcessSupervisor`) until it ends, the deadline
    (monotonic) passes or ``stop`` is set (then it is stopped, with :data:`_STOP_GRACE`
    seconds to end by itself after each signal): whether it ended by itself, the start of its
    stdout and the last line of its stderr. ``env`` is the client's whole environment.

    The client runs in a process group of its own, killed whole once it is over, so no helper
    it started outlives the capture and its temporary home.

    Raises:
        OSError: the program could not be started.
    """
    said = _Said()
    supervisor = ProcessSupervisor(
        LaunchSpec(argv=tuple(argv), cwd=cwd, env=env, stdin=stdin or b""),
        on_stdout=said.out,
        on_stderr=said.err,
        on_stream_end=lambda _: None,
        cancel=stop,
        deadline=time.time() + max(deadline - time.monotonic(), 0.0),
        timeout=max(deadline - time.monotonic(), 0.0),
        cancel_grace=(_STOP_GRACE, _STOP_GRACE),
        notice=lambda _: None,
        log=lambda _: None,
        whole_env=True,
        end_group=True,
    )
    ended = supervisor.run()
    if ended.launch_error is not None:
        raise OSError(errno.ENOENT, ended.launch_error)
    stopped = supervisor.cancelled or supervisor.timed_out
    return not stopped, bytes(said.head).decode("utf-8", "replace"), said.last_line()


def _main_request(requests: list[CapturedRequest], system: str) -> CapturedRequest | None:
    """The model request carrying promptdeck's system text; else the first model request that
    was cut at the memory bound (it cannot be searched)."""
    models = [r for r in requests if r.method == "POST" and r.route.endswith(_MODEL_ROUTES)]
    for request in models:
        if system and system in request_streams(request.json())[0]:
            return request
    return next((request for request in models if request.cut), None)


def capture_prompt(
    workspace: Workspace,
    prompt: ComposedPrompt,
    counter: TokenCounter,
    *,
    client: str = "claude",
    timeout: float = CAPTURE_TIMEOUT,
    stop: threading.Event | None = None,
    with_mcp: bool = False,
    environ: Mapping[str, str] | None = None,
) -> Capture:
    """Run ``client`` once on ``prompt`` against the loopback and take its request apart.

    The user's real client configuration (its home from ``environ``, default the process's)
    is read, never written, and its rules and request-shaping settings are placed in the
    capture's temporary home (:mod:`.user_config`); ``with_mcp`` starts the configured MCP
    servers (they are programs), otherwise each is listed as not started.

    ``stop``, when set from another thread (the app's view closing, the app quitting), kills
    the client at once and ends the capture with :class:`CaptureError`.

    Raises:
        CaptureError: the client is missing, too old, did not finish within ``timeout``
            seconds, tried to reach another host, or sent no request carrying promptdeck's
            system text.
        UntrustedConfig: the project's config names the client's program or arguments and
            that version of it is not trusted (as for a run).
        UsageError: the run's own launch refuses (Codex settings that would replace
            promptdeck's system prompt).
    """
    # One piece: the scratch home, the loopback and the client's process live exactly as
    # long as the `with` block, and what is kept of them is read inside it; the refusals
    # after it are the order a user hears them in.
    if client not in CLIENTS:
        raise CaptureError(f"capture knows {', '.join(CLIENTS)}, not {printable_line(client)}")
    check_trusted(workspace, client)
    started = time.monotonic()
    deadline = started + timeout
    program = client_path(client_program(workspace.config, client), client, workspace.root)
    own_settings = client_settings_trusted(workspace)
    left_out = project_settings_left_out(workspace.root, client, own_settings)
    user = read_user_config(
        client,
        workspace.root,
        os.environ if environ is None else environ,
        own_settings=own_settings,
        with_mcp=with_mcp,
    )
    # One event ends the client's run: set by the loopback on a reach for another host, or by
    # the caller's ``stop``.
    halt = stop if stop is not None else threading.Event()
    with (
        tempfile.TemporaryDirectory(prefix="promptdeck-capture-") as scratch,
        # Only a tunnel carrying the capture's token (the client's proxy credentials) ends
        # the capture: any other process's is answered and noted.
        LoopbackCapture(on_refused=lambda host: halt.set(), proxy_token_required=True) as loopback,
    ):
        folder = Path(scratch)
        run_dir = folder / "run"
        run_dir.mkdir()
        (run_dir / "system.md").write_bytes(prompt.system.encode("utf-8"))
        (run_dir / "user.md").write_bytes(prompt.user.encode("utf-8"))
        env = client_env(client, folder, loopback.address, loopback.proxy_address)
        for home in ("home", "codex"):
            (folder / home).mkdir(exist_ok=True)
        place_user_config(user, folder / ("codex" if client == "codex" else "home"))
        servers = None
        if user.mcp_config:
            servers = folder / "mcp.json"
            servers.write_text(json.dumps(user.mcp_config), encoding="utf-8")
        version = _checked_version(program, client, env, min(VERSION_TIMEOUT, timeout))
        launch = client_launch(
            client,
            workspace.config,
            LaunchRequest(
                run_dir=run_dir,
                root=workspace.root,
                story_id=prompt.story.id,
                phase=prompt.request.phase,
            ),
            folder,
            loopback.address,
            program=program,
            own_settings=own_settings,
            settings_files=bool(left_out),
            proxy=loopback.proxy_address,
            mcp_config=servers,
            client_version=version,
        )
        spec = launch.spec
        scope = spec.scope() if spec.scope is not None else contextlib.nullcontext()
        with scope:
            ended, _, said = _run(spec.argv, spec.cwd, spec.stdin, launch.env, deadline, halt)
        requests = loopback.requests
        hosts = loopback.refused
        strays = loopback.notes
    if hosts:
        raise CaptureError(
            f"the {client} CLI tried to reach {printable_line(hosts[0])}"
            + (f" and {len(hosts) - 1} other host(s)" if len(hosts) > 1 else "")
            + "; refused, nothing was sent, capture stopped"
        )
    if not ended and halt.is_set():
        raise CaptureError(f"capture stopped before the {client} CLI finished; nothing was kept")
    if not ended:
        raise CaptureError(
            f"the {client} CLI did not finish within {timeout:.0f} s; capture stopped"
        )
    main = _main_request(requests, prompt.system)
    if main is None:
        raise CaptureError(
            f"the {client} CLI sent {len(requests)} request(s), none with promptdeck's system text"
            + (f"; it said: {said}" if said else "")
        )
    parts = split_request(main, _delivered(prompt), user.rules, counter)
    body = main.json()
    model = str(body.get("model") or "") if isinstance(body, dict) else ""
    return Capture(
        client=client,
        client_version=version,
        story_id=prompt.story.id,
        phase=prompt.request.phase,
        model=model,
        window=model_window(client, model),
        request=main,
        parts=parts,
        duplicates=duplicated_text(parts),
        requests=len(requests),
        captured_at=time.time(),
        notes=((left_out,) if left_out else ()) + user.notes + tuple(strays),
    )
