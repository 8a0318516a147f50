"""Story discovery speed: ``load_catalog`` on the synthetic 10,000-file workspace.

Usage: ``.venv/bin/python bench/discovery.py [--runs N] [--dest PATH]``

* **cold** — the first ``load_catalog`` in a fresh Python process (modules imported, nothing
  of promptdeck warmed up), median over ``--runs`` processes. The operating system's file
  cache is warm: dropping it needs root, and an editor-started tool meets a warm cache too.
* **warm** — repeated calls in one process, median over ``--runs`` calls after one warm-up.

Target (issue 2): discovery < 300 ms on a 2-core machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from synthetic import make_synthetic_workspace

TARGET_MS = 300.0
_COLD_SNIPPET = """
import json, sys, time
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
workspace = open_workspace(sys.argv[1])
start = time.perf_counter()
catalog = load_catalog(workspace)
elapsed = (time.perf_counter() - start) * 1000
print(json.dumps({"ms": elapsed, "stories": len(catalog.stories)}))
"""


def cold_runs(root: str, runs: int) -> list[float]:
    """Milliseconds of the first ``load_catalog`` in each of ``runs`` fresh processes."""
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", _COLD_SNIPPET, root],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        times.append(json.loads(out)["ms"])
    return times


def warm_runs(root: str, runs: int) -> tuple[list[float], int, int]:
    """Milliseconds of ``runs`` repeated calls in this process, plus story/skipped counts."""
    workspace = open_workspace(root)
    catalog = load_catalog(workspace)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        catalog = load_catalog(workspace)
        times.append((time.perf_counter() - start) * 1000)
    return times, len(catalog.stories), len(catalog.skipped)


def machine() -> str:
    """One line describing where the figures were measured."""
    cpu = platform.processor() or platform.machine()
    # Not every system has /proc/cpuinfo; the platform's own name stands in then.
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per figure (default 7)")
    parser.add_argument(
        "--dest",
        type=Path,
        default=Path(__file__).resolve().parent / ".work" / "synthetic",
        help="where the synthetic workspace is built (reused when present)",
    )
    args = parser.parse_args()

    start = time.perf_counter()
    manifest = make_synthetic_workspace(args.dest)
    built_ms = (time.perf_counter() - start) * 1000
    root = str(manifest["root"])

    cold = cold_runs(root, args.runs)
    warm, stories, skipped = warm_runs(root, args.runs)
    cold_median = statistics.median(cold)
    warm_median = statistics.median(warm)

    print("story discovery (load_catalog)")
    print(f"  machine     {machine()}")
    print(f"  workspace   {root} (ready in {built_ms:.0f} ms)")
    print(
        f"  contents    {manifest['artifact_files']:,} artifact files, "
        f"{manifest['stories']} stories in sprint-status, {stories} found, {skipped} skipped"
    )
    print(
        f"  cold        median {cold_median:6.1f} ms  (min {min(cold):.1f}, max {max(cold):.1f}; "
        f"{args.runs} fresh processes)"
    )
    print(
        f"  warm        median {warm_median:6.1f} ms  (min {min(warm):.1f}, max {max(warm):.1f}; "
        f"{args.runs} calls)"
    )
    verdict = "ok" if max(cold_median, warm_median) < TARGET_MS else "OVER TARGET"
    print(f"  target      < {TARGET_MS:.0f} ms: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
