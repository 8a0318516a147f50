"""The context-window view's controller: a kept capture's overhead and window, which capture it
is and what it left out, and what the client keeps back (output reserve, auto-compact buffer)."""

from __future__ import annotations

from pathlib import Path

from promptdeck.core.capture.loopback import CapturedRequest
from promptdeck.core.capture.model import Capture, RequestPart
from promptdeck.core.client_loads import CLAUDE_AUTOCOMPACT_BUFFER, CLAUDE_OUTPUT_RESERVE
from promptdeck.core.project import open_workspace
from promptdeck.core.project.config import Config
from promptdeck.core.prompt import PromptRequest, compose_prompt
from promptdeck.core.tokens import get_counter
from promptdeck.tui.session.context_view import (
    captured_window,
    context_notes,
    kept_overhead,
    window_use,
)
from promptdeck.tui.session.views import fit_report
from promptdeck.tui.widgets.composition_chart import context_lines

LEFT_OUT = "MCP server files not started: its tools not measured"


def _capture(window: int = 1_000_000) -> Capture:
    parts = (
        RequestPart("client system", "client", "x", 40_000, 10_000),
        RequestPart("tools", "client", "x", 20_000, 5_000),
        RequestPart("CLAUDE.md", "rules", "x", 800, 200),
        RequestPart("Layer-1 Guardrails", "promptdeck", "x", 4_000, 1_000),
    )
    request = CapturedRequest("POST", "/v1/messages", b"{}", 64_800)
    return Capture(
        "claude", "2.1.197", "1-1", "dev", "claude-opus-4-8", window, request, parts,
        notes=(LEFT_OUT,),
    )  # fmt: skip


def test_a_kept_capture_gives_its_overhead_window_origin_and_what_it_left_out() -> None:
    kept = kept_overhead(_capture(), "claude 2.1.197, captured 2026-11-29 04:12 UTC")
    use = window_use(30_000, Config(), "claude", kept)
    assert use.window == 1_000_000 and use.overhead == 15_200 and use.overhead_measured
    reserve = CLAUDE_OUTPUT_RESERVE + CLAUDE_AUTOCOMPACT_BUFFER
    assert use.before_compaction == 1_000_000 - 45_200 - reserve
    notes = context_notes(use, kept, "claude")
    assert notes[0] == (
        "▒ measured, claude 2.1.197, captured 2026-11-29 04:12 UTC: client 15,000 · rules 200"
    )
    assert notes[1] == f"▒ left out of that capture: {LEFT_OUT}"
    assert notes[2].startswith(
        f"▓ kept back {reserve:,}: output reserve {CLAUDE_OUTPUT_RESERVE:,} · auto-compact "
        f"buffer {CLAUDE_AUTOCOMPACT_BUFFER:,}; free is what is left before the client compacts"
    )
    assert notes[2].endswith("; window from the kept capture")
    assert captured_window(kept, "claude") == 1_000_000


def test_without_a_capture_of_the_agent_the_estimate_and_the_configured_window_stand() -> None:
    kept = kept_overhead(_capture(), "claude 2.1.197")
    config = Config()
    use = window_use(30_000, config, "codex", kept)
    assert not use.overhead_measured and use.window == config.agent_codex_context_window
    assert captured_window(kept, "codex") is None
    notes = context_notes(use, kept, "codex")
    assert len(notes) == 1 and notes[0].endswith("; window from the workspace's setting")
    replay = window_use(30_000, config, "replay", None)
    assert replay.kept_back is None and context_notes(replay, None, "replay") == ()


def test_the_bar_and_figures_show_what_the_client_keeps_back_like_context() -> None:
    use = window_use(30_000, Config(), "claude", None)
    lines = context_lines(use, 70, context_notes(use, None, "claude"))
    reserve = CLAUDE_OUTPUT_RESERVE + CLAUDE_AUTOCOMPACT_BUFFER
    assert lines[1].endswith("▓") and lines[1].count("▓") == round(reserve / use.window * 68)
    assert lines[2].endswith(f"░ free {use.before_compaction:,}")
    assert lines[3].startswith(f"  ▓ kept back {reserve:,}: output reserve ")


def test_the_fit_takes_the_window_a_kept_capture_reported(demo_root: Path) -> None:
    workspace = open_workspace(demo_root)
    counter = get_counter(workspace.config.tokens_encoding)
    prompt = compose_prompt(workspace, None, PromptRequest("1-1"), counter=counter)
    assert fit_report(workspace, prompt, counter).startswith("fit 200,000 tokens")
    captured = fit_report(workspace, prompt, counter, captured_window=12_345)
    assert captured.startswith("fit 12,345 tokens (100% of a 12,345-token window)")
