"""PhasePanel on its own: it shows a real run fed through its listener and posts its end."""

from __future__ import annotations

from pathlib import Path

from app_helpers import run_async, wait_for
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.run.runner import start_run
from promptdeck.core.run.stream import RunEvent
from promptdeck.core.tokens.counter import get_counter
from promptdeck.tui.widgets.phase_panel import PhaseLog, PhasePanel
from textual import on
from textual.app import App, ComposeResult
from textual.widgets import Static


class PanelApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.finished: list[PhasePanel.RunFinished] = []

    def compose(self) -> ComposeResult:
        yield PhasePanel(context_window=200_000, duration=lambda _s: "—", id="phase-panel")

    @on(PhasePanel.RunFinished)
    def _finished(self, event: PhasePanel.RunFinished) -> None:
        self.finished.append(event)


@run_async
async def test_a_replayed_run_fills_the_log_and_posts_its_end(demo_root: Path) -> None:
    workspace = open_workspace(demo_root)
    catalog = load_catalog(workspace)
    prompt = compose_prompt(
        workspace, catalog, PromptRequest(catalog.stories[0].id), counter=get_counter("o200k_base")
    )
    app = PanelApp()
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(PhasePanel)
        panel.begin_run("dev running")
        panel.listen(RunEvent("notice", "before the agent"))
        handle = start_run(workspace, prompt, agent="replay", listener=panel.listen, use_git=False)
        await wait_for(pilot, lambda: bool(app.finished), "the end of the run")
        result = app.finished[0].result
        assert result.run_id == handle.run_id
        log_text = "\n".join(panel.query_one(PhaseLog).lines)
        assert "▸ before the agent" in log_text
        status = str(panel.query_one("#run-status", Static).render())
        assert status.startswith(f"phase {result.phase} #{result.attempt}: {result.outcome}")
        assert "—" in status
