"""Benchmark: the injection builder and `promptdeck inspect --json` on the synthetic workspace.

Reports build_injection cold and warm on the 150 KiB story, token throughput, and the wall
time of `promptdeck inspect --json` against two references:

- the floor: a Python process that builds the encoder, reads the same files and encodes
  them once — what any tool must pay;
- `files-to-prompt --cxml` over the same files piped into a tiktoken count.

Run: .venv/bin/python bench/injection.py
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from synthetic import make_synthetic_workspace  # noqa: E402

from promptdeck.core.catalog import load_catalog  # noqa: E402
from promptdeck.core.injection import Selection, build_story_injection  # noqa: E402
from promptdeck.core.tokens import TokenCounter, build_encoding  # noqa: E402
from promptdeck.core.workspace import open_workspace  # noqa: E402

RUNS = 7

FLOOR = """
import sys
from promptdeck.core.tokens import build_encoding
enc = build_encoding("o200k_base")
text = "".join(open(p, encoding="utf-8").read() for p in sys.argv[1:])
print(len(enc.encode_ordinary(text)))
"""

COUNT_STDIN = """
import sys
from promptdeck.core.tokens import build_encoding
enc = build_encoding("o200k_base")
print(len(enc.encode_ordinary(sys.stdin.read())))
"""


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def time_command(argv: list[str], *, shell: bool = False, cwd: Path | None = None) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(argv if not shell else " ".join(argv), shell=shell, cwd=cwd,
                       check=True, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return median_ms(samples)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="promptdeck-bench-"))
    try:
        info = make_synthetic_workspace(work)
        workspace = open_workspace(work)
        catalog = load_catalog(workspace)
        story = catalog.find(info["big_story"])
        selection = Selection(**info.get("big_selection", {}))

        # Cold: a fresh counter, so the encoder is built and nothing is cached.
        start = time.perf_counter()
        counter = TokenCounter(workspace.config.tokens_encoding)
        injection = build_story_injection(
            workspace, story, selection, command_name="bench", counter=counter
        )
        cold = time.perf_counter() - start

        # Cold cache: encoder built, no counts cached.
        counter2 = TokenCounter(workspace.config.tokens_encoding)
        counter2.warm()
        start = time.perf_counter()
        build_story_injection(workspace, story, selection, command_name="bench", counter=counter2)
        cold_cache = time.perf_counter() - start

        warm = []
        for _ in range(50):
            start = time.perf_counter()
            build_story_injection(workspace, story, selection, command_name="bench", counter=counter)
            warm.append(time.perf_counter() - start)
        warm_sorted = sorted(warm)

        encoding = build_encoding("o200k_base")
        text = injection.text
        start = time.perf_counter()
        tokens = len(encoding.encode_ordinary(text))
        throughput = len(text.encode()) / (time.perf_counter() - start)

        paths = [str(work / f.path) for f in injection.included()]
        promptdeck = str(Path(sys.executable).with_name("promptdeck"))
        inspect_argv = [promptdeck, "inspect", story.id, "--json", "--root", str(work)]
        for flag, on in (("--discovery", selection.discovery), ("--tech-spec", selection.tech_spec)):
            if on:
                inspect_argv.append(flag)
        # The inspect result is checked once so the timing is of a real, complete run.
        out = subprocess.run(inspect_argv, capture_output=True, text=True)
        payload = json.loads(out.stdout)
        inspect_ms = time_command(inspect_argv)
        floor_ms = time_command([sys.executable, "-c", FLOOR, *paths])
        ftp = shutil.which("files-to-prompt") or str(Path(sys.executable).with_name("files-to-prompt"))
        pipe = [ftp, "--cxml", *paths, "|", sys.executable, "-c", repr(COUNT_STDIN)]
        ftp_ms = time_command(pipe, shell=True)

        print(f"synthetic workspace: {info['artifact_files']:,} artifact files, "
              f"{len(catalog.stories)} stories; story {story.id}: "
              f"{len(injection.included())} files, {injection.total.bytes:,} bytes, "
              f"{injection.total.tokens:,} {injection.encoding} tokens (exit {out.returncode})")
        print(f"build_injection cold (encoder build + read + count): {cold * 1000:.1f} ms")
        print(f"build_injection cold cache (encoder warm):           {cold_cache * 1000:.1f} ms")
        print(f"build_injection warm rebuild: p50 {median_ms(warm):.2f} ms, "
              f"p95 {warm_sorted[int(len(warm) * 0.95) - 1] * 1000:.2f} ms (50 runs)")
        print(f"token throughput (o200k_base, uncached): {throughput / 1e6:.1f} MB/s "
              f"({tokens:,} tokens)")
        print(f"inspect --json: {inspect_ms:.0f} ms | floor: {floor_ms:.0f} ms "
              f"(ratio {inspect_ms / floor_ms:.2f}) | files-to-prompt --cxml | count: "
              f"{ftp_ms:.0f} ms  (median of {RUNS})")
        assert payload["total"]["bytes"] == injection.total.bytes
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
