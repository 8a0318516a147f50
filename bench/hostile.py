"""Discovery with hostile entries: ``load_catalog`` on the synthetic 10,000-file workspace, and
on a copy of it with 100 hostile entries planted in its artifacts folder.

Usage: ``.venv/bin/python bench/hostile.py [--runs N] [--dest PATH]``

The 100 entries, all named like stories so discovery looks at each: 20 FIFOs, 15 symlinks to
``/dev/zero``, 10 to ``/dev/urandom``, 15 symlink loops, 10 symlinks to a file outside the
project, 10 sparse 1 GiB story files, 10 story files whose task list nests 500 deep, and 10
files with a NUL byte or invalid UTF-8. Every one must be skipped with its reason, never read.

Both workspaces are measured warm, in one process, alternating, median over ``--runs`` calls
each: the figure is the ratio hostile / clean. Target (issue 8): at most 1.2.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from discovery import machine
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from synthetic import make_synthetic_workspace

TARGET_RATIO = 1.2
ARTIFACTS = "_bmad-output/implementation-artifacts"


def plant(root: Path, outside: Path) -> int:
    """Plant the 100 hostile entries in ``root``'s artifacts folder; returns how many."""
    folder = root / ARTIFACTS
    outside.mkdir(parents=True, exist_ok=True)
    secret = outside / "secret.md"
    secret.write_text("# Story 99.1: outside\n", encoding="utf-8")
    deep = "".join(f"{'  ' * depth}- [ ] level {depth}\n" for depth in range(500))
    count = 0

    def name(kind: str, index: int) -> Path:
        nonlocal count
        count += 1
        return folder / f"99-{count}-{kind}-{index}.md"

    for i in range(20):
        os.mkfifo(name("fifo", i))
    for i in range(15):
        os.symlink("/dev/zero", name("zero", i))
    for i in range(10):
        os.symlink("/dev/urandom", name("urandom", i))
    for i in range(15):
        path = name("loop", i)
        os.symlink(path.name, path)
    for i in range(10):
        os.symlink(secret, name("outside", i))
    for i in range(10):
        with open(name("sparse", i), "wb") as handle:
            handle.write(b"# Story 99.9: sparse\n")
            handle.truncate(1024**3)
    for i in range(10):
        name("deep", i).write_text(f"# Story 98.{i + 1}: Deep\n\n## Tasks\n\n{deep}")
    for i in range(5):
        name("binary", i).write_bytes(b"# Story 97.1: bin\n\0\0\0")
    for i in range(5):
        name("latin1", i).write_bytes(b"# Story 97.2: caf\xe9\n")
    return count


def median_ms(root: str, runs: int, other: str) -> tuple[float, float, int, int]:
    """Warm medians of ``load_catalog`` on ``root`` and ``other``, measured alternately."""
    first, second = open_workspace(root), open_workspace(other)
    load_catalog(first)
    load_catalog(second)
    a: list[float] = []
    b: list[float] = []
    for _ in range(runs):
        for workspace, times in ((first, a), (second, b)):
            start = time.perf_counter()
            load_catalog(workspace)
            times.append((time.perf_counter() - start) * 1000)
    skipped = len(load_catalog(second).skipped) - len(load_catalog(first).skipped)
    return statistics.median(a), statistics.median(b), len(load_catalog(first).stories), skipped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="calls per workspace (default 9)")
    parser.add_argument(
        "--dest",
        type=Path,
        default=Path(__file__).resolve().parent / ".work",
        help="where the workspaces are built",
    )
    args = parser.parse_args()
    clean = make_synthetic_workspace(args.dest / "synthetic")
    hostile_root = args.dest / "hostile"
    if hostile_root.exists():
        shutil.rmtree(hostile_root)
    shutil.copytree(str(clean["root"]), hostile_root, symlinks=True)
    planted = plant(hostile_root, args.dest / "outside")

    clean_ms, hostile_ms, stories, skipped = median_ms(
        str(clean["root"]), args.runs, str(hostile_root)
    )
    ratio = hostile_ms / clean_ms
    print("story discovery with hostile entries (load_catalog, warm)")
    print(f"  machine     {machine()}")
    print(f"  workspace   {clean['artifact_files']:,} artifact files, {stories} stories")
    print(f"  planted     {planted} hostile entries, {skipped} more files skipped")
    print(f"  clean       median {clean_ms:6.1f} ms")
    print(f"  hostile     median {hostile_ms:6.1f} ms")
    verdict = "ok" if ratio <= TARGET_RATIO else "OVER TARGET"
    print(f"  ratio       {ratio:.2f} (target ≤ {TARGET_RATIO}): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
