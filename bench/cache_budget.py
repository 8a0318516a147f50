"""Benchmark section of ``budgets.py``: ``inspect --cache --cost`` with a capture of the client
kept, against the cached ``inspect`` (fresh processes, interleaved, as the other sections).

The capture is made once beforehand with the real ``claude`` (``make bench`` installs it into
``.tools/npm``), started through a wrapper that counts its runs; the measured commands start
the same wrapper, so a run of the client after the capture shows.

Run: .venv/bin/python bench/budgets.py --only cache [--rounds N]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from verdicts import PROMPTDECK, REPOMIX, Verdicts, ms
from versus import FLOOR, PYTHON, interleave, load, run_timed

CLIENT_WRAPPER = """#!/bin/sh
echo "$@" >> {log}
exec {client} "$@"
"""
"""The real ``claude``, its every run counted: the capture and the measured runs start it."""


def _client_runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def section_cache(root: Path, files: list[str], rounds: int, verdicts: Verdicts) -> None:
    """``inspect --cache --cost`` against the cached ``inspect``, with a capture kept."""
    from promptdeck.core.capture import remembered_capture

    print(f"\n== inspect 7-7 --cache --cost, capture kept, fresh processes  [{load()}]")
    gated = "inspect --cache --cost, caches warm"
    home = Path(tempfile.mkdtemp(prefix="pd-bench-cache-"))
    env = {**os.environ, "XDG_CACHE_HOME": str(home / "xdg")}
    for name in ("PROMPTDECK_TOKEN_CACHE", "PROMPTDECK_RESULT_CACHE", "PROMPTDECK_ANSWER_CACHE"):
        env.pop(name, None)
    claude = REPOMIX.with_name("claude")
    if not claude.exists():
        verdicts.failed(gated, "no claude CLI in .tools/npm to make the kept capture (make bench)")
        return
    log, wrapper = home / "client-runs.log", home / "claude"
    wrapper.write_text(CLIENT_WRAPPER.format(log=log, client=claude.resolve()))
    wrapper.chmod(0o755)
    env["PROMPTDECK_CLAUDE_BIN"] = str(wrapper)
    flags = ["--discovery", "--tech-spec", "--root", str(root)]
    made = subprocess.run(
        [PROMPTDECK, "capture", "--story", "7-7", *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    capture = remembered_capture("claude", environ=env)
    if capture is None:
        verdicts.failed(gated, f"no capture kept (exit {made.returncode}): {made.stderr[-300:]}")
        return
    print(f"  kept: {capture.origin()} ({_client_runs(log)} client runs to make it)")
    log.unlink()
    answer_off = {**env, "PROMPTDECK_ANSWER_CACHE": "off"}
    inspect = [PROMPTDECK, "inspect", "7-7", "--json", *flags]
    cache = [PROMPTDECK, "inspect", "7-7", "--cache", "--cost", *flags]
    paths = [str(root / f) for f in files]
    results = interleave(
        {
            "floor": lambda: run_timed([PYTHON, "-c", FLOOR, *paths]),
            "inspect --json, caches warm": lambda: run_timed(inspect, env),
            gated: lambda: run_timed(cache, env),
            "inspect --cache --cost, answer cache off": lambda: run_timed(cache, answer_off),
        },
        rounds,
    )
    for name, samples in results.items():
        print(f"  {name:<52} {ms(samples)}")
    print(f"  ({rounds} interleaved rounds; {load()})")
    verdicts.ratio(
        f"{gated} / inspect --json, caches warm",
        results[gated],
        results["inspect --json, caches warm"],
        1.2,
        faster=False,
    )
    verdicts.ratio(f"{gated} / floor", results[gated], results["floor"], 0.35 * 1.2, faster=False)
    # Every command after the capture, the unmeasured first ones and the answer-off ones too.
    runs = 3 * (rounds + 1)
    verdicts.absolute(
        f"client runs in {runs} commands after the capture", _client_runs(log), 0, "runs"
    )
    shutil.rmtree(home, ignore_errors=True)
