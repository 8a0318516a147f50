"""The default agent is never a simulation on a real project: with no agent named and no real
one found, ``run`` and ``chat`` refuse in one line (exit 2) and touch nothing; ``replay``
runs only when named, says it is a simulation everywhere, shows no money and never reaches
git unless the config allows it."""

from __future__ import annotations

import json
from pathlib import Path

from _run_helpers import STORY, STORY_REL, cli, cloned_workspace, git, one_line, run_folders

PACKAGE_JSON = '{"name": "web", "private": true}\n'


def _real_project(tmp_path: Path, config: str | None = None) -> Path:
    files = {STORY_REL: STORY, "package.json": PACKAGE_JSON, "src/index.ts": "export {};\n"}
    if config is not None:
        files[".promptdeck/config.toml"] = config
    return cloned_workspace(tmp_path, files)


def test_run_and_chat_refuse_without_an_agent_and_touch_nothing(tmp_path: Path) -> None:
    root = _real_project(tmp_path)
    head = git(root, "rev-parse", "HEAD")
    for args in (
        ("run", "1-1", "--phase", "dev"),
        ("run", "1-1", "--auto"),
        ("chat", "1-1", "-m", "hello"),
    ):
        done = cli(root, *args)
        line = one_line(done)
        assert done.code == 2, done.stderr
        assert "no agent to run" in line and "--agent" in line and "simulation" in line
    assert run_folders(root) == []
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(root, "rev-parse", "HEAD") == head
    assert (root / STORY_REL).read_text(encoding="utf-8") == STORY


def test_named_replay_is_a_simulation_that_never_reaches_git(tmp_path: Path) -> None:
    root = _real_project(tmp_path, "[agent]\nreplay_delay = 0.0\n")
    head = git(root, "rev-parse", "HEAD")
    dev = cli(root, "run", "1-1", "--phase", "dev", "--agent", "replay")
    assert dev.code == 0, dev.stderr
    assert "replay is a simulation" in dev.stderr
    summary = dev.lines[-1]
    assert "replay (simulation)" in summary and "cost —" in summary and "$" not in summary
    review = cli(root, "run", "1-1", "--phase", "review", "--agent", "replay")
    assert review.code == 0, review.stderr
    # Its invented work is in the working tree for the user to see, never staged or committed.
    assert git(root, "diff", "--staged", "--name-only") == ""
    assert git(root, "rev-parse", "HEAD") == head
    rows = json.loads(cli(root, "runs", "--json").stdout)["runs"]
    assert [(r["agent"], r["cost_usd"]) for r in rows] == [("replay", None), ("replay", None)]
    table = cli(root, "runs")
    assert "simulation" in table.stdout
    assert "$" not in table.stdout
    shown = json.loads(cli(root, "show", "last", "--json").stdout)
    assert shown["meta"]["simulation"] is True


def test_replay_as_the_configured_default_still_stays_out_of_git(tmp_path: Path) -> None:
    root = _real_project(tmp_path, '[agent]\ndefault = "replay"\nreplay_delay = 0.0\n')
    head = git(root, "rev-parse", "HEAD")
    done = cli(root, "run", "1-1", "--auto")
    assert done.code == 0, done.stderr
    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "diff", "--staged", "--name-only") == ""


def test_replay_with_git_allowed_commits_only_its_own_work(tmp_path: Path) -> None:
    config = '[agent]\ndefault = "replay"\nreplay_git = true\nreplay_delay = 0.0\n'
    root = _real_project(tmp_path, config)
    (root / "src" / "index.ts").write_text("export const mine = 1;\n", encoding="utf-8")
    done = cli(root, "run", "1-1", "--auto")
    assert done.code == 0, done.stderr
    assert git(root, "log", "-1", "--format=%s").strip() == "feat(1-1): Parse lines"
    committed = git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert "src/index.ts" not in committed and STORY_REL in committed
    assert "src/index.ts" in git(root, "status", "--porcelain")  # the user's edit, untouched
    assert "already changed before this phase (not by it): src/index.ts" in done.stderr
