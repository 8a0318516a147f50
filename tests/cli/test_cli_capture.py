"""``promptdeck capture`` through a subprocess, with stand-in clients that send a request shaped
like the real ones' (the real CLIs are the end-to-end tests'): each is launched as a run
launches it — Claude with ``--append-system-prompt-file``, Codex with its profile and the
loopback as its model provider — and the text view, ``--json`` and the kept capture agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from builders import commit_all, write_files
from promptdeck.core.capture import remembered_capture

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
STORY_REL = "_bmad-output/implementation-artifacts/1-2-parse-lines.md"
STORY = "# Story 1.2: Parse lines\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Parser\n"
RULES = "# Project rules\n\nKeep every function small and name it after what it does, never how.\n"

# A stand-in Claude Code: says its version, then sends one Messages request holding its own
# system text, the appended system file, a reminder carrying CLAUDE.md and the stdin turn.
CLAUDE = """
import json, os, pathlib, sys, urllib.request
if sys.argv[1:] == ["--version"]:
    print("2.1.197 (Claude Code)")
    sys.exit(0)
appended = pathlib.Path(sys.argv[sys.argv.index("--append-system-prompt-file") + 1]).read_text()
rules = pathlib.Path("CLAUDE.md").read_text()
body = {
    "model": "claude-sonnet-4-5",
    "system": [{"type": "text", "text": "You are Claude Code."},
               {"type": "text", "text": "\\n\\n" + appended}],
    "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
    "messages": [{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>Contents of CLAUDE.md:\\n\\n" + rules
         + "</system-reminder>"},
        {"type": "text", "text": sys.stdin.read()}]}],
    "stream": False,
}
request = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
                                 data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
urllib.request.urlopen(request, timeout=30).read()
"""

# A stand-in Codex: reads its developer instructions from the profile `-p NAME` names in
# CODEX_HOME and its base URL from the `-c` options, and sends one Responses request.
CODEX = """
import json, os, pathlib, sys, tomllib, urllib.request
if sys.argv[1:] == ["--version"]:
    print("codex-cli 0.169.0")
    sys.exit(0)
args = sys.argv[1:]
name = args[args.index("-p") + 1]
profile = pathlib.Path(os.environ["CODEX_HOME"], name + ".config.toml").read_text()
developer = tomllib.loads(profile)["developer_instructions"]
options = [args[i + 1] for i, arg in enumerate(args) if arg == "-c"]
base = next(o.split("=", 1)[1].strip('"') for o in options if ".base_url=" in o)
assert args.index("-p") > max(i for i, arg in enumerate(args) if arg == "-c")
rules = pathlib.Path("AGENTS.md").read_text()
key = next(o.split("=", 1)[1] for o in options if ".env_key=" in o)
assert os.environ[key]
body = {"model": "gpt-5.5", "input": [
    {"type": "additional_tools", "role": "developer", "tools": [{"name": "shell"}]},
    {"type": "message", "role": "developer", "content": [{"type": "input_text",
     "text": "You are Codex."}]},
    {"type": "message", "role": "developer", "content": [{"type": "input_text",
     "text": developer}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text",
     "text": "<INSTRUCTIONS>\\n" + rules + "\\n</INSTRUCTIONS>"}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text",
     "text": sys.stdin.read()}]}]}
request = urllib.request.Request(base + "/responses", data=json.dumps(body).encode(),
                                 method="POST", headers={"content-type": "application/json"})
urllib.request.urlopen(request, timeout=30).read()
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    write_files(
        project,
        {STORY_REL: STORY, ".promptdeck/rules.md": RULES, "CLAUDE.md": RULES, "AGENTS.md": RULES},
    )
    commit_all(project)
    return project


def _capture(
    root: Path, tmp_path: Path, client: str, *extra: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    script = tmp_path / f"fake-{client}"
    script.write_text(f"#!{sys.executable}\n" + (CLAUDE if client == "claude" else CODEX))
    script.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPTDECK_")}
    env.update(
        XDG_CACHE_HOME=str(tmp_path / "cache"), **{f"PROMPTDECK_{client.upper()}_BIN": str(script)}
    )
    done = subprocess.run(
        [PROMPTDECK, "capture", "--client", client, "--story", "1.2", *extra],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    return done, env


@pytest.mark.parametrize(
    ("client", "rules_file"), [("claude", "CLAUDE.md"), ("codex", "AGENTS.md")]
)
def test_the_parts_as_text_and_json(
    root: Path, tmp_path: Path, client: str, rules_file: str
) -> None:
    done, env = _capture(root, tmp_path, client, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    names = [part["name"] for part in report["parts"]]
    assert names[:4] == ["client system", "tools", "client context", rules_file]
    assert names[4:12] == [
        "Layer-0A Instructions",
        "Layer-0B Workspace rules",
        "Layer-1 Guardrails",
        "Layer-2 Contract",
        "Layer-3 Entry",
        "Layer-4 Mode",
        "Layer-5 Context",
        "Layer-6 ApplyPolicy",
    ]
    assert names[12:] == ["layer joiners", "user turn", "envelope"]
    assert sum(part["bytes"] for part in report["parts"]) == report["request_bytes"]
    parts = {part["name"]: part for part in report["parts"]}
    assert parts["client system"]["bytes"] == len(
        "You are Claude Code.\n\n" if client == "claude" else "You are Codex."
    )
    assert parts[rules_file]["bytes"] == len(RULES)
    assert report["duplicates"] == [
        {
            "first": rules_file,
            "second": "Layer-0B Workspace rules",
            "paragraphs": 1,
            "bytes": len("Keep every function small and name it after what it does, never how."),
        }
    ]
    assert report["client_version"] == ("2.1.197" if client == "claude" else "0.169.0")
    window = 200_000 if client == "claude" else 272_000
    assert report["window"] == window
    assert parts["user turn"]["share"] == pytest.approx(parts["user turn"]["tokens"] / window)

    kept = remembered_capture(client, environ=env)
    assert kept is not None and kept.to_dict() == report

    text, _ = _capture(root, tmp_path, client)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"{client} {report['client_version']} request for story 1-2 (dev)")
    assert any(line.split()[:2] == ["sum", f"{report['request_bytes']:,}"] for line in lines)
    assert lines[-1] == (
        f"1 paragraph arrives twice ({report['duplicates'][0]['bytes']} bytes): "
        f"in {rules_file} and again in Layer-0B Workspace rules"
    )


def test_help_names_both_clients_and_exit_12() -> None:
    done = subprocess.run(
        [PROMPTDECK, "capture", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "{claude,codex}" in text and "Exit 12" in text
