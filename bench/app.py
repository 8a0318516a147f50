"""Benchmark: the app's responsiveness (issue 5 → Speed).

1. Toggle → totals: 50 presses of ``d`` on the synthetic workspace's 150 KiB story (``7-7``,
   project context, discovery and tech-spec on), encoder warm. For each press: the time until
   the first frame that shows the new byte totals is composed, and the one showing the new
   token totals (the frames the compositor hands to ``App._display``). Presses
   are spaced like a person's (0.15 s apart, more than the debounce window), so each one is an
   isolated change; bursts of presses compose once, after the debounce.
2. First paint on the 10,000-file synthetic workspace: in process (app start → story tree
   filled → preview bytes → tokens) and, when tmux is installed, end to end in a real terminal
   (``promptdeck --root …`` started → the layers visible in ``tmux capture-pane``). Then, in a
   fresh process each time (interpreter start included), the first paint of a 150 KiB story:
   a copy of the workspace whose first story injects 150 KiB by default, until its token
   meters are on screen — counts remembered, and nothing remembered, interleaved. tmux runs
   its own server (``-L``); the screen is polled every 5 ms.
3. Streaming 100,000 lines through the phase log: a real run of the ``command`` agent printing
   100,000 lines; a probe on the UI's event loop records the longest stall while they stream.

The app runs headless (Textual's test driver) for 1 and 3: rendering work is done, terminal
output is discarded. Percentiles interpolate between ranks (the p95 of 50 values lies between
the 47th and 48th).

Run: .venv/bin/python bench/app.py
"""

from __future__ import annotations

import asyncio
import os
import re
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

from promptdeck.core.demo.bundle import prepare_demo
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace
from promptdeck.tui.app import PromptdeckApp
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.settings import LoadedSettings, UserSettings
from promptdeck.tui.startup import hold_for_first_frame
from promptdeck.tui.widgets.meter_line import MeterLine
from promptdeck.tui.widgets.phase_panel import PhaseLog, PhasePanel
from rich.console import RenderableType
from synthetic import ARTIFACTS, BIG_STORY, PROJECT_CONTEXT, make_synthetic_workspace, settle
from textual import events
from textual.screen import Screen

TOGGLES = 50
PACE_SECONDS = 0.15
STREAM_LINES = 100_000
PROBE_INTERVAL = 0.005
SIZE = (160, 45)
LIMIT_SECONDS = 120.0


def _app(root: Path, settings_dir: Path) -> PromptdeckApp:
    settings = LoadedSettings(UserSettings(), settings_dir / "settings.toml")
    workspace = open_workspace(root)
    # As `promptdeck` does at launch, before the app starts any thread.
    hold_for_first_frame(workspace.config.tokens_encoding)
    return PromptdeckApp(workspace, settings=settings)


class BenchTimeout(RuntimeError):
    """A measure waited :data:`LIMIT_SECONDS` for something that never came: the measure
    failed (it is reported as such, never skipped)."""


def _gave_up(what: str) -> BenchTimeout:
    one, five, _ = os.getloadavg()
    return BenchTimeout(
        f"gave up after {LIMIT_SECONDS:.0f} s waiting for {what} (load {one:.2f}/{five:.2f})"
    )


async def _until(condition: Callable[[], bool], what: str, step: float = 0.001) -> None:
    started = time.perf_counter()
    while not condition():
        await asyncio.sleep(step)
        if time.perf_counter() - started > LIMIT_SECONDS:
            raise _gave_up(what)


def _main(app: PromptdeckApp) -> MainScreen:
    return next(s for s in app.screen_stack if isinstance(s, MainScreen))


def _percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile by linear interpolation between ranks (0.95 is the p95)."""
    ordered = sorted(values)
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


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
        # The first story's preview settles first: the tree's own highlight of it, still
        # queued, would otherwise follow the cursor back to it after the story is chosen.
        await _until(lambda: screen.prompt_counted, "the first story's preview")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen.select_story(screen.catalog.find(BIG_STORY))
        await _until(
            lambda: (
                screen.phases.flow is not None
                and screen.story is not None
                and screen.story.id == BIG_STORY
            ),
            f"story {BIG_STORY}'s flow",
        )
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
        # A toggle is timed to the first frame that shows its result: the screen's compositor
        # hands every frame to App._display (the headless driver then drops the bytes a
        # terminal would get), so the wait includes layout and rendering, not only the data.
        waiting: dict[str, Callable[[], bool]] = {}
        drawn: dict[str, float] = {}
        real_display = app._display

        def display(target: Screen[Any], renderable: RenderableType | None) -> None:
            real_display(target, renderable)
            if renderable is None:
                return
            now = time.perf_counter()
            for name, shown in list(waiting.items()):
                if shown():
                    drawn[name] = now
                    del waiting[name]

        # On the instance: every frame the compositor hands over passes through it.
        setattr(app, "_display", display)  # noqa: B010
        for _ in range(TOGGLES):
            await asyncio.sleep(PACE_SECONDS)
            want = not screen.selection.discovery
            before = meter.reading
            drawn.clear()
            started = time.perf_counter()

            def has_bytes(want: bool = want, before: Any = before) -> bool:
                prompt = screen.prompt
                return (
                    prompt is not None
                    and prompt.request.selection.discovery == want
                    and meter.reading is not before
                )

            waiting["bytes"] = has_bytes

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

            waiting["tokens"] = has_tokens
            # Delivered the way a terminal driver delivers a key; Pilot.press would also wait
            # for the app to go idle, which is not what a person waits for.
            app.post_message(events.Key("d", "d"))
            await _until(lambda: "bytes" in drawn and "tokens" in drawn, "the frames")
            bytes_ms.append((drawn["bytes"] - started) * 1000)
            tokens_ms.append((drawn["tokens"] - started) * 1000)
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


SOCKET = f"promptdeck-bench-{os.getpid()}"
"""A tmux server of the bench's own: other users' sessions never meet its sessions."""
FIRST_STORY = "0-1"
_TOKENS_SHOWN = re.compile(r"\bsys(?:tem)? \S+ \S+(?: sent)?\s+[\d.]+k? tok")
"""The system meter with its token count, in full or compact words (``sys`` at narrow widths)."""


def first_paint_workspace(source: Path, dest: Path) -> int:
    """A copy of the synthetic workspace whose first story, ``0-1``, injects 150 KiB with the
    app's default inclusion: the files of story 7-7 (discovery and tech-spec included) copied
    under 0-1 names of the story category. Returns the story's injected bytes on disk."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, symlinks=True)
    artifacts = dest / ARTIFACTS
    total = (dest / PROJECT_CONTEXT).stat().st_size
    for path in sorted(artifacts.glob("*7-7*")):
        name = path.name.replace("7-7", "0-1").replace("discovery", "notes")
        name = name.replace("tech-spec", "spec")
        text = path.read_text(encoding="utf-8").replace("# Story 7.7:", "# Story 0.1:")
        (artifacts / name).write_text(text, encoding="utf-8", newline="")
        total += (artifacts / name).stat().st_size
    status = artifacts / "sprint-status.yaml"
    status.write_text(
        status.read_text(encoding="utf-8") + "  0-1-first-paint-story: in-progress\n",
        encoding="utf-8",
    )
    settle(artifacts)
    return total


def _start_session(tmux: str, session: str, command: str) -> float:
    """Start ``command`` in a new detached session; returns when it was started.

    A server whose last session just ended may still be exiting: then try again.
    """
    for attempt in range(5):
        started = time.perf_counter()
        argv = [tmux, "-L", SOCKET, "new-session", "-d", "-s", session, "-x", "160", "-y", "45"]
        done = subprocess.run(
            [*argv, command],
            env={**os.environ, "TMUX": ""},
            capture_output=True,
        )
        if done.returncode == 0:
            return started
        time.sleep(0.2 * (attempt + 1))
    raise RuntimeError(f"tmux could not start a session: {done.stderr.decode().strip()}")


def tmux_until(command: str, shown: Callable[[str], bool], what: str, linger: float = 0.0) -> float:
    """Seconds from starting ``command`` in a fresh tmux session (interpreter start included)
    until ``shown(screen text)`` holds; the screen is polled every 5 ms. ``linger``: seconds
    the session stays open after that (a warm-up run that lets the app keep what it keeps
    after its first frame)."""
    tmux = shutil.which("tmux")
    assert tmux is not None
    session = f"promptdeck-bench-{uuid.uuid4().hex[:8]}"
    started = _start_session(tmux, session, command)
    screen = ""
    try:
        while time.perf_counter() - started < LIMIT_SECONDS:
            screen = subprocess.run(
                [tmux, "-L", SOCKET, "capture-pane", "-p", "-t", session],
                capture_output=True,
                text=True,
            ).stdout
            if shown(screen):
                took = time.perf_counter() - started
                time.sleep(linger)
                return took
            time.sleep(0.005)
        last = [line for line in screen.splitlines() if line.strip()][-3:]
        raise _gave_up(f"{what} in tmux; the screen ended with: {' / '.join(last) or '(blank)'}")
    finally:
        subprocess.run([tmux, "-L", SOCKET, "kill-session", "-t", session], capture_output=True)


def app_command(root: Path, variables: dict[str, str]) -> str:
    """The shell command that opens the app on ``root`` with ``variables`` set."""
    script = Path(sys.executable).with_name("promptdeck")
    assigned = [f"{k}={shlex.quote(v)}" for k, v in {"TERM": "xterm-256color", **variables}.items()]
    return " ".join(["env", *assigned, shlex.quote(str(script)), "--root", shlex.quote(str(root))])


def token_meters_shown(screen: str) -> bool:
    """The first story's layers and its token meters are on screen."""
    return "Layer-6" in screen and bool(_TOKENS_SHOWN.search(screen)) and FIRST_STORY in screen


def bench_first_paint_fresh(
    root: Path, settings_dir: Path, env_extra: dict[str, str]
) -> float | None:
    """A fresh ``promptdeck --root ROOT`` in tmux (interpreter start included) until the
    first story's token meters are on screen; None without tmux."""
    if shutil.which("tmux") is None:
        return None
    command = app_command(root, {"XDG_CONFIG_HOME": str(settings_dir), **env_extra})
    return tmux_until(command, token_meters_shown, "the token meters")


def bench_first_paint_tmux(root: Path, settings_dir: Path) -> float | None:
    """``promptdeck --root ROOT`` in tmux until the layers show; None without tmux."""
    if shutil.which("tmux") is None:
        return None
    command = app_command(root, {"XDG_CONFIG_HOME": str(settings_dir)})
    return tmux_until(command, lambda s: "Layer-6" in s and "Epic 1" in s, "the layers")


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
    trust_config(open_workspace(root))  # the bench's own agent (in the bench's config home)
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
        await _until(lambda: not screen.query_one(PhasePanel).feed.drain().lines, "the last batch")
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


def first_paint(synthetic: Path, work: Path, settings_dir: Path, runs: int = 5) -> None:
    """Fresh-process first paint of the 150 KiB story, counts remembered and not, interleaved."""
    root = work / "first-paint"
    size = first_paint_workspace(synthetic, root)
    cache_home = work / "xdg-cache"
    known = {"XDG_CACHE_HOME": str(cache_home)}
    bench_first_paint_fresh(root, settings_dir, known)  # fills the cache
    samples: dict[str, list[float]] = {"counts known": [], "nothing known": []}
    for number in range(runs):
        cold = {"PROMPTDECK_TOKEN_CACHE": str(cache_home / f"empty-{number}.sqlite3")}
        order = [("counts known", known), ("nothing known", cold)]
        for label, env in order if number % 2 == 0 else order[::-1]:
            seconds = bench_first_paint_fresh(root, settings_dir, env)
            assert seconds is not None
            samples[label].append(seconds)
    one, five, _ = os.getloadavg()
    for label, values in samples.items():
        print(
            f"first paint, fresh process in tmux (start → 150 KiB story's token meters shown, "
            f"{size:,} bytes injected), {label}: median {statistics.median(values):.3f} s "
            f"(min {min(values):.3f}, max {max(values):.3f}; {runs} runs; "
            f"load {one:.2f}/{five:.2f})"
        )


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="promptdeck-bench-app-"))
    settings_dir = work / "xdg"
    os.environ["XDG_CONFIG_HOME"] = str(settings_dir)
    os.environ["XDG_CACHE_HOME"] = str(work / "xdg-cache-app")  # not the user's cache
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
            first_paint(synthetic, work, settings_dir)

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
