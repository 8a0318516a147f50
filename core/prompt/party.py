"""Party mode (seed 002): kickoff, review, failure analysis and retro as multi-agent talks.

A party variant is the same phase — same inputs, same signals, same isolation — told to run as
a discussion between BMAD agents in one fresh context. Only Layer-3 (the entry: who speaks and
how) and a short note in Layer-5 change; the standard and party variants of a phase share their
contract, their transfers and their apply policy.

The agents are data: one persona file per agent, bundled in ``core/personas/`` and overridable
per workspace in ``config.paths_personas`` (``.promptdeck/personas/<name>.md``), so a BMAD team
can bring its own agent definitions. A persona file starts with ``# Name (Role)``; the lines
after it (focus, communication style, an ``**Icon**``) are injected as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

from ..errors import ComposeError, UsageError
from ..lean_dataclass import dataclass
from ..project.config import Config
from ..project.textfiles import TextProblem, read_text
from ..project.workspace import Workspace

VARIANTS = ("standard", "party")
"""The two variants of a phase."""
PARTY_PHASES = ("kickoff", "review", "failure", "retro")
"""The phases that have a party variant (seed 002's four flags)."""

PARTICIPANTS: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType(
    {
        "kickoff": (
            ("winston", "Architectural notes: patterns to follow, integration points"),
            ("amelia", "Implementation strategy: what to extend, what to reuse"),
            ("murat", "Testing approach and the risks worth testing first"),
        ),
        "review": (
            ("winston", "Pattern adherence, scalability, API design consistency"),
            ("murat", "Test coverage, security vulnerabilities, edge cases"),
            ("amelia", "Code quality, readability, maintainability, error handling"),
        ),
        "failure": (
            ("winston", "Assess if this is an architectural issue"),
            ("amelia", "Assess if this is an implementation issue"),
            ("bob", "Assess if this is a requirements or process issue"),
        ),
        "retro": (
            ("bob", "Facilitates: what was planned against what happened"),
            ("winston", "Architecture: decisions that held, decisions to revisit"),
            ("amelia", "Implementation: friction, rework, what to reuse"),
            ("murat", "Quality: review findings, failures, test gaps"),
        ),
    }
)
"""Who takes part in each party phase, in speaking order, with their brief in that phase."""

_HEADING = re.compile(r"^#\s+(?P<name>[^()\n]+?)\s*\((?P<role>[^()\n]+)\)\s*$")
_ICON = re.compile(r"\*\*Icon\*\*:\s*(?P<icon>\S+)")


@dataclass(frozen=True)
class Persona:
    """One agent of a party.

    Attributes:
        key: the file's stem, e.g. ``winston``.
        name: ``Winston``.
        role: ``Architect``.
        body: the persona's lines after its heading, as written.
        icon: the mark its turns start with (``**Icon**`` in the file; ``▸`` when none).
        source: ``persona:winston.md`` (bundled) or the workspace path of the override.
    """

    key: str
    name: str
    role: str
    body: str
    icon: str
    source: str

    @property
    def label(self) -> str:
        """``Winston (Architect)``."""
        return f"{self.name} ({self.role})"


def parse_persona(key: str, text: str, source: str) -> Persona:
    """A persona from its file's text.

    Raises:
        ComposeError: the file does not start with a ``# Name (Role)`` heading.
    """
    lines = text.replace("\r\n", "\n").strip("\n").split("\n")
    match = _HEADING.match(lines[0]) if lines else None
    if match is None:
        raise ComposeError(f"persona {source}: the first line must be '# Name (Role)'")
    body = "\n".join(lines[1:]).strip("\n")
    icon = _ICON.search(body)
    return Persona(
        key=key,
        name=match.group("name").strip(),
        role=match.group("role").strip(),
        body=body,
        icon=icon.group("icon") if icon else "▸",
        source=source,
    )


@lru_cache(maxsize=32)
def _bundled(key: str) -> str | None:
    # Package data cannot change under a running process, so it is read once.
    from importlib import resources  # here: the app's start reads no persona

    entry = resources.files("promptdeck.core").joinpath("personas", f"{key}.md")
    try:
        return entry.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return None


def load_persona(workspace: Workspace | None, key: str) -> Persona:
    """The persona ``key``: the workspace's override when one exists, else the bundled one.

    Overrides are read fresh at every compose, like template overrides.

    Raises:
        ComposeError: an override is unreadable, not UTF-8, leads outside the project or is
            malformed; or no persona of that name exists.
    """
    if workspace is not None and workspace.config.paths_personas:
        folder = Path(workspace.config.paths_personas)
        path = (folder if folder.is_absolute() else workspace.root / folder) / f"{key}.md"
        shown = (folder / f"{key}.md").as_posix()
        if path.is_file():
            if not workspace.contains(path):
                # A cloned repository must not send a file from outside it to the agent.
                raise ComposeError(f"persona override {shown} leads outside the project; not read")
            read = read_text(path, workspace.root, limit=workspace.config.read_max_bytes)
            if isinstance(read, TextProblem):
                if read.reason in ("not-utf8", "binary"):
                    raise ComposeError(f"persona override {shown}: not UTF-8 text")
                raise ComposeError(f"persona override {shown}: {read}")
            text = read
            return parse_persona(key, text, shown)
    bundled = _bundled(key)
    if bundled is None:
        raise ComposeError(f"persona {key}.md is missing from the installed package")
    return parse_persona(key, bundled, f"persona:{key}.md")


def check_variant(phase: str, variant: str) -> None:
    """Refuse a variant the phase does not have.

    Raises:
        UsageError: an unknown variant, or ``party`` for dev or UAT.
    """
    if variant not in VARIANTS:
        raise UsageError(f"unknown variant '{variant}' (one of: {', '.join(VARIANTS)})")
    if variant == "party" and phase not in PARTY_PHASES:
        raise UsageError(
            f"the {phase} phase has no party variant (party phases: {', '.join(PARTY_PHASES)})"
        )


def default_variant(config: Config, phase: str) -> str:
    """The variant ``phase`` is composed in when nobody chose (``[party] <phase>``)."""
    if phase in PARTY_PHASES and getattr(config, f"party_{phase}"):
        return "party"
    return "standard"


@dataclass(frozen=True)
class Party:
    """The agents of one party phase, ready for the templates."""

    phase: str
    personas: tuple[Persona, ...]
    briefs: tuple[str, ...]

    @property
    def participants(self) -> str:
        """``Winston (Architect), Amelia (Developer), Murat (Test Architect)``."""
        return ", ".join(persona.label for persona in self.personas)

    def render_personas(self) -> str:
        """The "Participating Agents" subsections: each persona with its brief in this phase."""
        blocks = []
        for persona, brief in zip(self.personas, self.briefs, strict=True):
            lines = [f"### {persona.label}", "", f"- **In this phase**: {brief}"]
            if persona.body:
                lines.append(persona.body)
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    def render_voices(self) -> str:
        """How each agent's turn is marked in the output, one example line per agent."""
        return "\n".join(f'{p.icon} **{p.name}**: "…"' for p in self.personas)

    @property
    def sources(self) -> tuple[str, ...]:
        """Where each persona came from (bundled or a workspace override)."""
        return tuple(persona.source for persona in self.personas)


def party_for(workspace: Workspace | None, phase: str) -> Party:
    """The party of ``phase``: its participants' personas, read now.

    Raises:
        UsageError: the phase has no party variant.
        ComposeError: a persona file is missing or malformed.
    """
    check_variant(phase, "party")
    members = PARTICIPANTS[phase]
    personas = tuple(load_persona(workspace, key) for key, _ in members)
    return Party(phase, personas, tuple(brief for _, brief in members))
