"""Numbers and text from the agent are data: a reported cost of ``1e308`` (a 400-digit
integer, a negative one) and negative token counts are shown as ``invalid (value)``, left out
of every sum; a U+202E (right-to-left override) in the agent's text never reaches the
terminal raw."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, cli, cloned_workspace

FAKE_CLAUDE = r"""#!{python}
import json, sys
sys.stdin.read()
text = "all good \u202e)txt.exe(\u2066\nIMPLEMENTATION COMPLETE: 1.1"
block = {{"type": "text", "text": text}}
print(json.dumps({{"type": "assistant", "message": {{"content": [block]}}}}))
print('{{"type": "result", "subtype": "success", "result": "", "total_cost_usd": {cost}, '
      '"usage": {{"input_tokens": -500, "output_tokens": 40, "cache_read_input_tokens": 2}}}}')
"""
BIDI = ("\u202e", "\u2066")


@pytest.mark.parametrize(
    ("cost", "shown"), [("1e308", "1e+308"), ("9" * 400, "inf"), ("-0.5", "-0.5")]
)
def test_implausible_numbers_are_invalid_and_bidi_controls_are_visible(
    tmp_path: Path, cost: str, shown: str
) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY})
    claude = tmp_path / "fake-claude"
    claude.write_text(FAKE_CLAUDE.format(python=sys.executable, cost=cost))
    claude.chmod(0o755)
    env = {"PROMPTDECK_CLAUDE_BIN": str(claude)}
    done = cli(root, "run", "1-1", "--phase", "dev", "--agent", "claude", "--no-git", env=env)
    assert done.code == 0, done.stderr
    every = done.stdout + done.stderr
    assert not any(char in every for char in BIDI)
    assert "\\u202e" in every
    summary = done.lines[-1]
    assert f"invalid ({shown}" in summary
    # 40 output + 2 cache read are counted; the -500 is named, never summed in.
    assert "42 + invalid (-500) tokens" in summary
    table = cli(root, "runs", env=env)
    assert "invalid (" in table.stdout and not any(c in table.stdout for c in BIDI)
    show = cli(root, "show", "last", env=env)
    assert f"invalid ({shown}" in show.stdout and "input invalid (-500)" in show.stdout
    assert len(show.stdout) < 20_000
    recorded = json.loads(cli(root, "runs", "--json", env=env).stdout)["runs"][-1]
    assert recorded["tokens"]["input"] == -500  # the record keeps what the agent said
