"""The supervisor as capture uses it: the process gets exactly the environment given (nothing
of promptdeck's own), and a helper it left running is ended with its process group."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from promptdeck.core.agents.base import LaunchSpec
from promptdeck.core.supervisor import ProcessSupervisor


def _run(tmp_path: Path, code: str, env: dict[str, str], **options: bool) -> bytes:
    out = bytearray()
    supervisor = ProcessSupervisor(
        LaunchSpec(argv=(sys.executable, "-c", code), cwd=tmp_path, env=env),
        on_stdout=out.extend,
        on_stderr=lambda _: None,
        on_stream_end=lambda _: None,
        cancel=threading.Event(),
        deadline=time.time() + 60,
        timeout=60,
        notice=lambda _: None,
        log=lambda _: None,
        **options,
    )
    assert supervisor.run().returncode == 0
    return bytes(out)


def test_a_whole_environment_leaves_promptdecks_own_out(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "real-key")
    code = "import os; print(os.environ.get('ANTHROPIC_API_KEY', 'none'))"
    env = {"PATH": os.environ.get("PATH", ""), "ANTHROPIC_API_KEY": "dummy"}
    assert _run(tmp_path, code, env, whole_env=True).strip() == b"dummy"
    assert _run(tmp_path, code, {}, whole_env=True).strip() == b"none"
    assert _run(tmp_path, code, {}).strip() == b"real-key"


def test_a_helper_left_running_ends_with_the_group(tmp_path: Path) -> None:
    marker = tmp_path / "helper.pid"
    code = (
        "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(60)'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL);"
        f" open({str(marker)!r}, 'w').write(str(p.pid))"
    )
    _run(tmp_path, code, dict(os.environ), whole_env=True, end_group=True)
    pid = int(marker.read_text())
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return  # killed, waiting for its new parent to reap it
        except FileNotFoundError:
            return
        time.sleep(0.05)
    raise AssertionError("the helper outlived its group")
