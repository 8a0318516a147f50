"""The replay agent's party phases: what a Party Kickoff, Review, Failure Analysis and
Retrospective look like, offline (``promptdeck demo`` shows them).

The replay agent reads its own system prompt, as a real agent would: a ``## Role: Party …``
entry means the party variant, its "Participating Agents" section names the agents, and the
retro's transfers name the files to write. Each transcript has the agents speak in turn, answer each
other and agree, then does the phase's work (append-only on the story file) — the closing
signal is the caller's, as for every phase.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ..lean_dataclass import dataclass

_PARTY_ENTRY = re.compile(r"^## Role: Party ", re.MULTILINE)
_AGENT = re.compile(r"^### (?P<name>[^()\n]+?) \((?P<role>[^()\n]+)\)$", re.MULTILINE)
_RETRO = re.compile(r"retrospective to the new file\s+`(?P<path>[^`]+)`")
_HANDOFF = re.compile(r"handoff to the new file\s+`(?P<path>[^`]+)`")


class Speaker(Protocol):
    """The transcript calls a party needs (``replay_main.Transcript``)."""

    def say(self, text: str) -> None: ...

    def tool(self, name: str, tool_input: dict[str, Any], result: str) -> None: ...


@dataclass(frozen=True)
class PartyContext:
    """What a party transcript works with."""

    story: str
    title: str
    epic: str
    today: str
    root: Path
    story_file: str
    outcome: str
    system: str
    append: Callable[[Path, str], None]

    @property
    def roster(self) -> str:
        """The prompt's "Participating Agents" section (and nothing of the story's files)."""
        after = self.system.split("## Participating Agents", 1)
        return after[1].split("\n## ", 1)[0] if len(after) == 2 else ""

    @property
    def agents(self) -> list[str]:
        """The agents' names, in the order the prompt lists them."""
        names = [m.group("name").strip() for m in _AGENT.finditer(self.roster)]
        return names or ["Winston", "Amelia", "Murat"]

    @property
    def participants(self) -> str:
        """The agents as the prompt introduces them: ``Winston (Architect), …``."""
        labels = [f"{m.group('name')} ({m.group('role')})" for m in _AGENT.finditer(self.roster)]
        return ", ".join(labels) or ", ".join(self.agents)

    @property
    def story_path(self) -> Path | None:
        return self.root / self.story_file if self.story_file else None


def is_party(system: str) -> bool:
    """True when the system prompt composes a party variant."""
    return bool(_PARTY_ENTRY.search(system))


def retro_targets(system: str, epic: str) -> tuple[str, str]:
    """Where the prompt says the retrospective and handoff go (seed 002's paths if unsaid)."""
    flat = " ".join(system.split())
    retro = _RETRO.search(flat)
    handoff = _HANDOFF.search(flat)
    return (
        retro.group("path") if retro else f"docs/sprints/epic-{epic}-retro.md",
        handoff.group("path") if handoff else f"docs/handoffs/epic-{epic}-handoff.md",
    )


def _turns(t: Speaker, agents: list[str], lines: list[str]) -> None:
    for index, line in enumerate(lines):
        t.say(f"**{agents[index % len(agents)]}**: {line}")


def _kickoff(t: Speaker, c: PartyContext) -> None:
    a = c.agents
    t.say(f"Party Kickoff of story {c.story}: {c.title}. Participants: {c.participants}.")
    _turns(
        t,
        a,
        [
            "The parser should stay a pure function; the importer owns the file handling.",
            f"Agreed with {a[0]}: I will extend the existing module rather than add a new one.",
            f"{a[1]}, then the error path is the risk: malformed rows need a test first.",
        ],
    )
    t.say("Consensus: pure parsing, reuse the module, error-path tests before the happy path.")
    if c.story_path is not None:
        c.append(
            c.story_path,
            f"## Story Kickoff Insights\n\n**Discussion Date**: {c.today}\n"
            f"**Participants**: {c.participants}\n\n"
            "### Architectural Notes\n- Keep parsing pure; the importer owns file handling.\n\n"
            "### Implementation Strategy\n- Extend the existing module; reuse its helpers.\n\n"
            "### Testing Approach\n- Error-path tests first, then the happy path.\n\n"
            "### Identified Risks\n- Malformed input must fail with one clear line.\n",
        )
        t.tool("Edit", {"file_path": c.story_file, "append": "## Story Kickoff Insights"}, "ok")


def _review(t: Speaker, c: PartyContext) -> None:
    a = c.agents
    t.say(f"Party Code Review of story {c.story}. The agents see this code for the first time.")
    t.tool(
        "Bash", {"command": "git diff --staged --stat"}, " src/module.py | 5 +++++\n 1 file changed"
    )
    failed = c.outcome in ("blocked", "fail")
    _turns(
        t,
        a,
        [
            "Looking at the architecture, the new function follows the module's pattern.",
            f"From a testing perspective, {a[0]} raises a good point, but the error path of the "
            "parser has no test: MEDIUM.",
            f"I agree with {a[1]} on test coverage. Additionally, the names read well.",
        ],
    )
    verdict = "Changes requested" if failed else "Approved"
    consensus = (
        "the missing error-path test remains (MEDIUM, not fixed)"
        if failed
        else "no issue needs a fix"
    )
    t.say(f"### Consensus\n{consensus}.")
    if c.story_path is not None:
        c.append(
            c.story_path,
            f"## Party Review Record\n\n**Reviewed**: {c.today}\n"
            f"**Participants**: {c.participants}\n**Verdict**: {verdict}\n\n"
            f"### Consensus\n- {consensus[:1].upper() + consensus[1:]}.\n",
        )


def _failure(t: Speaker, c: PartyContext) -> None:
    a = c.agents
    recommendation = "Escalate" if c.outcome in ("blocked", "fail") else "Retry"
    t.say(f"Party Failure Analysis of story {c.story}. Participants: {c.participants}.")
    _turns(
        t,
        a,
        [
            "Not an architectural issue: the design holds.",
            "An implementation gap: the test fixture was never written.",
            "No requirement is unclear; nothing blocks the story but the fixture.",
        ],
    )
    t.say(f"Consensus: {recommendation}.")
    if c.story_path is not None:
        c.append(
            c.story_path,
            f"## Failure Analysis Record\n\n**Date**: {c.today}\n"
            f"**Participants**: {c.participants}\n"
            "**Cause**: the parser's test fixture is missing.\n"
            f"**Recommendation**: {recommendation}\n",
        )


def _retro(t: Speaker, c: PartyContext) -> None:
    a = c.agents
    t.say(f"Party Retrospective of epic {c.epic}. Participants: {c.participants}.")
    _turns(
        t,
        a,
        [
            "What we planned against what happened: the execution summary shows the rework.",
            "The module boundaries held; no decision needs revisiting.",
            "Rework came from missing fixtures, twice.",
            f"{a[2] if len(a) > 2 else a[0]} is right: fixtures first becomes an action item.",
        ],
    )
    retro, handoff = retro_targets(c.system, c.epic)
    for relative, body in (
        (
            retro,
            f"# Epic {c.epic} retrospective\n\n**Participants**: {c.participants}\n\n"
            "## Action items\n- Write test fixtures before the code that needs them.\n",
        ),
        (handoff, f"# Epic {c.epic} handoff\n\nContext for the next epic.\n"),
    ):
        target = c.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
        t.tool("Write", {"file_path": relative}, "File written")


PARTY_WORK: dict[str, Callable[[Speaker, PartyContext], None]] = {
    "kickoff": _kickoff,
    "review": _review,
    "failure": _failure,
    "retro": _retro,
}
"""The party transcript of each party phase."""
