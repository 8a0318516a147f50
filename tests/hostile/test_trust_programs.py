"""The trust covers what will run: a program given as a folder of the project
(``python3 tools/agent``) or as a module (``python3 -m pkg``) is listed by ``promptdeck trust``
and digested whole, so changed code in it is refused (exit 10) until trusted again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, cli, cloned_workspace

MAIN = (
    "import pathlib\npathlib.Path('ran').write_text('{tag}')\n"
    "print('IMPLEMENTATION COMPLETE: 1.1')\n"
)


@pytest.mark.parametrize(
    ("argv", "code", "listed"),
    [
        (["tools/agent"], "tools/agent/helper.py", "tools/agent/"),
        (["-m", "pkg"], "pkg/helper.py", "pkg/"),
        (["-mpkg.sub"], "pkg/helper.py", "pkg/"),
    ],
    ids=["folder", "module", "joined-module"],
)
def test_changed_code_in_a_named_folder_or_module_asks_again(
    tmp_path: Path, argv: list[str], code: str, listed: str
) -> None:
    command = [sys.executable, *argv]
    files = {
        STORY_REL: STORY,
        "tools/agent/__main__.py": "from helper import main\nmain()\n",
        "tools/agent/helper.py": f"def main():\n    exec({MAIN.format(tag='old')!r})\n",
        "pkg/__init__.py": "",
        "pkg/__main__.py": "from pkg.helper import main\nmain()\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/__main__.py": "from pkg.helper import main\nmain()\n",
        "pkg/helper.py": f"def main():\n    exec({MAIN.format(tag='old')!r})\n",
        ".promptdeck/config.toml": (
            f'[agent]\ndefault = "command"\ncommand_argv = {json.dumps(command)}\n'
        ),
    }
    root = cloned_workspace(tmp_path, files, trusted=False)
    shown = cli(root, "trust", "--json")
    assert shown.code == 0, shown.stderr
    assert listed in json.loads(shown.stdout)["files"]
    ran = cli(root, "run", "1-1", "--phase", "dev", "--no-git")
    assert ran.code == 0, ran.stderr
    assert (root / "ran").read_text() == "old"
    (root / "ran").unlink()
    # A file deep in the folder or package changes: nothing of it runs before a new trust.
    # (To a text of another size: Python's bytecode cache tells a file rewritten within the
    # same second from the one it compiled by its size alone.)
    (root / code).write_text(f"def main():\n    exec({MAIN.format(tag='changed')!r})\n")
    refused = cli(root, "run", "1-1", "--phase", "dev", "--no-git")
    assert refused.code == 10, refused.stderr
    assert listed in refused.stderr
    assert not (root / "ran").exists()
    assert cli(root, "trust").code == 0
    assert cli(root, "run", "1-1", "--phase", "dev", "--no-git").code == 0
    assert (root / "ran").read_text() == "changed"
