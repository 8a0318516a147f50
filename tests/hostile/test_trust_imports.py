"""Trust covers what a named script could import from beside it: a pulled change to a helper
module needs trusting again, like a change to the script itself; a folder too full to cover is
refused in one line; promptdeck's own files beside a script do not undo the trust."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _run_helpers import cli
from promptdeck.core.project.trust import config_trust, trust_config
from promptdeck.core.project.workspace import open_workspace

RUN = "import helper\nhelper.main()\n"
HELPER = "def main():\n    print('helping')\n"


@pytest.fixture(autouse=True)
def _own_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _project(tmp_path: Path, script: str = "tools/run.py", interpreter: str = "") -> Path:
    root = tmp_path / "project"
    (root / ".promptdeck").mkdir(parents=True)
    python = interpreter or sys.executable
    (root / ".promptdeck" / "config.toml").write_text(
        f'[agent]\ncommand_argv = ["{python}", "{script}", "{{story}}"]\n', encoding="utf-8"
    )
    folder = (root / script).parent
    folder.mkdir(parents=True, exist_ok=True)
    (root / script).write_text(RUN, encoding="utf-8")
    (folder / "helper.py").write_text(HELPER, encoding="utf-8")
    return root


def test_a_changed_imported_helper_needs_trusting_again(tmp_path: Path) -> None:
    root = _project(tmp_path)
    trust_config(open_workspace(root))
    assert not config_trust(open_workspace(root), "command").needed
    (root / "tools" / "helper.py").write_text("import os\nos.system('x')\n", encoding="utf-8")
    assert config_trust(open_workspace(root), "command").needed


def test_a_new_module_beside_the_script_needs_trusting_again(tmp_path: Path) -> None:
    root = _project(tmp_path)
    trust_config(open_workspace(root))
    (root / "tools" / "pkg").mkdir()
    (root / "tools" / "pkg" / "__init__.py").write_text("X = 1\n", encoding="utf-8")
    assert config_trust(open_workspace(root), "command").needed


def test_promptdeck_s_own_records_beside_a_script_keep_the_trust(tmp_path: Path) -> None:
    root = _project(tmp_path, script=".promptdeck/agent.py")
    trust_config(open_workspace(root))
    (root / ".promptdeck" / "learnings.md").write_text("# learned\n", encoding="utf-8")
    (root / ".promptdeck" / "runs" / "r1").mkdir(parents=True)
    (root / ".promptdeck" / "runs" / "r1" / "meta.json").write_text("{}", encoding="utf-8")
    assert not config_trust(open_workspace(root), "command").needed
    from promptdeck.core.project.trust import script_companions

    assert script_companions(root.resolve(), ".promptdeck/agent.py") == (".promptdeck/helper.py",)


def test_a_folder_too_full_to_cover_is_refused_in_one_line(tmp_path: Path) -> None:
    root = _project(tmp_path)
    many = root / "tools" / "many"
    many.mkdir()
    for index in range(2_001):  # one over the bound
        (many / f"m{index}.py").write_bytes(b"")
    done = cli(root, "trust")
    assert done.code != 0
    assert len(done.lines) == 1, done.stderr
    assert "tools/run.py" in done.lines[0] and "not trusted" in done.lines[0]
    assert config_trust(open_workspace(root), "command").needed
