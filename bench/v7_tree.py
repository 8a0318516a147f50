"""``stories`` on a BMAD v7 initiative tree of 5,000 tickets, against plain Python.

Usage: ``.venv/bin/python bench/v7_tree.py [--stories N] [--runs N] [--dest PATH]``

The tree: 50 epics of 100 entries, each entry with its ``story-<slug>.md`` and its
``story-<slug>-plan.md`` (front matter ``ticket`` and ``status``), so 10,000 Markdown files
and 51 ``tickets.toml`` files. Two timings, each the median of ``--runs`` calls in this
process after one warm-up (the operating system's file cache is warm):

* **promptdeck** — ``load_catalog``, what ``promptdeck stories`` runs: the guarded reader,
  TOML and front matter parsed, tickets joined to their plans, statuses read;
* **plain Python** — ``os.walk`` over the same tree, every file opened and read as text, every
  ``tickets.toml`` parsed with ``tomllib``: the least any reader of this tree must do.

Target (issue 20): promptdeck within 2× of plain Python.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import tomllib
from pathlib import Path

# The same timing as the v6 plan bench: median of runs after one warm-up.
from plan_scale import _median_ms
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.stories.catalog import load_catalog

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


def plain_python(root: Path) -> int:
    """List and read every file of the tree; parse the TOML. Returns the files read."""
    count = 0
    for folder, _dirs, files in os.walk(root / "_bmad-output"):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            if name.endswith(".toml"):
                tomllib.loads(text)
            count += 1
    with open(root / "_bmad/custom/config.user.toml", encoding="utf-8") as handle:
        tomllib.loads(handle.read())
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--stories", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dest", help="build the tree here (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(args.dest or scratch) / "v7-bench"
        make_tree(root, args.stories)
        workspace = open_workspace(root)
        catalog = load_catalog(workspace)
        assert len(catalog.stories) == args.stories, len(catalog.stories)
        assert not catalog.unreadable, catalog.unreadable[:3]
        ours = _median_ms(lambda: load_catalog(workspace), args.runs)
        files = plain_python(root)
        plain = _median_ms(lambda: plain_python(root), args.runs)
    ratio = ours / plain
    print(f"v7 tree: {args.stories:,} stories, {files:,} files")
    print(f"  promptdeck load_catalog: {ours:8.1f} ms (median of {args.runs})")
    print(f"  plain Python walk+read:  {plain:8.1f} ms (median of {args.runs})")
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    print(f"  ratio {ratio:.2f}x — {verdict} the {TARGET_RATIO:.0f}x target")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
