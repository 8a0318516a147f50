"""Benchmark: promptdeck's memory while an agent prints one enormous line.

Builds a git workspace with one story and a ``command`` agent that writes 500 MB on a single
line (in 1 MB writes, no newline) and then its completion signal, runs the real CLI
(``promptdeck run 1-1 --phase dev``) and samples the resident set size of the promptdeck
process — not the agent's — from ``/proc/<pid>/status`` every 10 ms. Target: the peak stays
under 200 MB, while ``stream.log`` still holds every byte.

Usage: ``python bench/run_memory.py [--mb N]``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = """
import sys
chunk = "z" * (1024 * 1024)
for _ in range({mb}):
    sys.stdout.write(chunk)
sys.stdout.write("\\nIMPLEMENTATION COMPLETE: " + sys.argv[1] + "\\n")
"""
STORY = "# Story 1.1: Parse lines\n\nStatus: ready-for-dev\n\n## Tasks\n\n- [ ] Parser\n"


def _rss_kb(pid: int) -> int:
    # The process may have ended between samples: no reading then, not an error.
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _env(root: Path) -> dict[str, str]:
    """The caller's environment with a config home of the bench's own."""
    return {**os.environ, "XDG_CONFIG_HOME": str(root.parent / "xdg")}


def _workspace(root: Path, mb: int) -> None:
    story = root / "_bmad-output" / "implementation-artifacts" / "1-1-parse-lines.md"
    story.parent.mkdir(parents=True)
    story.write_text(STORY)
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "agent.py").write_text(AGENT.format(mb=mb))
    (root / ".promptdeck" / "config.toml").write_text(
        '[agent]\ndefault = "command"\n'
        f'command_argv = ["{sys.executable}", ".promptdeck/agent.py", "{{story}}"]\n'
    )
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    # The bench's own agent: trusted, in a config home of the bench's (not the user's).
    promptdeck = Path(sys.executable).with_name("promptdeck")
    subprocess.run([str(promptdeck), "trust"], cwd=root, env=_env(root), check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=500, help="size of the line in MB")
    args = parser.parse_args()
    promptdeck = Path(sys.executable).with_name("promptdeck")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        _workspace(root, args.mb)
        start = time.perf_counter()
        proc = subprocess.Popen(
            [str(promptdeck), "run", "1-1", "--phase", "dev", "--no-git"],
            cwd=root,
            env=_env(root),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _rss_kb(proc.pid))
            time.sleep(0.01)
        elapsed = time.perf_counter() - start
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        runs = [p for p in (root / ".promptdeck" / "runs").iterdir() if p.name != "dry-run"]
        size = (runs[0] / "stream.log").stat().st_size if runs else 0
    peak_mb = peak / 1024
    print(f"run_memory: {args.mb} MB on one line: exit {proc.returncode} in {elapsed:.1f} s")
    print(f"run_memory: stream.log holds {size:,} bytes")
    print(f"run_memory: peak RSS of promptdeck {peak_mb:.1f} MB (sampled every 10 ms)")
    met = proc.returncode == 0 and peak_mb < 200 and size > args.mb * 1024 * 1024
    print(f"run_memory: target < 200 MB: {'met' if met else 'NOT met'}")
    if proc.returncode != 0:
        print(stderr[-2000:], file=sys.stderr)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
