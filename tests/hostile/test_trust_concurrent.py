"""``promptdeck trust`` in several projects at once keeps every project's entry: the store is
read, changed and written under a lock, and replaced whole."""

from __future__ import annotations

import json
import multiprocessing
import sys
from pathlib import Path

import pytest

PROJECTS = 8
ROUNDS = 15
ARGV = f'[agent]\ncommand_argv = ["{sys.executable}", "agent.py"]\n'


def _trust_many(root: str, xdg: str, barrier: multiprocessing.synchronize.Barrier) -> None:
    import os

    os.environ["XDG_CONFIG_HOME"] = xdg
    from promptdeck.core.project.trust import trust_config
    from promptdeck.core.project.workspace import open_workspace

    workspace = open_workspace(Path(root))
    barrier.wait(60)
    for _ in range(ROUNDS):
        trust_config(workspace)


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_eight_projects_trusted_at_once_all_stay_trusted(tmp_path: Path) -> None:
    roots = []
    for index in range(PROJECTS):
        root = tmp_path / f"project-{index}"
        (root / ".promptdeck").mkdir(parents=True)
        (root / ".promptdeck" / "config.toml").write_text(ARGV + f"# {index}\n")
        roots.append(root)
    xdg = tmp_path / "xdg"
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(PROJECTS)
    workers = [
        context.Process(target=_trust_many, args=(str(root), str(xdg), barrier)) for root in roots
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    stored = json.loads((xdg / "promptdeck" / "trusted.json").read_text(encoding="utf-8"))
    assert sorted(stored["configs"]) == sorted(str(root.resolve()) for root in roots)
    leftovers = [p.name for p in (xdg / "promptdeck").iterdir() if p.name.startswith(".trusted")]
    assert leftovers == []
