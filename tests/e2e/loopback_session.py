"""Run promptdeck commands against :class:`FakeResponses`, cut off from every network but the
loopback.

``python loopback_session.py SPEC OUT`` is meant to run under ``unshare -rn`` (a network
namespace of its own whose only interface is ``lo``): it brings ``lo`` up, starts the fake,
writes the project's promptdeck config (the fake's port is known only then), runs each command
and writes their results and the fake's recorded requests to ``OUT`` as JSON. :func:`session`
is the same, in-process; the caller picks.

Every process also gets the fake as its HTTPS proxy, so an attempt to reach another host is
recorded (and refused) whichever way this runs.
"""

from __future__ import annotations

import fcntl
import json
import socket
import struct
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from fake_responses import FakeResponses, codex_provider_args
from loopback_api import agent_env
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
TIMEOUT = 180


def loopback_up() -> None:
    """Bring ``lo`` up (a new network namespace starts with it down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def _config(spec: dict[str, Any], fake: FakeResponses) -> str:
    provider = codex_provider_args(fake.base_url)
    return (
        f'[agent]\ncodex_bin = "{spec["codex"]}"\ntimeout = 150.0\n'
        f"codex_args = {json.dumps(provider)}\n"
    )


def _env(spec: dict[str, Any], fake: FakeResponses) -> dict[str, str]:
    home = Path(spec["home"])
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    return agent_env(
        home,
        ("OPENAI_", "CODEX_"),
        ("http_proxy", "https_proxy", "all_proxy", "no_proxy"),
        CODEX_HOME=str(home / ".codex"),
        FAKE_KEY="sk-test-dummy",
        HTTPS_PROXY=fake.proxy_url,
        HTTP_PROXY=fake.proxy_url,
        ALL_PROXY=fake.proxy_url,
        NO_PROXY="127.0.0.1,localhost",
    )


def session(spec: dict[str, Any]) -> dict[str, Any]:
    """Run ``spec["commands"]`` (argv lists) in ``spec["root"]`` against a fake answering
    ``spec["replies"]``; the commands' results and every request the fake recorded."""
    root = Path(spec["root"])
    with FakeResponses(list(spec["replies"])) as fake:
        (root / ".promptdeck" / "config.toml").write_text(_config(spec, fake), encoding="utf-8")
        # The config names the binary and its arguments: the user trusts this version of it.
        trust_config(open_workspace(root))
        results = []
        for argv in spec["commands"]:
            done = subprocess.run(
                argv,
                cwd=root,
                env=_env(spec, fake),
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
            )
            results.append(
                {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
            )
        requests = [asdict(r) for r in fake.requests]
    return {"results": results, "requests": requests}


def main() -> int:
    if sys.argv[1:] == ["--probe"]:
        loopback_up()
        return 0
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    loopback_up()
    out = session(spec)
    out["interfaces"] = [name for _, name in socket.if_nameindex()]
    Path(sys.argv[2]).write_text(json.dumps(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
