"""The replay agent's process: ``python -m promptdeck.core.agents.replay_main --phase dev …``.

Prints a Claude Code-style stream-json transcript for one phase, does that phase's work in the
workspace (append-only on the story file), and ends with the phase's signal — or, as scripted,
with a failure signal, no signal, a crash or a hang. See :mod:`promptdeck.core.agents.replay`.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import time
import uuid
from datetime import date
from pathlib import Path
from typing import Any

from .replay_party import PARTY_WORK, PartyContext, is_party, retro_targets


class Transcript:
    """Writes stream-json events to stdout, one line each, with a pause between lines."""

    def __init__(self, session_id: str, delay: float, input_tokens: int) -> None:
        self.session_id = session_id
        self.delay = max(0.0, delay)
        self.input_tokens = input_tokens
        self.output_tokens = 0
        self.messages = 0
        self.last_text = ""

    def emit(self, event: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        if self.delay:
            time.sleep(self.delay)

    def init(self) -> None:
        self.emit(
            {
                "type": "system",
                "subtype": "init",
                "session_id": self.session_id,
                "model": "replay",
                "tools": ["Read", "Edit", "Write", "Bash"],
            }
        )

    def _usage(self) -> dict[str, int]:
        # Each call re-reads the conversation: the context grows with every message.
        context = self.input_tokens + 350 * self.messages
        return {
            "input_tokens": 12,
            "cache_read_input_tokens": max(0, context - 12),
            "cache_creation_input_tokens": 0,
            "output_tokens": 40,
        }

    def _message(self, content: list[dict[str, Any]]) -> None:
        self.messages += 1
        self.output_tokens += 40
        self.emit(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_replay_{self.messages}",
                    "type": "message",
                    "role": "assistant",
                    "model": "replay",
                    "content": content,
                    "usage": self._usage(),
                },
                "session_id": self.session_id,
            }
        )

    def say(self, text: str) -> None:
        self.last_text = text
        self._message([{"type": "text", "text": text}])

    def tool(self, name: str, tool_input: dict[str, Any], result: str) -> None:
        tool_id = f"toolu_{uuid.uuid4().hex[:12]}"
        self._message([{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}])
        self.emit(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": result}],
                },
                "session_id": self.session_id,
            }
        )

    def result(self, is_error: bool = False) -> None:
        context = self.input_tokens + 350 * self.messages
        self.emit(
            {
                "type": "result",
                "subtype": "error_during_execution" if is_error else "success",
                "is_error": is_error,
                "num_turns": self.messages,
                "result": self.last_text,
                "session_id": self.session_id,
                "total_cost_usd": round(0.000003 * context * self.messages / 4, 6),
                "usage": {
                    "input_tokens": 12 * self.messages,
                    "cache_read_input_tokens": context * self.messages // 2,
                    "cache_creation_input_tokens": 0,
                    "output_tokens": self.output_tokens,
                },
            }
        )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "story"


def _append(path: Path, section: str) -> None:
    """Append ``section`` to ``path``, never touching what is already there."""
    # An OpenSpec story's record file lives in the change's records/ folder, new at first use.
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.read_bytes() if path.exists() else b""
    prefix = (
        ""
        if not existing or existing.endswith(b"\n\n")
        else ("\n" if existing.endswith(b"\n") else "\n\n")
    )
    with path.open("a", encoding="utf-8") as handle:
        handle.write(prefix + section.rstrip("\n") + "\n")


def _signal_lines(phase: str, story: str, epic: str, outcome: str, attempt: int) -> list[str]:
    """The closing line(s) for ``outcome``."""
    success = {
        "kickoff": f"KICKOFF COMPLETE: {story}",
        "dev": f"IMPLEMENTATION COMPLETE: {story}",
        "review": f"REVIEW PASSED: {story}"
        if attempt == 1
        else f"REVIEW PASSED WITH FIXES: {story} - Fixed 1 issues",
        "failure": f"ANALYSIS COMPLETE: {story} - Retry",
        "uat": f"UAT COMPLETE: Epic {epic}",
        "retro": f"RETRO COMPLETE: Epic {epic}",
    }
    failure = {
        "kickoff": f"<promise>FAILED: kickoff could not reach the story file for {story}</promise>",
        "dev": f"IMPLEMENTATION BLOCKED: {story} - the test fixture for the parser is missing",
        "review": f"REVIEW FAILED: {story} - error path of the parser has no test",
        "failure": f"ANALYSIS COMPLETE: {story} - Escalate",
        "uat": f"<promise>FAILED: no acceptance criteria found for epic {epic}</promise>",
        "retro": f"<promise>FAILED: story records for epic {epic} are incomplete</promise>",
    }
    if outcome == "ok":
        return [success.get(phase, "<promise>COMPLETE</promise>")]
    if outcome in ("blocked", "fail"):
        return [failure.get(phase, "<promise>FAILED: scripted failure</promise>")]
    return []


def _story_text(root: Path, story_file: str) -> str:
    if not story_file:
        return ""
    path = root / story_file
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _work(t: Transcript, args: argparse.Namespace, root: Path) -> None:
    """The phase's transcript and its changes to the workspace."""
    story, phase, epic = args.story, args.phase, args.epic or "1"
    story_path = root / args.story_file if args.story_file else None
    text = _story_text(root, args.story_file)
    headings = [line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#")]
    title = re.sub(r"^Story\s+\S+:\s*", "", headings[0] if headings else "") or story
    today = date.today().isoformat()
    if story_path is not None:
        t.tool("Read", {"file_path": args.story_file}, f"{len(text.splitlines())} lines")
    system = _story_text(Path(args.system_file).parent, Path(args.system_file).name)
    if phase in PARTY_WORK and is_party(system):
        context = PartyContext(
            story, title, epic, today, root, args.story_file, args.outcome, system, _append
        )
        PARTY_WORK[phase](t, context)
        return
    if phase == "kickoff":
        t.say(f"Reading story {story} before the team discussion: {title}.")
        t.say(
            "Winston (Architect): the parser should stay a pure function.\n"
            "Murat (Test Architect): cover the error path first."
        )
        if story_path is not None:
            _append(
                story_path,
                f"## Story Kickoff Insights\n\n**Discussion Date**: {today}\n\n"
                "### Implementation Strategy\n- Keep parsing pure; write results in one place.\n\n"
                "### Identified Risks\n- Malformed input must fail with one clear line.\n",
            )
            t.tool(
                "Edit", {"file_path": args.story_file, "append": "## Story Kickoff Insights"}, "ok"
            )
        return
    if phase == "dev":
        _dev_work(t, args, root, title)
        return
    if phase == "review":
        t.say(f"You are seeing this code for the first time. Reviewing story {story}.")
        t.tool(
            "Bash",
            {"command": "git diff --staged --stat"},
            " src/module.py | 5 +++++\n 1 file changed",
        )
        verdict = "Changes requested" if args.outcome in ("blocked", "fail") else "Approved"
        if story_path is not None:
            _append(
                story_path,
                f"## Code Review Record\n\n**Reviewed**: {today}\n**Verdict**: {verdict}\n",
            )
        t.say(f"Verdict: {verdict.lower()}.")
        return
    if phase == "failure":
        t.say(
            f"Analysing the failure of story {story}.\n"
            "Bob (Scrum Master): this is a missing fixture, not a design flaw."
        )
        if story_path is not None:
            _append(
                story_path,
                f"## Failure Analysis Record\n\n**Date**: {today}\n"
                "**Recommendation**: Retry with a local fixture.\n",
            )
        return
    retro, handoff_path = retro_targets(system, epic)
    target = root / (f"docs/uat/epic-{epic}-uat.md" if phase == "uat" else retro)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        f"# Epic {epic} — {phase.upper()}\n\nWritten by the replay agent on {today}.\n",
        encoding="utf-8",
    )
    t.tool("Write", {"file_path": str(target.relative_to(root))}, "File written")
    if phase == "retro":
        handoff = root / handoff_path
        handoff.parent.mkdir(parents=True, exist_ok=True)
        handoff.write_text(
            f"# Epic {epic} handoff\n\nContext for the next epic.\n", encoding="utf-8"
        )
    t.say(f"{phase.upper()} document for epic {epic} written.")


def _dev_work(t: Transcript, args: argparse.Namespace, root: Path, title: str) -> None:
    """The dev phase: a blocked or failed attempt stops at a missing fixture; otherwise the
    story's module is written and the checks pass."""
    story = args.story
    story_path = root / args.story_file if args.story_file else None
    t.say(
        f"Implementing story {story}: {title}.\nPlan: write the module, add a test, run the checks."
    )
    module = root / "src" / f"{_slug(story)}.py"
    module.parent.mkdir(parents=True, exist_ok=True)
    if args.outcome in ("blocked", "fail"):
        t.tool(
            "Bash",
            {"command": "pytest -q"},
            "E   fixture 'parser_sample' not found\n1 error in 0.04s",
        )
        t.say("The tests need a fixture that no story provides yet.")
        if story_path is not None:
            _append(
                story_path,
                f"## Dev Agent Record\n\n### Blocker (attempt {args.attempt})\n"
                "- The parser fixture is missing.\n",
            )
        return
    body = (
        f'"""Story {story}: {title}."""\n\n\n'
        "def parse(text: str) -> list[str]:\n"
        '    """Split ``text`` into its non-empty lines."""\n'
        "    return [line for line in text.splitlines() if line.strip()]\n"
    )
    if args.attempt > 1:
        body += "\n\nRETRIED = True\n"
    created = not module.exists()
    module.write_text(body, encoding="utf-8")
    t.tool("Write", {"file_path": str(module.relative_to(root))}, "File written")
    t.tool("Bash", {"command": "pytest -q"}, "...\n3 passed in 0.05s")
    t.say("All checks pass.")
    if story_path is not None:
        _append(
            story_path,
            "## Dev Agent Record\n\n### Implementation Summary\n"
            f"{title} (attempt {args.attempt}).\n\n"
            f"### Files {'Created' if created else 'Modified'}\n- src/{module.name}\n\n"
            "### Tests Added\n- parse() on empty and multi-line input\n",
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="replay")
    parser.add_argument("--phase", required=True)
    parser.add_argument("--story", required=True)
    parser.add_argument("--story-file", default="")
    parser.add_argument("--epic", default="")
    parser.add_argument("--root", default=".")
    parser.add_argument("--user-file", default="")
    parser.add_argument("--system-file", default="")
    parser.add_argument("--outcome", default="ok")
    parser.add_argument("--attempt", type=int, default=1)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--resume", default=None)
    parser.add_argument("--turn", type=int, default=0)
    args = parser.parse_args(argv)
    root = Path(args.root)
    prompt_bytes = sum(
        Path(p).stat().st_size
        for p in (args.user_file, args.system_file)
        if p and Path(p).is_file()
    )
    t = Transcript(args.resume or str(uuid.uuid4()), args.delay, prompt_bytes // 4)
    if args.outcome == "hang-hard":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    t.init()
    if args.resume and args.turn:
        user = Path(args.user_file).read_text(encoding="utf-8") if args.user_file else ""
        asked = next((line for line in reversed(user.splitlines()) if line.strip()), "")
        t.say(f"Turn {args.turn}: noted — {asked[:120]}")
        t.result()
        return 0
    _work(t, args, root)
    if args.outcome == "quoted":
        t.tool("Bash", {"command": "cat prompt.md"}, f"IMPLEMENTATION COMPLETE: {args.story}")
        t.say(f"I will print IMPLEMENTATION COMPLETE: {args.story} once the checks pass.")
        t.say("```\nREVIEW PASSED: " + args.story + "\n```")
    if args.outcome == "crash":
        sys.stderr.write("replay: scripted crash\n")
        return 3
    if args.outcome in ("hang", "hang-hard"):
        t.say("Waiting for the test watcher…")
        while True:
            time.sleep(0.2)
    for line in _signal_lines(args.phase, args.story, args.epic or "1", args.outcome, args.attempt):
        t.say(line)
    t.result()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
