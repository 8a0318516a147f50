"""Nothing raw reaches the terminal: control sequences in story files and in an agent's output
are shown visibly by every CLI command, Rich markup in workspace text is shown as text, and
the run record keeps the agent's raw bytes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hostile._read_helpers import (
    ARTIFACTS,
    assert_clean,
    has_terminal_controls,
    make_cloned,
    run_cli,
)

OSC52 = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x1b\\"
TITLE_SEQ = "\x1b]0;pwned\x07"
C1_CSI = "\x9b2J"
STORY = (
    f"# Story 1.1: Parse {OSC52}rows{TITLE_SEQ} [/x] [bold]{C1_CSI}\n\n"
    "Status: [/x]\n\n## Tasks / Subtasks\n\n"
    "- [ ] Task \x1b[2J with [red]markup[/red] [/x]\n"
)
STATUS = "development_status:\n  1-1-parse-rows: '[/x]'\n  1-2-other: backlog\n"
AGENT = """\
import sys
sys.stdout.write("working \\x1b]52;c;c2VjcmV0\\x07 on it \\x9b31m [/x]\\n")
sys.stdout.write("tool said \\x1b[2J\\x1b]0;title\\x07 done\\n")
sys.stdout.write("IMPLEMENTATION COMPLETE: 1-1\\n")
"""


def _hostile(tmp_path: Path):  # type: ignore[no-untyped-def]
    hostile = make_cloned(
        tmp_path,
        {
            f"{ARTIFACTS}/1-1-parse-rows.md": STORY,
            f"{ARTIFACTS}/sprint-status.yaml": STATUS,
            "agent.py": AGENT,
            ".promptdeck/config.toml": (
                f'[agent]\ncommand_argv = ["{sys.executable}", "agent.py", "{{system_file}}"]\n'
            ),
        },
        base=False,
    )
    # The user has read the clone's config and trusted it: its agent may run.
    assert run_cli(hostile, ["trust"]).code == 0
    return hostile


def test_story_text_is_shown_with_controls_visible_and_never_as_markup(tmp_path: Path) -> None:
    hostile = _hostile(tmp_path)
    for args in (
        ["stories"],
        ["stories", "--json"],
        ["inspect", "1-1"],
        ["inspect", "1-1", "--json"],
        ["compose", "1-1", "--json"],
        ["compose", "1-1", "--part", "layers"],
    ):
        result = run_cli(hostile, args)
        assert_clean(result, hostile, (0,))
    table = run_cli(hostile, ["stories"]).stdout
    assert "␛]52;c;" in table and "[/x]" in table and "\\x9b" in table
    stories = json.loads(run_cli(hostile, ["stories", "--json"]).stdout)["stories"]
    # JSON keeps the exact value: a machine reading it gets the title as written.
    assert stories[0]["title"].startswith(f"Parse {OSC52}rows")


def test_compose_writes_exact_bytes_to_a_pipe(tmp_path: Path) -> None:
    # compose's stdout is the prompt itself, for a pipe or a file: the bytes the agent gets.
    # (On a terminal they are shown made visible; see tests/unit for that branch.)
    hostile = _hostile(tmp_path)
    result = run_cli(hostile, ["compose", "1-1"])
    assert result.code == 0
    assert OSC52 in result.stdout
    assert not has_terminal_controls(result.stderr)


def test_agent_output_is_shown_with_controls_visible_and_recorded_raw(tmp_path: Path) -> None:
    hostile = _hostile(tmp_path)
    result = run_cli(hostile, ["run", "1-1", "--phase", "dev", "--agent", "command", "--no-git"])
    assert_clean(result, hostile, (0,))
    assert "working ␛]52;c;c2VjcmV0␇ on it \\x9b31m [/x]" in result.stdout
    runs = sorted(p for p in (hostile.root / ".promptdeck" / "runs").iterdir() if p.is_dir())
    raw = b"".join(p.read_bytes() for p in runs[-1].iterdir() if p.name.startswith("stream"))
    assert b"\x1b]52;c;c2VjcmV0\x07" in raw
    listed = run_cli(hostile, ["runs"])
    assert_clean(listed, hostile, (0,))
