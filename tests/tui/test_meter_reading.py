"""The meter's system figure is the composed system prompt — the bytes ``inspect`` and the fit
view give — and a file too large to be read is named apart with its size on disk, never added
to that figure (a 199 KiB file once read as ``199 KiB … over argv`` beside a 124 KiB prompt)."""

from __future__ import annotations

from pathlib import Path

from app_helpers import run_async
from builders import write_files
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest
from promptdeck.core.tokens import ARGV_LIMIT_BYTES
from promptdeck.core.units import human_bytes
from promptdeck.tui.widgets.meter_line import MeterLine, meter_reading
from textual.app import App, ComposeResult

BIG = 199 * 1024


def _prompt(root: Path, *added: str) -> ComposedPrompt:
    write_files(
        root,
        {
            "_bmad-output/implementation-artifacts/sprint-status.yaml": (
                "development_status:\n  1-1-a: ready-for-dev\n"
            ),
            "_bmad-output/implementation-artifacts/1-1-a.md": "# Story 1.1: A\n\nStatus: ready\n",
            "big.md": "x" * BIG,
        },
    )
    workspace = open_workspace(root)
    request = PromptRequest("1-1", phase="dev", selection=Selection(additional_files=added))
    return compose_prompt(workspace, load_catalog(workspace), request)


def test_the_system_figure_is_the_composed_prompt_and_the_unread_file_stands_apart(
    tmp_path: Path,
) -> None:
    prompt = _prompt(tmp_path, "big.md")
    assert [f.status for f in prompt.injection.files if f.path == "big.md"] == ["too-large"]
    reading = meter_reading(prompt, counted=True)
    assert reading.system_bytes == prompt.system_meter.bytes < ARGV_LIMIT_BYTES
    assert reading.system_tokens == prompt.system_meter.tokens is not None
    assert reading.unread_bytes == BIG
    assert not reading.over_argv
    assert reading.tokens_text != "—"
    # The injection bar keeps comparing what the thresholds compare.
    assert reading.injection_bytes == prompt.injection.size_bytes > BIG
    assert meter_reading(prompt, counted=False).system_tokens is None


def test_every_file_read_names_nothing_apart(tmp_path: Path) -> None:
    reading = meter_reading(_prompt(tmp_path), counted=True)
    assert reading.unread_bytes == 0


class _MeterAlone(App[None]):
    def compose(self) -> ComposeResult:
        yield MeterLine()


@run_async
async def test_the_system_line_labels_the_size_on_disk(tmp_path: Path) -> None:
    prompt = _prompt(tmp_path, "big.md")
    app = _MeterAlone()
    async with app.run_test(size=(140, 4)) as pilot:
        meter = app.query_one(MeterLine)
        meter.reading = meter_reading(prompt, counted=True)
        await pilot.pause()
        system_line = str(meter.render()).splitlines()[1]
    assert system_line.startswith(f"system {human_bytes(prompt.system_meter.bytes)} ")
    assert f"{human_bytes(BIG)} on disk, not read" in system_line
    assert "over argv" not in system_line
