"""Run records are files a repository can ship: ``.promptdeck/runs/<id>/meta.json``,
``signals.jsonl``, ``system.md``, ``session.json`` and ``rules-health.json`` linked to
``/dev/zero``, made FIFOs or linked out of the project are read through the guarded reader.
``runs``, ``show``, ``run``, ``run --dry-run``, ``chat`` and ``diff --now`` end, in a small
address space; a bad record costs one line and the rest of the history still shows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _read_helpers import CANARY
from _run_helpers import STORY, STORY_REL, cli, cloned_workspace, one_line
from app_helpers import make_app, run_async, wait_for_preview

RUNS = ".promptdeck/runs"
MEMORY = 768 * 1024**2


def _hostile_history(tmp_path: Path) -> tuple[Path, str]:
    """A project with one real run, then bad records beside it and inside it."""
    root = cloned_workspace(
        tmp_path,
        {
            STORY_REL: STORY,
            ".promptdeck/config.toml": '[agent]\ndefault = "replay"\nreplay_delay = 0.0\n',
        },
    )
    assert cli(root, "run", "1-1", "--phase", "dev").code == 0
    runs = root / RUNS
    (good,) = [p for p in runs.iterdir() if p.is_dir() and p.name != "dry-run"]
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"story": CANARY, "phase": "dev", "run_id": CANARY}))
    for name, target in (("a-zero", "/dev/zero"), ("b-outside", str(outside))):
        (runs / name).mkdir()
        (runs / name / "meta.json").symlink_to(target)
    (runs / "c-fifo").mkdir()
    os.mkfifo(runs / "c-fifo" / "meta.json")
    os.mkfifo(runs / "d-entry-is-a-fifo")
    # Inside the good run: its signals and session are endless or blocking.
    (good / "signals.jsonl").unlink()
    (good / "signals.jsonl").symlink_to("/dev/zero")
    os.mkfifo(good / "session.json")
    (runs / "rules-health.json").unlink(missing_ok=True)
    (runs / "rules-health.json").symlink_to("/dev/zero")
    return root, good.name


def test_a_hostile_history_costs_one_line_per_bad_record(tmp_path: Path) -> None:
    root, good = _hostile_history(tmp_path)
    done = cli(root, "runs", memory=MEMORY)
    assert done.code == 0, done.stderr
    assert good[:20] in done.stdout
    bad = [line for line in done.lines if "run skipped" in line]
    assert len(bad) == 3, done.stderr
    assert any("a-zero/meta.json" in line and "device" in line for line in bad)
    assert any("b-outside/meta.json" in line and "outside" in line for line in bad)
    assert any("c-fifo/meta.json" in line and "FIFO" in line for line in bad)
    listed = json.loads(cli(root, "runs", "--json", memory=MEMORY).stdout)["runs"]
    assert [run["id"] for run in listed] == [good]
    shown = cli(root, "show", good, memory=MEMORY)
    assert shown.code == 0, shown.stderr
    for done in (shown, *[cli(root, "runs", "--json", memory=MEMORY)]):
        assert CANARY not in done.stdout + done.stderr


def test_run_dry_run_chat_and_diff_end_on_a_hostile_history(tmp_path: Path) -> None:
    root, good = _hostile_history(tmp_path)
    dry = cli(root, "run", "1-1", "--phase", "dev", "--dry-run", memory=MEMORY)
    assert dry.code == 0, dry.stderr
    again = cli(root, "run", "1-1", "--phase", "review", memory=MEMORY)
    assert again.code in (0, 4), again.stderr
    chat = cli(root, "chat", "1-1", "--phase", "dev", stdin=b"one more thing\n", memory=MEMORY)
    assert chat.code == 0, chat.stderr
    diff = cli(root, "diff", good, "--now", memory=MEMORY)
    assert diff.code == 0, diff.stderr
    # The prompt file itself made endless: the diff refuses it in one line, exit 2.
    system = root / RUNS / good / "system.md"
    system.unlink()
    system.symlink_to("/dev/zero")
    refused = cli(root, "diff", good, "--now", memory=MEMORY)
    assert refused.code == 2
    line = one_line(refused)
    assert f"{good}/system.md" in line and "device" in line


def test_a_codex_config_linked_to_dev_zero_is_one_line_not_a_hang(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY})
    (root / ".codex").mkdir()
    (root / ".codex" / "config.toml").symlink_to("/dev/zero")
    env = {"PROMPTDECK_CODEX_BIN": "/bin/true", "CODEX_HOME": str(tmp_path / "codex-home")}
    done = cli(
        root,
        "run",
        "1-1",
        "--phase",
        "dev",
        "--agent",
        "codex",
        "--dry-run",
        env=env,
        memory=MEMORY,
    )
    assert done.code == 0, done.stderr
    shown = (done.stdout + done.stderr).splitlines()
    said = [line for line in shown if ".codex/config.toml" in line]
    assert len(said) == 1 and "device" in said[0], done.stdout + done.stderr


def test_the_apps_preview_comes_up_on_a_hostile_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _good = _hostile_history(tmp_path)
    (root / RUNS / "rules-health.json").unlink()
    os.mkfifo(root / RUNS / "rules-health.json")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))

    async def preview() -> None:
        app = make_app(root)
        async with app.run_test(size=(140, 40)) as pilot:
            screen = await wait_for_preview(pilot, "1-1")
            assert screen.prompt is not None and screen.prompt.system
            await pilot.press("q")

    run_async(preview)()
