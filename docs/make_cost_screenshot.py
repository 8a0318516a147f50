"""Write docs/cost-and-cache.svg: the app on the bundled demo, story 1-3, cache-aware delivery,
with the cache row under the meters filled in.

Run from the repository: ``.venv/bin/python docs/make_cost_screenshot.py``.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from promptdeck.core.demo import prepare_demo
from promptdeck.core.project import open_workspace
from promptdeck.tui.app import PromptdeckApp
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.widgets.preview_pane import PreviewPane

OUT = Path(__file__).resolve().parent / "cost-and-cache.svg"


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = prepare_demo(Path(folder) / "ledgerline")
        app = PromptdeckApp(open_workspace(root), workspace_label="ledgerline", agent="replay")
        async with app.run_test(size=(200, 50)) as pilot:
            screen = None
            while screen is None or screen.catalog is None:
                await pilot.pause(0.1)
                screen = next((s for s in app.screen_stack if isinstance(s, MainScreen)), None)
            while app.screen is not screen:
                app.pop_screen()
                await pilot.pause(0.1)
            tree_story = next(s for s in screen.catalog.stories if s.id == "1-3")
            screen.select_story(tree_story)
            await pilot.pause(0.5)
            await pilot.press("L")
            pane = screen.query_one(PreviewPane)
            while "cache-aware" not in pane.cache_line or screen.story is not tree_story:
                await pilot.pause(0.2)
            await app.workers.wait_for_complete()
            await pilot.pause(0.5)
            app.save_screenshot(filename=OUT.name, path=str(OUT.parent))
    print(OUT)


if __name__ == "__main__":
    asyncio.run(main())
