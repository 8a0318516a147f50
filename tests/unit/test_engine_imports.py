"""The engine/UI split at run time: the engine and the CLI's parser load without the app."""

from __future__ import annotations

import subprocess
import sys

_LOADED = (
    "import importlib, pkgutil, sys\n"
    "def loaded(*names):\n"
    "    return sorted({m.split('.')[0] if not m.startswith('promptdeck.') else"
    " '.'.join(m.split('.')[:2]) for m in sys.modules"
    " if any(m == n or m.startswith(n + '.') for n in names)})\n"
)


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip()


def test_importing_every_engine_module_leaves_the_faces_and_their_toolkits_out() -> None:
    """Every module below promptdeck.core imports without Textual, rich or either face."""
    code = _LOADED + (
        "import promptdeck.core as core\n"
        "for info in pkgutil.walk_packages(core.__path__, 'promptdeck.core.'):\n"
        "    if '.demo.' in info.name: continue\n"
        "    importlib.import_module(info.name)\n"
        "print(loaded('textual', 'rich', 'promptdeck.cli', 'promptdeck.tui',"
        " 'promptdeck.themes'))\n"
    )
    assert _run(code) == "[]"


def test_the_cli_parses_its_commands_without_loading_the_app() -> None:
    """Only ``promptdeck`` with no command opens the app: the headless commands never load
    Textual or the app's package."""
    code = _LOADED + (
        "from promptdeck.cli import build_parser\n"
        "build_parser()\n"
        "print(loaded('textual', 'promptdeck.tui', 'promptdeck.themes'))\n"
    )
    assert _run(code) == "[]"
