"""Write docs/capture.svg: the app on the bundled demo, story 1-1, the capture view (``C``)
after the real ``claude`` CLI sent its request to the loopback. The demo gets a ``CLAUDE.md``
holding its workspace rules, so the view shows the text that arrives twice.

Run from the repository, with the client the end-to-end tests use:
``PROMPTDECK_CLAUDE_BIN=.tools/npm/node_modules/.bin/claude .venv/bin/python
docs/make_capture_screenshot.py``.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from promptdeck.core.demo import prepare_demo
from promptdeck.core.project import open_workspace
from promptdeck.tui.app import PromptdeckApp
from promptdeck.tui.screens.capture_view import CaptureScreen
from promptdeck.tui.screens.main import MainScreen

OUT = Path(__file__).resolve().parent / "capture.svg"


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = prepare_demo(Path(folder) / "ledgerline")
        rules = (root / ".promptdeck" / "rules.md").read_text(encoding="utf-8")
        (root / "CLAUDE.md").write_text(rules, encoding="utf-8")
        app = PromptdeckApp(
            open_workspace(root), workspace_label="ledgerline", agent="claude", stable=True
        )
        async with app.run_test(size=(120, 34)) as pilot:
            screen = None
            while screen is None or screen.prompt is None or not screen.prompt_counted:
                await pilot.pause(0.1)
                screen = next((s for s in app.screen_stack if isinstance(s, MainScreen)), None)
            while app.screen is not screen:
                app.pop_screen()
                await pilot.pause(0.1)
            await app.workers.wait_for_complete()
            app.clear_notifications()
            await pilot.pause(0.2)
            await pilot.press("C")
            capture = app.screen
            assert isinstance(capture, CaptureScreen)
            while not capture.finished:
                await pilot.pause(0.2)
            assert capture.capture is not None, capture.failure
            await app.workers.wait_for_complete()
            await pilot.pause(0.5)
            app.save_screenshot(filename=OUT.name, path=str(OUT.parent))
    print(OUT)


if __name__ == "__main__":
    asyncio.run(main())
