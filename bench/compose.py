"""Benchmark: what composing the eight layers adds to the injection build (seed 004: < 10 ms).

On the synthetic workspace's big story (12 files, 150 KiB with discovery and tech-spec on), it
times, warm (encoder built, token counts cached, files read fresh as always):

* ``build_story_injection`` alone;
* ``compose_prompt`` with token counts (the injection build plus all eight layers, the story
  prompt, the rules and instructions reads, the meters);
* ``compose_prompt`` without token counts (the app's instant byte-only preview).

The difference of the medians is the composer's own cost. Run from the repository root:

    .venv/bin/python bench/compose.py
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from promptdeck.core.injection.builder import build_story_injection
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.tokens.counter import TokenCounter
from synthetic import make_synthetic_workspace

RUNS = 60


def timed(action: Callable[[], object]) -> list[float]:
    action()  # warm-up
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def describe(label: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    return f"{label}: p50 {statistics.median(samples):.2f} ms, p95 {p95:.2f} ms"


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="promptdeck-bench-compose-"))
    try:
        info = make_synthetic_workspace(work)
        workspace = open_workspace(work)
        catalog = load_catalog(workspace)
        story = catalog.find(info["big_story"])
        selection = Selection(discovery=True, tech_spec=True)
        counter = TokenCounter(workspace.config.tokens_encoding)
        counter.warm()
        request = PromptRequest(story.id, selection=selection)

        injection_only = timed(
            lambda: build_story_injection(
                workspace, story, selection, command_name="dev", counter=counter
            )
        )
        composed = timed(lambda: compose_prompt(workspace, catalog, request, counter=counter))
        bytes_only = timed(
            lambda: compose_prompt(workspace, catalog, request, counter=counter, count_tokens=False)
        )
        prompt = compose_prompt(workspace, catalog, request, counter=counter)
        print(
            f"story {story.id}: injection {prompt.injection.total.bytes:,} bytes in "
            f"{len(prompt.injection.included())} files; system prompt "
            f"{prompt.system_meter.bytes:,} bytes, {prompt.system_meter.tokens:,} tokens"
        )
        print(describe("build_story_injection, warm", injection_only))
        print(describe("compose_prompt (8 layers, tokens), warm", composed))
        print(describe("compose_prompt (bytes only), warm", bytes_only))
        added = statistics.median(composed) - statistics.median(injection_only)
        print(f"composing adds (p50 difference): {added:.2f} ms (budget: 10 ms)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
