"""Nothing of a repository's own Python runs because promptdeck started a process in it: the
watchdog and the replay simulation never import a module from the project root (a
``signal.py``, a ``json.py``, a ``promptdeck/`` package planted there)."""

from __future__ import annotations

from pathlib import Path

from _run_helpers import STORY, STORY_REL, cli, cloned_workspace


def _planted(name: str) -> str:
    """A module that leaves a marker named after itself when imported, then behaves."""
    real = {"signal": "from _signal import *\n", "json": "", "promptdeck": ""}[name]
    return f"import pathlib\npathlib.Path('ran-{name}').write_text('imported')\n{real}"


def test_a_run_imports_nothing_from_the_project_root(tmp_path: Path) -> None:
    root = cloned_workspace(
        tmp_path,
        {
            STORY_REL: STORY,
            "signal.py": _planted("signal"),
            "json.py": _planted("json"),
            "promptdeck/__init__.py": _planted("promptdeck"),
            ".promptdeck/config.toml": '[agent]\ndefault = "replay"\nreplay_delay = 0.0\n',
        },
    )
    done = cli(root, "run", "1-1", "--phase", "dev", "--no-git")
    assert done.code == 0, done.stderr
    assert sorted(p.name for p in root.glob("ran-*")) == []
