"""Any CLI, from the argv template in config ``agent.command_argv``.

Placeholders: ``{system_file}``, ``{user_file}`` (the run's prompt files), ``{story}``,
``{phase}``, ``{root}``. The process gets no stdin; every line it prints on stdout is its own
text, so a signal on a line of its own there counts.
"""

from __future__ import annotations

from ..errors import UsageError
from ..project.config import Config
from .base import LaunchRequest, LaunchSpec, PlainTextParser

PLACEHOLDERS = ("system_file", "user_file", "story", "phase", "root")


class CommandAgent:
    """The ``command`` backend."""

    name = "command"
    stream_format = "text"

    def __init__(self, config: Config) -> None:
        self.config = config

    def launch(self, request: LaunchRequest) -> LaunchSpec:
        """The template with its placeholders filled in.

        Raises:
            UsageError: the template is empty or names an unknown placeholder.
        """
        template = self.config.agent_command_argv
        if not template:
            raise UsageError(
                "agent.command_argv is empty: set it in .promptdeck/config.toml, e.g. "
                'command_argv = ["my-agent", "--system", "{system_file}", "{user_file}"]'
            )
        values = {
            "system_file": str(request.system_file),
            "user_file": str(request.user_file),
            "story": request.story_id,
            "phase": request.phase,
            "root": str(request.root),
        }
        argv: list[str] = []
        for part in template:
            try:
                argv.append(part.format_map(values))
            except (KeyError, IndexError, ValueError) as exc:
                raise UsageError(
                    f"agent.command_argv: {part!r} has an unknown placeholder ({exc}); "
                    f"known: {', '.join('{' + p + '}' for p in PLACEHOLDERS)}"
                ) from None
        return LaunchSpec(argv=tuple(argv), cwd=request.root, stdin=None)

    def output_parser(self) -> PlainTextParser:
        """Every stdout line is agent text."""
        return PlainTextParser()
