"""Importing the app pays only for its first frame: the rooms and libraries a first frame never
uses load when a key, a worker or a later frame needs them (a fresh interpreter each time)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FORBIDDEN = (
    # The secret scanner and the HTTP chain (the capture room's loopback server, requests).
    "detect_secrets",
    "requests",
    "http.server",
    "http.client",
    "email",
    "promptdeck.core.capture",
    # The tokenizer: counts come from the cache, or from a worker.
    "tiktoken",
    # The fit solver (the meters need the cut lines only), the cost room (the cache row is
    # measured once the preview rests), a run's machinery and git.
    "promptdeck.core.fit.solver",
    "promptdeck.core.fit.advice",
    "promptdeck.core.cost",
    "promptdeck.core.run.runner",
    "promptdeck.core.run.supervise",
    "promptdeck.core.supervisor",
    "promptdeck.core.fleet",
    "promptdeck.core.flight",
    "promptdeck.core.capture",
    "git",
    # Composing, and reading a plan: the opening helper did both for the first frame (the app
    # loads them in the background a moment later, or with the first change).
    "promptdeck.core.prompt.compose",
    "promptdeck.core.injection.builder",
    "promptdeck.core.layers.assembly",
    *(f"promptdeck.core.plans.{name}" for name in ("bmad", "bmad_v7", "openspec")),
    "promptdeck.core.plans.sprint_status",
    "promptdeck.core.stories.keys",
    # The dialogs and screens the first frame does not show, and a run's preparation.
    "promptdeck.tui.screens.confirm_run",
    "promptdeck.tui.screens.quit_confirm",
    "promptdeck.tui.screens.help",
    "promptdeck.tui.screens.text_view",
    "promptdeck.tui.screens.run_detail",
    "promptdeck.tui.screens.run_history",
    "promptdeck.tui.screens.capture_view",
    "promptdeck.tui.screens.copy_menu",
    "promptdeck.tui.screens.export",
    "promptdeck.tui.screens.file_picker",
    "promptdeck.tui.screens.epic_plan",
    "promptdeck.tui.session.run_confirmation",
    # The run records (the opening's flow comes read), the agents' backends (the header names
    # the agent without them), the diff, the fit's cuts (the lines come measured) and the
    # preview's tabs that are not open: Textual's text area, its tabs, the composition chart.
    "promptdeck.core.records.reader",
    "promptdeck.core.agents.base",
    "promptdeck.core.prompt.diff",
    "promptdeck.core.fit.cuts",
    "promptdeck.core.prompt.composition",
    "promptdeck.tui.widgets.text_viewer",
    "promptdeck.tui.widgets.composition_chart",
    "textual.widgets._text_area",
    "textual.widgets._tabbed_content",
    "textual.widgets._tabs",
    "textual.widgets._content_switcher",
    # The secret scanner's own module (findings come made), and the record writer a run uses.
    "promptdeck.core.secrets.scan",
    "promptdeck.core.project.rewrites",
)
"""Modules ``import promptdeck.tui.app`` must not import (a name covers its submodules)."""

OPENING_ONLY = ("promptdeck.core.stories", "promptdeck.core.prompt", "promptdeck.core.injection")
"""Modules the app's launch leaves to the helper that reads the catalog (see
:mod:`promptdeck.tui.session.opening`): not imported by the module that forks it."""


def _imported(code: str, tmp_path: Path) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    listing = f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    out = subprocess.check_output(
        [sys.executable, "-c", listing], env=env, text=True, stdin=subprocess.DEVNULL, timeout=120
    )
    return set(out.split())


def _offending(modules: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == f or m.startswith(f + ".") for f in forbidden))


def test_importing_the_app_leaves_out_what_its_first_frame_does_not_use(tmp_path: Path) -> None:
    modules = _imported("import promptdeck.tui.app", tmp_path)
    assert "promptdeck.tui.screens.main" in modules  # the check below is not vacuous
    assert _offending(modules, FORBIDDEN) == []


def test_the_opening_helper_is_forked_before_textual_and_the_catalog_are_imported(
    tmp_path: Path,
) -> None:
    # What the app's launch imports before it forks the helper.
    launch = (
        "import promptdeck.cli.app\n"
        "import promptdeck.tui.session.opening\n"
        "import promptdeck.tui.settings"
    )
    modules = _imported(launch, tmp_path)
    assert "promptdeck.tui.session.opening" in modules
    assert _offending(modules, (*OPENING_ONLY, "textual", "rich")) == []
