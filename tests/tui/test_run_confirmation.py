"""What the run confirmation shows, prepared without a screen: the real run folder and
launch, named instead of shown in stable mode, and a blocked plan's refusal alone."""

from __future__ import annotations

import sys
from pathlib import Path

from app_helpers import deck_on
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.run.plan import discard_plan
from promptdeck.tui.session.run_confirmation import prepare_confirmation, stable_argv


def test_the_plan_names_the_real_run_folder_and_the_launch_that_starts(demo_root: Path) -> None:
    deck = deck_on(demo_root, stable=False)
    catalog = load_catalog(deck.workspace)
    confirmation = prepare_confirmation(deck, catalog, PromptRequest("1-4", phase="dev"))
    plan, planned = confirmation.plan, confirmation.planned
    try:
        assert planned.prepared is not None
        folder = planned.prepared.record.dir
        assert folder.is_dir()
        assert plan.run_folder == deck.workspace.relative(folder)
        assert plan.argv == planned.argv and plan.argv
        assert (plan.story_id, plan.phase, plan.mode, plan.attempt) == ("1-4", "dev", "create", 1)
        assert plan.system_bytes == planned.prompt.system_meter.bytes
        assert plan.system_tokens == planned.prompt.system_meter.tokens
        assert not plan.blocked
    finally:
        discard_plan(planned)
    assert not folder.exists()


def test_stable_mode_names_the_folder_the_workspace_and_the_interpreter(demo_root: Path) -> None:
    deck = deck_on(demo_root, stable=True)
    catalog = load_catalog(deck.workspace)
    confirmation = prepare_confirmation(deck, catalog, PromptRequest("1-4", phase="dev"))
    try:
        plan = confirmation.plan
        shown = " ".join(plan.argv)
        assert plan.run_folder == "<run-folder>"
        assert str(demo_root) not in shown and sys.executable not in shown
        assert len(plan.argv) == len(confirmation.planned.argv)
    finally:
        discard_plan(confirmation.planned)


def test_stable_argv_replaces_every_occurrence_in_every_word() -> None:
    argv = ("/usr/bin/python3", "-m", "x", "--dir=/tmp/r/1", "/tmp/r/1/a:/tmp/r/1/b")
    shown = stable_argv(argv, {"/tmp/r/1": "<run-folder>", "/usr/bin/python3": "python"})
    assert shown == ("python", "-m", "x", "--dir=<run-folder>", "<run-folder>/a:<run-folder>/b")
