"""``stories`` on a BMAD v7 initiative tree of 5,000 tickets, against plain Python.

Usage: ``.venv/bin/python bench/v7_tree.py [--stories N] [--rounds N] [--dest PATH]``

The tree: 50 epics of 100 entries, each entry with its ``story-<slug>.md`` and its
``story-<slug>-plan.md`` (front matter ``ticket`` and ``status``), so 10,000 Markdown files
and 51 ``tickets.toml`` files. Fresh processes (interpreter start included), interleaved in
rounds (A B C, then C B A, …) after one unmeasured run each, so the file cache is warm; the
ratios are medians of the per-round ratios with their spread:

* **promptdeck** — ``promptdeck stories --json`` with the remembered answer off
  (``PROMPTDECK_ANSWER_CACHE=off``): the guarded reader, TOML and front matter parsed,
  tickets joined to their plans, statuses read; once with its remembered readings, once with
  every cache off (``PROMPTDECK_RESULT_CACHE=off``, a new cache folder);
* **plain Python** — a fresh ``python`` that walks the same tree with ``os.walk``, opens and
  reads every file as text and parses every ``tickets.toml`` with ``tomllib``: the least any
  reader of this tree must do.

Target (issue 20): promptdeck within 2× of plain Python.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from versus import PROMPTDECK, PYTHON, interleave, load, ms, ratio, run_timed

TARGET_RATIO = 2.0
EPIC_SIZE = 100
STATUSES = ("draft", "ready-for-dev", "in-progress", "in-review", "built", "blocked", "done")


def make_tree(root: Path, stories: int) -> None:
    """A v7 initiative of ``stories`` tickets under ``root``."""
    (root / "_bmad/custom").mkdir(parents=True)
    (root / "_bmad/custom/config.user.toml").write_text(
        '[modules.bmm]\nactive_initiative = "initiative-bench"\n'
    )
    initiative = root / "_bmad-output/initiative-bench"
    initiative.mkdir(parents=True)
    epics = (stories + EPIC_SIZE - 1) // EPIC_SIZE
    epic_tables = "".join(
        f'[[epic]]\nid = {e}\nslug = "area-{e}"\ntitle = "Area {e}"\ncovers = ["CAP-{e}"]\n\n'
        for e in range(1, epics + 1)
    )
    (initiative / "tickets.toml").write_text(epic_tables)
    made = 0
    for e in range(1, epics + 1):
        folder = initiative / f"epic-area-{e}"
        folder.mkdir()
        (folder / f"epic-area-{e}.md").write_text(f"# Epic: Area {e}\n\nWhat area {e} is for.\n")
        entries = []
        for n in range(1, EPIC_SIZE + 1):
            if made == stories:
                break
            made += 1
            slug = f"feature-{e}-{n}"
            entries.append(
                f'[[entry]]\nid = {n}\ntype = "story"\ntitle = "Feature {e}.{n}"\n'
                f'description = "What feature {e}.{n} does."\nverify = "test {e}-{n}"\n'
                f'covers = ["CAP-{e}"]\nhitl = false\nrisk = 1\n\n'
            )
            (folder / f"story-{slug}.md").write_text(
                f"# Feature {e}.{n}\n\n## Acceptance\n\n- [ ] It works\n- [x] It is tested\n"
            )
            status = STATUSES[made % len(STATUSES)]
            (folder / f"story-{slug}-plan.md").write_text(
                f"---\nticket: {n}\nstatus: {status}\n---\n\n# Plan: Feature {e}.{n}\n\n"
                "- [x] Step one\n- [ ] Step two\n"
            )
        (folder / "tickets.toml").write_text("".join(entries))


PLAIN_PYTHON = r"""
import os, sys, tomllib
root = sys.argv[1]
count = 0
for folder, _dirs, files in os.walk(os.path.join(root, "_bmad-output")):
    for name in files:
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if name.endswith(".toml"):
            tomllib.loads(text)
        count += 1
with open(os.path.join(root, "_bmad/custom/config.user.toml"), encoding="utf-8") as handle:
    tomllib.loads(handle.read())
print(count)
"""
"""List and read every file of the tree, parse the TOML; prints the files read."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--stories", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dest", help="build the tree here (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(args.dest or scratch) / "v7-bench"
        make_tree(root, args.stories)
        remembered = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch) / "cache")}
        remembered["PROMPTDECK_ANSWER_CACHE"] = "off"
        nothing = {**remembered, "PROMPTDECK_RESULT_CACHE": "off"}
        nothing["XDG_CACHE_HOME"] = str(Path(scratch) / "no-cache")
        argv = [PROMPTDECK, "stories", "--json", "--root", str(root)]
        listed = json.loads(subprocess.run(argv, env=remembered, capture_output=True).stdout)
        stories = listed["stories"] if isinstance(listed, dict) else listed
        assert len(stories) == args.stories, len(stories)
        done = subprocess.run([PYTHON, "-c", PLAIN_PYTHON, str(root)], capture_output=True)
        files = int(done.stdout)
        print(f"v7 tree: {args.stories:,} stories, {files:,} files  [{load()}]")
        results = interleave(
            {
                "plain Python walk + read": lambda: run_timed(
                    [PYTHON, "-c", PLAIN_PYTHON, str(root)]
                ),
                "promptdeck stories, readings remembered": lambda: run_timed(argv, remembered),
                "promptdeck stories, nothing remembered": lambda: run_timed(argv, nothing),
            },
            args.rounds,
        )
    plain = results["plain Python walk + read"]
    for name, samples in results.items():
        print(f"  {name:<42} {ms(samples):8.1f} ms (median of {args.rounds})")
    worst = 0.0
    for name in (
        "promptdeck stories, readings remembered",
        "promptdeck stories, nothing remembered",
    ):
        ratios = [a[0] / b[0] for a, b in zip(results[name], plain, strict=True)]
        worst = max(worst, statistics.median(ratios))
        print(f"  {name} / plain Python: {ratio(results[name], plain)}")
    verdict = "within" if worst <= TARGET_RATIO else "OVER"
    print(f"  {verdict} the {TARGET_RATIO:.0f}x target  [{load()}]")
    return 0 if worst <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
