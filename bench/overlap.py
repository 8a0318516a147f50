"""The predicted-overlap matrix of a large epic: ``epic_overlap`` on a 200-story epic.

Usage: ``.venv/bin/python bench/overlap.py [--stories N] [--runs N]``

The workspace: one epic of ``--stories`` stories (200 by default) in a ``sprint-status.yaml``,
each story file with four tasks naming files, a File List of six paths and a Code Map table of
four, drawn from a pool of 600 source files so that many pairs meet, and one story in twenty
naming no path at all (its footprint unknown: it runs alone). Timed: the whole
``epic_overlap`` — the catalog read, every story file read, the footprints, the pairs and the
waves — the median of ``--runs`` after a warm-up.

Target: under 1 s for 200 stories.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from promptdeck.core.fleet.overlap import epic_overlap
from promptdeck.core.project.workspace import open_workspace

ART = "_bmad-output/implementation-artifacts"
TARGET_S = 1.0


def make_epic(root: Path, stories: int, seed: int = 7) -> None:
    """Write one epic of ``stories`` stories (see the module's description)."""
    rng = random.Random(seed)
    pool = [f"src/module_{n // 20}/file_{n}.py" for n in range(600)]
    art = root / ART
    art.mkdir(parents=True)
    status = ["development_status:", "  epic-1: in-progress"]
    for number in range(1, stories + 1):
        slug = f"1-{number}-story-{number}"
        status.append(f"  {slug}: ready-for-dev")
        if number % 20 == 0:
            body = "## Tasks / Subtasks\n\n- [ ] Think about it\n"
        else:
            tasks = "".join(f"- [ ] Change `{rng.choice(pool)}`\n" for _ in range(4))
            files = "".join(f"- {rng.choice(pool)}\n" for _ in range(6))
            rows = "".join(f"| `{rng.choice(pool)}` | why |\n" for _ in range(4))
            body = (
                f"## Tasks / Subtasks\n\n{tasks}\n## Dev Agent Record\n\n### File List\n\n"
                f"{files}\n## Code Map\n\n| file | why |\n|---|---|\n{rows}"
            )
        (art / f"{slug}.md").write_text(
            f"# Story 1.{number}: Story {number}\n\nStatus: ready-for-dev\n\n{body}",
            encoding="utf-8",
        )
    (art / "sprint-status.yaml").write_text("\n".join(status) + "\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make_epic(root, args.stories)
        workspace = open_workspace(root)
        plan = epic_overlap(workspace, "1")  # warm-up
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            plan = epic_overlap(open_workspace(root), "1")
            times.append(time.perf_counter() - start)
    median = statistics.median(times)
    verdict = "PASS" if median < TARGET_S else "FAIL"
    print(
        f"overlap: {len(plan.footprints)} stories, {len(plan.overlaps)} overlapping pairs, "
        f"{len(plan.waves)} waves: median {median * 1000:.0f} ms over {args.runs} runs "
        f"(target < {TARGET_S:.0f} s): {verdict}"
    )
    return 0 if median < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
