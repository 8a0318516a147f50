"""Where the real agents' programs are found, and the backend used when none is named.

Apart from the backends themselves, so that the app can say which agent it will run without
loading any of them (their parsers and profiles are for runs, which come later).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..agent_names import CLAUDE_BIN_ENV, CODEX_BIN_ENV
from ..processes import resolve_program

if TYPE_CHECKING:
    from ..project.config import Config


def claude_binary(config: Config) -> str:
    """The binary to run: ``PROMPTDECK_CLAUDE_BIN``, else config ``agent.claude_bin``."""
    return os.environ.get(CLAUDE_BIN_ENV) or config.agent_claude_bin


def codex_binary(config: Config) -> str:
    """The binary to run: ``PROMPTDECK_CODEX_BIN``, else config ``agent.codex_bin``."""
    return os.environ.get(CODEX_BIN_ENV) or config.agent_codex_bin


def found_default_agent(config: Config) -> str | None:
    """The backend used when none is named: config ``agent.default``, else ``claude`` when
    its binary is found; None when neither."""
    if config.agent_default:
        return config.agent_default
    return "claude" if resolve_program(claude_binary(config), None) else None
