"""Capture starts the real client with the project's own client settings switched off: a
cloned ``.claude/settings.json`` whose hooks and ``apiKeyHelper`` would run programs runs
none of them — Claude Code gets ``--setting-sources user`` (where the project has a settings
file), every hook disabled and no MCP
server of the project — unless the user trusted the project as it is now."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from builders import commit_all, write_files

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
STORY_REL = "_bmad-output/implementation-artifacts/1-2-parse-lines.md"
STORY = "# Story 1.2: Parse lines\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Parser\n"

# A stand-in Claude Code that keeps what it was started with and reads its settings as the
# real one does: the project's files unless --setting-sources leaves them out, hooks unless a
# --settings JSON disables them all; then it sends one request to the loopback.
CLAUDE = """
import json, os, pathlib, subprocess, sys, urllib.request
args = sys.argv[1:]
if args == ["--version"]:
    print("2.1.197 (Claude Code)")
    sys.exit(0)
with open(LOG, "a", encoding="utf-8") as handle:
    handle.write(json.dumps({"argv": sys.argv, "cwd": os.getcwd()}) + "\\n")
sources = args[args.index("--setting-sources") + 1] if "--setting-sources" in args else (
    "user,project,local")
flags = json.loads(args[args.index("--settings") + 1]) if "--settings" in args else {}
settings = {}
for source, name in (("project", "settings.json"), ("local", "settings.local.json")):
    path = pathlib.Path(".claude", name)
    if source in sources.split(",") and path.is_file():
        settings.update(json.loads(path.read_text()))
if "apiKeyHelper" in settings:
    subprocess.run(settings["apiKeyHelper"], shell=True)
if not flags.get("disableAllHooks"):
    for groups in settings.get("hooks", {}).values():
        for group in groups:
            for hook in group.get("hooks", []):
                subprocess.run(hook["command"], shell=True)
appended = pathlib.Path(args[args.index("--append-system-prompt-file") + 1]).read_text()
body = {"model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "You are Claude Code."},
                   {"type": "text", "text": appended}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": sys.stdin.read()}]}]}
request = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
                                 data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
urllib.request.urlopen(request, timeout=30).read()
"""


def _settings(marker: Path) -> str:
    hook = [{"hooks": [{"type": "command", "command": f"echo hook >> {marker}"}]}]
    return json.dumps(
        {
            "hooks": {"SessionStart": hook, "UserPromptSubmit": hook, "Stop": hook},
            "apiKeyHelper": f"echo helper >> {marker}; echo sk-x",
        }
    )


def _project(tmp_path: Path, marker: Path, config: str | None = None) -> Path:
    root = tmp_path / "project"
    files = {
        STORY_REL: STORY,
        ".promptdeck/rules.md": "# Rules\n",
        ".claude/settings.json": _settings(marker),
        ".claude/settings.local.json": _settings(marker),
    }
    if config is not None:
        files[".promptdeck/config.toml"] = config
    write_files(root, files)
    commit_all(root)
    return root


def _env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The fake claude on an absolute PATH entry, found by name as the real one is."""
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "claude-started.jsonl"
    program = folder / "claude"
    program.write_text(f"#!{sys.executable}\nLOG = {str(log)!r}\n" + CLAUDE, encoding="utf-8")
    program.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPTDECK_")}
    env.update(
        PATH=f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    return env, log


def _promptdeck(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PROMPTDECK, *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_capture_runs_no_hook_or_helper_of_the_project_s_client_settings(tmp_path: Path) -> None:
    marker = tmp_path / "project-settings-ran"
    root = _project(tmp_path, marker)
    env, log = _env(tmp_path)
    done = _promptdeck(root, env, "capture", "--client", "claude", "--story", "1.2")
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), marker.read_text()
    (started,) = [json.loads(line) for line in log.read_text().splitlines()]
    argv = started["argv"]
    assert argv[0] == str(tmp_path / "bin" / "claude")
    assert argv[argv.index("--setting-sources") + 1] == "user"
    assert json.loads(argv[argv.index("--settings") + 1]) == {"disableAllHooks": True}
    assert "--strict-mcp-config" in argv
    # What the capture left out that a run would send is said, not hidden.
    assert "without the project's settings, and so without its CLAUDE.md" in done.stdout


def test_a_project_with_no_settings_file_keeps_its_claude_md_but_no_hook_runs(
    tmp_path: Path,
) -> None:
    # Nothing in the project can start a program: its CLAUDE.md and rules are loaded as a
    # run loads them; hooks (the user's own included) and MCP servers stay off.
    marker = tmp_path / "project-settings-ran"
    root = _project(tmp_path, marker)
    for name in (".claude/settings.json", ".claude/settings.local.json"):
        (root / name).unlink()
    env, log = _env(tmp_path)
    done = _promptdeck(root, env, "capture", "--client", "claude", "--story", "1.2")
    assert done.returncode == 0, done.stderr
    argv = json.loads(log.read_text().splitlines()[0])["argv"]
    assert "--setting-sources" not in argv
    assert json.loads(argv[argv.index("--settings") + 1]) == {"disableAllHooks": True}
    assert "--strict-mcp-config" in argv
    assert "note:" not in done.stdout


def test_a_trusted_project_keeps_its_client_settings(tmp_path: Path) -> None:
    marker = tmp_path / "project-settings-ran"
    root = _project(tmp_path, marker, config="[agent]\nreplay_delay = 0.0\n")
    env, log = _env(tmp_path)
    assert _promptdeck(root, env, "trust").returncode == 0
    done = _promptdeck(root, env, "capture", "--client", "claude", "--story", "1.2")
    assert done.returncode == 0, done.stderr
    argv = json.loads(log.read_text().splitlines()[0])["argv"]
    assert "--setting-sources" not in argv and "--settings" not in argv
    assert marker.exists()
    # A change to the settings after the trust switches them off again.
    (root / ".claude" / "settings.json").write_text(_settings(marker) + "\n", encoding="utf-8")
    marker.unlink()
    done = _promptdeck(root, env, "capture", "--client", "claude", "--story", "1.2")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
