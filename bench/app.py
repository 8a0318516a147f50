"""Benchmark: the app's responsiveness (issue 5 → Speed).

1. Toggle → totals: 50 presses of ``d`` on the synthetic workspace's 150 KiB story (``7-7``,
   project context, discovery and tech-spec on), encoder warm. For each press: the time until
   the meter line holds the new byte totals, and until it holds the new token totals. Presses
   are spaced like a person's (0.15 s apart, more than the debounce window), so each one is an
   isolated change; bursts of presses compose once, after the debounce.
2. First paint on the 10,000-file synthetic workspace: in process (app start → story tree
   filled → preview bytes → tokens) and, when tmux is installed, end to end in a real terminal
   (``promptdeck --root …`` started → the layers visible in ``tmux capture-pane``).
3. Streaming 100,000 lines through the phase log: a real run of the ``command`` agent printing
   100,000 lines; a probe on the UI's event loop records the longest stall while they stream.

The app runs headless (Textual's test driver) for 1 and 3: rendering work is done, terminal
output is discarded.

Run: .venv/bin/python bench/app.py
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from promptdeck.core.demo import prepare_demo
from promptdeck.core.workspace import open_workspace
from promptdeck.tui.app import PromptdeckApp
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.settings import LoadedSettings, UserSettings
from promptdeck.tui.widgets.meter_line import MeterLine
from promptdeck.tui.widgets.phase_panel import PhaseLog
from synthetic import BIG_STORY, make_synthetic_workspace
from textual import events

TOGGLES = 50
PACE_SECONDS = 0.15
STREAM_LINES = 100_000
PROBE_INTERVAL = 0.005
SIZE = (160, 45)
LIMIT_SECONDS = 120.0


def _app(root: Path, settings_dir: Path) -> PromptdeckApp:
    settings = LoadedSettings(UserSettings(), settings_dir / "settings.toml")
    return PromptdeckApp(open_workspace(root), settings=settings)


async def _until(condition: Callable[[], bool], what: str, step: float = 0.001) -> None:
    started = time.perf_counter()
    while not condition():
        await asyncio.sleep(step)
        if time.perf_counter() - started > LIMIT_SECONDS:
            raise RuntimeError(f"gave up waiting for {what}")


def _main(app: PromptdeckApp) -> MainScreen:
    return next(s for s in app.screen_stack if isinstance(s, MainScreen))


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


async def bench_toggles(root: Path, settings_dir: Path) -> dict[str, Any]:
    """Toggle → byte totals and toggle → token totals, 50 times."""
    app = _app(root, settings_dir)
    bytes_ms: list[float] = []
    tokens_ms: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        await _until(lambda: any(isinstance(s, MainScreen) for s in app.screen_stack), "main")
        screen = _main(app)
        await _until(lambda: screen.catalog is not None, "the catalog")
        assert screen.catalog is not None
        screen.select_story(screen.catalog.find(BIG_STORY))
        await _until(lambda: screen.phase == "dev" or screen.flow is not None, "the flow")
        for key in ("t", "d"):
            await pilot.press(key)
        await _until(
            lambda: (
                screen.prompt is not None
                and screen.prompt_counted
                and screen.prompt.story.id == BIG_STORY
                and screen.prompt.request.selection.discovery
                and screen.prompt.request.selection.tech_spec
            ),
            "the 150 KiB preview",
        )
        await app.workers.wait_for_complete()
        assert screen.prompt is not None
        injection_bytes = screen.prompt.injection.size_bytes
        meter = screen.query_one(MeterLine)
        for _ in range(TOGGLES):
            await asyncio.sleep(PACE_SECONDS)
            want = not screen.selection.discovery
            before = meter.reading
            started = time.perf_counter()
            # Delivered the way a terminal driver delivers a key; Pilot.press would also wait
            # for the app to go idle, which is not what a person waits for.
            app.post_message(events.Key("d", "d"))

            def has_bytes(want: bool = want, before: Any = before) -> bool:
                prompt = screen.prompt
                return (
                    prompt is not None
                    and prompt.request.selection.discovery == want
                    and meter.reading is not before
                )

            await _until(has_bytes, "the byte totals")
            bytes_ms.append((time.perf_counter() - started) * 1000)

            def has_tokens(want: bool = want) -> bool:
                prompt = screen.prompt
                reading = meter.reading
                return (
                    prompt is not None
                    and screen.prompt_counted
                    and prompt.request.selection.discovery == want
                    and reading is not None
                    and reading.system_tokens is not None
                )

            await _until(has_tokens, "the token totals")
            tokens_ms.append((time.perf_counter() - started) * 1000)
    return {"bytes_ms": bytes_ms, "tokens_ms": tokens_ms, "injection_bytes": injection_bytes}


async def bench_first_paint_in_process(root: Path, settings_dir: Path) -> dict[str, float]:
    """App start → tree filled → preview bytes → tokens, on the synthetic workspace."""
    started = time.perf_counter()
    app = _app(root, settings_dir)
    marks: dict[str, float] = {}
    async with app.run_test(size=SIZE):
        marks["first frame (app running)"] = time.perf_counter() - started
        await _until(lambda: any(isinstance(s, MainScreen) for s in app.screen_stack), "main")
        screen = _main(app)
        await _until(lambda: screen.catalog is not None, "the story tree")
        marks["story tree filled"] = time.perf_counter() - started
        meter = screen.query_one(MeterLine)
        await _until(lambda: meter.reading is not None, "the byte meters")
        marks["preview with byte meters"] = time.perf_counter() - started
        await _until(lambda: screen.prompt_counted, "the token meters")
        marks["token meters filled"] = time.perf_counter() - started
    return marks


def bench_first_paint_tmux(root: Path, settings_dir: Path) -> float | None:
    """``promptdeck --root ROOT`` in tmux until the layers show; None without tmux."""
    tmux = shutil.which("tmux")
    if tmux is None:
        return None
    script = Path(sys.executable).with_name("promptdeck")
    session = f"promptdeck-bench-{uuid.uuid4().hex[:8]}"
    command = (
        f"env XDG_CONFIG_HOME={shlex.quote(str(settings_dir))} TERM=xterm-256color "
        f"{shlex.quote(str(script))} --root {shlex.quote(str(root))}"
    )
    started = time.perf_counter()
    subprocess.run(
        [tmux, "new-session", "-d", "-s", session, "-x", "160", "-y", "45", command],
        check=True,
        env={**os.environ, "TMUX": ""},
    )
    try:
        while time.perf_counter() - started < LIMIT_SECONDS:
            screen = subprocess.run(
                [tmux, "capture-pane", "-p", "-t", session], capture_output=True, text=True
            ).stdout
            if "Layer-6" in screen and "Epic 1" in screen:
                return time.perf_counter() - started
            time.sleep(0.01)
        raise RuntimeError("the app never painted its layers in tmux")
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)


def _stream_workspace(dest: Path) -> Path:
    root = prepare_demo(dest)
    agent = dest.parent / "stream_agent.py"
    agent.write_text(
        "import sys\n"
        "out = sys.stdout\n"
        f"for i in range({STREAM_LINES}):\n"
        "    out.write('line %06d of agent output: reading files, running tests\\n' % i)\n"
        "out.write('IMPLEMENTATION COMPLETE: 1-1\\n')\n",
        encoding="utf-8",
    )
    config = root / ".promptdeck" / "config.toml"
    text = config.read_text(encoding="utf-8").replace(
        'default = "replay"',
        f'default = "command"\ncommand_argv = ["{sys.executable}", "{agent}"]',
    )
    config.write_text(text, encoding="utf-8")
    subprocess.run(["git", "-C", str(root), "commit", "-qam", "bench agent"], check=True)
    return root


async def bench_streaming(root: Path, settings_dir: Path) -> dict[str, float]:
    """A real run printing 100,000 lines; the longest event-loop stall while it streams."""
    app = _app(root, settings_dir)
    async with app.run_test(size=SIZE) as pilot:
        await _until(lambda: any(isinstance(s, MainScreen) for s in app.screen_stack), "main")
        screen = _main(app)
        await _until(lambda: screen.prompt_counted, "the preview")
        while screen.phase != "dev":
            await pilot.press("right_square_bracket")
        await _until(
            lambda: (
                screen.prompt_counted
                and screen.prompt is not None
                and screen.prompt.request.phase == "dev"
            ),
            "the dev preview",
        )
        await pilot.press("r")
        await _until(lambda: app.screen is not screen, "the confirmation")
        stalls: list[float] = []
        probing = True

        async def probe() -> None:
            while probing:
                started = time.perf_counter()
                await asyncio.sleep(PROBE_INTERVAL)
                stalls.append(time.perf_counter() - started - PROBE_INTERVAL)
                if stalls[-1] > 0.05 and os.environ.get("BENCH_DEBUG"):
                    print(
                        f"  stall {stalls[-1] * 1000:.0f} ms at {time.perf_counter() - t0:.2f} s"
                        f" (run ended: {screen.last_result is not None})"
                    )

        t0 = time.perf_counter()
        task = asyncio.create_task(probe())
        started = time.perf_counter()
        await pilot.press("enter")
        await _until(lambda: screen.last_result is not None, "the end of the run", step=0.01)
        await _until(lambda: not screen._feed.drain().lines, "the last batch")
        elapsed = time.perf_counter() - started
        probing = False
        await task
        log = screen.query_one(PhaseLog)
        assert screen.last_result is not None
        return {
            "lines": float(STREAM_LINES),
            "seconds": elapsed,
            "lines_per_second": STREAM_LINES / elapsed,
            "max_stall_ms": max(stalls) * 1000,
            "p99_stall_ms": _percentile(stalls, 0.99) * 1000,
            "log_lines_kept": float(log.line_count),
            "outcome_success": float(screen.last_result.outcome == "success"),
        }


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="promptdeck-bench-app-"))
    settings_dir = work / "xdg"
    os.environ["XDG_CONFIG_HOME"] = str(settings_dir)
    try:
        info = make_synthetic_workspace(work / "synthetic")
        synthetic = Path(str(info["root"]))
        print(
            f"synthetic workspace: {info['artifact_files']:,} artifact files, "
            f"{info['stories']} stories; 150 KiB story {BIG_STORY}"
        )

        toggles = asyncio.run(bench_toggles(synthetic, settings_dir))
        for label, key in (("bytes", "bytes_ms"), ("tokens", "tokens_ms")):
            values = toggles[key]
            print(
                f"toggle → {label:<6} over {len(values)} toggles: "
                f"p50 {statistics.median(values):6.1f} ms  p95 {_percentile(values, 0.95):6.1f} ms"
                f"  max {max(values):6.1f} ms"
            )
        print(f"  (injection at 150 KiB state: {toggles['injection_bytes']:,} bytes)")

        marks = asyncio.run(bench_first_paint_in_process(synthetic, settings_dir))
        for label, seconds in marks.items():
            print(f"first paint, in process: {label:<28} {seconds:6.3f} s")
        tmux = bench_first_paint_tmux(synthetic, settings_dir)
        if tmux is None:
            print("first paint, real terminal: skipped (tmux is not installed)")
        else:
            print(f"first paint, real terminal (tmux, process start → layers shown): {tmux:6.3f} s")

        stream = asyncio.run(bench_streaming(_stream_workspace(work / "stream"), settings_dir))
        print(
            f"streaming {int(stream['lines']):,} lines: {stream['seconds']:.2f} s "
            f"({stream['lines_per_second']:,.0f} lines/s end to end), longest UI stall "
            f"{stream['max_stall_ms']:.1f} ms, p99 stall {stream['p99_stall_ms']:.1f} ms, "
            f"log keeps {int(stream['log_lines_kept']):,} lines, "
            f"outcome {'success' if stream['outcome_success'] else 'not success'}"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
