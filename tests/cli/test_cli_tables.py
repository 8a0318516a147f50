"""The CLI at 80 columns and in pipes: tables fit by shortening and then leaving out the least
useful columns, never splitting a word; piped output is one plain record per line; unknown
commands get "did you mean"; a story without runs is said to have none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from in_process import cli_in_process
from promptdeck.cli import answers as answers_module
from promptdeck.cli import main
from promptdeck.cli import table as table_module
from promptdeck.cli.table import Column, fit_columns, print_records, shorten
from promptdeck.core.demo.bundle import prepare_demo

PROMPTDECK = [
    sys.executable,
    "-c",
    "import sys; from promptdeck.cli import main; sys.exit(main())",
]
BOX_DRAWING = set("┃━┏┓┗┛│─┌┐└┘╇╈┡┩")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = prepare_demo(tmp_path_factory.mktemp("tables") / "ledgerline")
    return root


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [*PROMPTDECK, *args], cwd=root, capture_output=True, text=True, timeout=120, env=env
    )


def test_shorten_cuts_text_at_its_end_and_paths_in_the_middle() -> None:
    assert shorten("success", 10) == "success"
    assert shorten("Parse CSV statement rows", 10) == "Parse CSV…"
    path = "_bmad-output/implementation-artifacts/1-1-parse.md"
    assert shorten(path, 30, path=True) == "_bmad-output/…/1-1-parse.md"
    assert shorten(path, 16, path=True) == "…/1-1-parse.md"
    # A name wider than the column keeps both its ends: the story key and the extension.
    long = "_bmad-output/implementation-artifacts/1-3-detect-duplicate-transactions.md"
    short = shorten(long, 30, path=True)
    assert short == "1-3-detect-dupl…ransactions.md" and len(short) == 30
    assert shorten(long, 1, path=True) == "_"


def test_columns_shorten_then_the_least_useful_step_aside() -> None:
    columns = [
        Column("id"),
        Column("title", minimum=10),
        Column("cost", keep=1),
        Column("signal", keep=2, minimum=8),
    ]
    natural = [10, 40, 8, 30]
    assert fit_columns(columns, natural, 200) == natural
    narrow = fit_columns(columns, natural, 40)
    assert narrow[2] is None  # cost goes first
    shown = [w for w in narrow if w is not None]
    assert sum(shown) + 2 * (len(shown) - 1) <= 40
    assert narrow[0] == 10 and narrow[1] is not None and narrow[1] >= 10


def test_piped_stories_are_plain_lines_one_record_each(demo: Path) -> None:
    done = cli(demo, "stories")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert not BOX_DRAWING & set(done.stdout)
    stories = [line for line in lines if not line.startswith("skipped\t")]
    assert len(stories) == 10
    first = stories[0].split("\t")
    assert first[:3] == ["1-1", "Parse CSV statement rows", "done"]
    assert all(len(line.split("\t")) == 6 for line in stories)
    # Every record carries its group, so grep on a line keeps it whole.
    assert stories[1].split("\t")[4] == "1 · Statement import"


def _terminal_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")
    # Composed fresh: an answer remembered by an earlier piped run of the same command in this
    # process must not stand in for the terminal's layout.
    monkeypatch.setenv(answers_module.ENV_VAR, "off")
    monkeypatch.setattr(table_module, "is_terminal", lambda stream=None: True)
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_stories_at_80_columns_fit_and_never_split_a_word(
    demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(demo)
    out = _terminal_output(monkeypatch, capsys, "stories", "--root", str(demo))
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    titles = {
        "Parse CSV statement rows",
        "Normalize amounts and currencies",
        "Detect duplicate transactions across overlapping exports",
    }
    for title in titles:
        row = next(
            line
            for line in lines
            if line.split(" ", 1)[0] in ("1-1", "1-2", "1-3") and title[:12] in line
        )
        # Whole, or cut once with an ellipsis: never broken across lines.
        assert title in row or any(
            title.startswith(part.strip().rstrip("…"))
            for part in row.split("  ")
            if part.endswith("…")
        )
    assert "not shown at this width" in out


def test_runs_at_80_columns_and_piped(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    copy_demo: Callable[[Path], Path],
) -> None:
    # Called in-process, piped as cli() runs it: no width from the caller's environment.
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    root = copy_demo(tmp_path / "ledgerline")
    config = root / ".promptdeck" / "config.toml"
    config.write_text(config.read_text().replace("[agent]\n", "[agent]\nreplay_delay = 0.0\n", 1))
    subprocess.run(["git", "-C", str(root), "commit", "-qam", "settings"], check=True)
    for _ in range(2):
        done = cli_in_process(root, "run", "1-1", "--phase", "dev")
        assert done.returncode in (0, 4, 5), done.stderr
    piped = cli_in_process(root, "runs")
    records = piped.stdout.splitlines()
    assert len(records) == 2 and not BOX_DRAWING & set(piped.stdout)
    run_id = records[0].split("\t")[0]
    assert "-dev-1-1-" in run_id
    monkeypatch.chdir(root)
    out = _terminal_output(monkeypatch, capsys, "runs", "--root", str(root))
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    ids = [record.split("\t")[0] for record in records]
    rows = [line for line in lines if line[:8].isdigit()]
    assert len(rows) == 2
    # A shortened id is still a prefix `show` accepts.
    shown_id = rows[0].split(" ", 1)[0].rstrip("…")
    assert ids[0].startswith(shown_id) and len(shown_id) >= 20
    assert main(["show", shown_id, "--root", str(root), "--json"]) == 0


def test_unknown_commands_get_did_you_mean(tmp_path: Path) -> None:
    for typo, meant in (("stoires", "stories"), ("insepct", "inspect")):
        done = cli(tmp_path, typo, "2-3")
        assert done.returncode == 2
        assert f"did you mean '{meant}'" in done.stderr and done.stdout == ""


def test_runs_for_a_story_without_runs_says_so(demo: Path) -> None:
    done = cli(demo, "runs", "--story", "9-9")
    assert done.returncode == 0
    assert done.stdout.strip() == "No runs for story 9-9."


def test_inspect_chart_draws_the_prompt_by_tokens_or_bytes(demo: Path) -> None:
    done = cli(demo, "inspect", "1-1", "--chart")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("prompt ") and "tok" in lines[0]
    assert "≈warn" in lines[3] and "≈argv" in lines[3]
    assert all(len(line) <= 100 for line in lines)
    by_bytes = cli(demo, "inspect", "1-1", "--chart", "bytes").stdout.splitlines()
    assert "KiB" in by_bytes[0] and "≈" not in by_bytes[3]
    assert any("Layer-0A Instructions" in line for line in by_bytes)


def test_diff_compares_runs_and_the_prompt_now(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    copy_demo: Callable[[Path], Path],
) -> None:
    # Called in-process, piped as cli() runs it: no width from the caller's environment.
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    root = copy_demo(tmp_path / "ledgerline")
    config = root / ".promptdeck" / "config.toml"
    config.write_text(config.read_text().replace("[agent]\n", "[agent]\nreplay_delay = 0.0\n", 1))
    subprocess.run(["git", "-C", str(root), "commit", "-qam", "settings"], check=True)
    assert cli_in_process(root, "run", "1-1", "--phase", "dev").returncode in (0, 4, 5)
    alone = cli_in_process(root, "diff", "last")
    assert alone.returncode == 2 and "no earlier dev run" in alone.stderr
    # The replay agent's dev work appends to the story file: the prompt now differs there.
    now = cli_in_process(root, "diff", "last", "--now")
    assert now.returncode == 0, now.stderr
    story = "_bmad-output/implementation-artifacts/1-1-parse-csv-statement-rows.md"
    assert f"changed  file {story}" in now.stdout
    assert any(
        line.startswith("+") and not line.startswith("+++") for line in now.stdout.splitlines()
    )
    assert cli_in_process(root, "run", "1-1", "--phase", "dev").returncode in (0, 4, 5)
    runs = cli_in_process(root, "runs").stdout.splitlines()
    first, second = (line.split("\t")[0] for line in runs)
    both = cli_in_process(root, "diff", first, second, "--json")
    assert both.returncode == 0, both.stderr
    parts = {(p["kind"], p["name"]): p for p in json.loads(both.stdout)["parts"]}
    assert parts[("file", story)]["change"] == "changed"
    assert parts[("layer", "Layer-0A")]["change"] == "same"
    # One RUN: compared with the previous run of its phase.
    assert (
        cli_in_process(root, "diff", second).stdout
        == cli_in_process(root, "diff", first, second).stdout
    )


def test_piped_prose_lines_are_never_broken(demo: Path) -> None:
    done = cli(demo, "inspect", "1-3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    system = next(line for line in lines if line.startswith("system prompt "))
    # One line, whole, however long: Rich's 80-column default would have broken it.
    assert system.endswith("(one argument)") and len(system) > 80


def _runs_table(width: int) -> list[str]:
    """``runs``'s table of two runs with long signals and misses, at a fixed width."""
    import io

    from promptdeck.cli.runs import RUN_COLUMNS, cost_cells
    from promptdeck.core.cost import CostRecord
    from rich.console import Console

    misses = (
        ("no_previous_run",),
        ("ttl_expired", "prefix_changed@_bmad-output/implementation-artifacts/1-2-sign-up.md"),
    )
    rows = []
    for attempt, miss in enumerate(misses, 1):
        record = CostRecord("claude-sonnet-4-6", 0.0412, 0.0388, "", miss, True)
        rows.append(
            [
                f"20251129-04192{attempt}-123456-dev-1-2-a1b2c3",
                "1-2",
                "review",
                str(attempt),
                ("claude", "claude"),
                "no-signal",
                "REVIEW CHANGES REQUESTED: the duplicate check ignores the currency of a row",
                ("123.4s", "123s"),
                "$0.1234",
                ("1,234,567", "1.2M"),
                *cost_cells(record),
            ]
        )
    out = io.StringIO()
    console = Console(file=out, width=width, no_color=True)
    print_records(RUN_COLUMNS, rows, console=console, width=width, plain=False)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("width", [200, 120])
def test_runs_abbreviate_cells_before_any_column_steps_aside(width: int) -> None:
    lines = _runs_table(width)
    assert all(len(line) <= width for line in lines), max(lines, key=len)
    assert not any("not shown at this width" in line for line in lines)
    header = lines[0].split()
    assert header[-1] == "miss" and len(header) == 13
    first, second = lines[1], lines[2]
    # The misses abbreviate, never cut: whole names at 200, their short forms at 120.
    if width == 200:
        assert first.endswith("no_previous_run")
        assert "ttl_expired, prefix_changed" in second
    else:
        assert first.endswith("first run") and second.endswith("ttl, prefix")
        assert "1.2M" in first and "$0.04" in first
    assert "…" not in first.split("  ")[-1]


def test_runs_at_80_columns_fit_and_say_what_stepped_aside() -> None:
    lines = _runs_table(80)
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert any("not shown at this width" in line for line in lines)
    assert lines[1].split()[0].startswith("20251129-041921")


def test_a_cell_shows_its_longest_form_that_fits() -> None:
    columns = [Column("a"), Column("b", keep=1)]
    assert fit_columns(columns, [10, 30], 30, [None, 6]) == [10, 18]
    assert fit_columns(columns, [10, 30], 16, [None, 6]) == [10, None]
