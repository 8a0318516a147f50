"""Reading a large BMAD plan: ``load_catalog`` on 50,000 artifact files against plain Python.

Usage: ``.venv/bin/python bench/plan_scale.py [--stories N] [--runs N] [--dest PATH]``

The workspace: ``--stories`` stories (2,000 by default) in a ``sprint-status.yaml``, split
keys and three-level keys among them, each story with its story file (half of them in a
``stories/`` subfolder named by ``story_location``), a discovery note, a tech-spec and 22 run
logs: 25 files a story, 50,000 in all.

Two baselines in plain Python, each the median of ``--runs`` after a warm-up:

* **same files** — list the implementation folder and ``stories/``, read ``sprint-status.yaml``
  and every story file: what ``stories`` has to read at the least.
* **every file** — list both folders and read every one of the 50,000 files (``os.scandir``
  gives each entry's type without a ``stat``).

Target (issue 20): ``load_catalog`` within 2× of listing and reading the same files in plain
Python — the *every file* baseline; the verdict against the stricter *same files* baseline is
printed beside it. The operating system's file cache is warm in all three (dropping it needs
root).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace

ART = "_bmad-output/implementation-artifacts"
TARGET_RATIO = 2.0


def _key(index: int) -> tuple[str, str]:
    """The id and the sprint-status entry of story ``index``: mostly ``E-S``, every 10th a
    split key (``E-Sa``), every 25th a three-level key beside its parent (``E-S-1``)."""
    epic, story = divmod(index, 40)
    epic += 1
    if index % 25 == 24:
        return f"{epic}-{story}-1", f"{epic}-{story}-1-follow-up-{index}"
    if index % 10 == 9:
        return f"{epic}-{story}a", f"{epic}-{story}a-split-{index}"
    return f"{epic}-{story}", f"{epic}-{story}-story-{index}"


def make_plan(root: Path, stories: int) -> list[Path]:
    """Write the workspace; return the story files (what ``stories`` must read)."""
    art = root / ART
    (art / "stories").mkdir(parents=True)
    lines = [
        f'story_location: "{{project-root}}/{ART}/stories"',
        "development_status:",
    ]
    story_files: list[Path] = []
    body = "\n\n## Story\n\nAs a user, I want it.\n\n## Tasks / Subtasks\n\n- [ ] Do it\n"
    for index in range(stories):
        story_id, entry = _key(index)
        parent = art / "stories" if index % 2 else art
        path = parent / f"{entry}.md"
        heading = story_id.replace("-", ".")
        path.write_text(f"# Story {heading}: Story {index}\n\nStatus: ready-for-dev{body}")
        story_files.append(path)
        lines.append(f"  {entry}: backlog")
        (art / f"sprint-{story_id}-discovery.md").write_text("# Discovery\n\nnotes\n")
        (art / f"tech-spec-{story_id}-plan.md").write_text("# Tech spec\n\nplan\n")
        for run in range(22):
            (art / f"run-{story_id}-{run:04d}.log").write_text("log line\n")
    (art / "sprint-status.yaml").write_text("\n".join(lines) + "\n")
    return story_files


def _median_ms(call: Callable[[], object], runs: int) -> float:
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    """Build the plan, time the three readings, print the figures and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dest", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = (args.dest or Path(scratch)).resolve()
        root.mkdir(parents=True, exist_ok=True)
        story_files = make_plan(root, args.stories)
        art = root / ART
        folders = (art, art / "stories")
        total = sum(len(os.listdir(folder)) for folder in folders)

        def same_files() -> None:
            for folder in folders:
                os.listdir(folder)
            (art / "sprint-status.yaml").read_bytes()
            for path in story_files:
                path.read_bytes()

        def every_file() -> None:
            for folder in folders:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.is_file():
                            with open(entry.path, "rb") as handle:
                                handle.read()

        workspace = open_workspace(root)
        catalog = load_catalog(workspace)
        assert len(catalog.stories) == args.stories, len(catalog.stories)
        ours = _median_ms(lambda: load_catalog(workspace), args.runs)
        same = _median_ms(same_files, args.runs)
        every = _median_ms(every_file, args.runs)
        print(f"files: {total:,} ({args.stories:,} stories, {len(catalog.stories):,} listed)")
        print(f"load_catalog:             {ours:8.1f} ms")
        print(f"plain Python, same files: {same:8.1f} ms  → ratio {ours / same:.2f}")
        print(f"plain Python, every file: {every:8.1f} ms  → ratio {ours / every:.2f}")
        for label, reference in (("every file", every), ("the same files", same)):
            verdict = "within" if ours / reference <= TARGET_RATIO else "OVER"
            print(f"{verdict} the {TARGET_RATIO:.0f}× target against {label}")


if __name__ == "__main__":
    main()
