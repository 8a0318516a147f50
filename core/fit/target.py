"""The limit a prompt is to fit: ``120KiB`` (bytes), ``30000t`` (tokens) or ``80%`` (of the
default agent's context window), as ``inspect --fit`` and the app's fit key give it."""

from __future__ import annotations

import math
import re
from typing import Literal

from ..errors import UsageError
from ..lean_dataclass import dataclass
from ..project.config import Config
from ..tokens.context_window import context_window_of
from ..units import KIB, human_bytes

Unit = Literal["bytes", "tokens"]

_TARGET = re.compile(
    r"^\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>b|bytes?|kib|kb|k|mib|mb|m|t|tok|tokens?|%)?\s*$",
    re.IGNORECASE,
)
_BYTE_UNITS = {"": 1, "b": 1, "byte": 1, "bytes": 1, "kib": KIB, "kb": KIB, "k": KIB}
_BYTE_UNITS |= {"mib": KIB * KIB, "mb": KIB * KIB, "m": KIB * KIB}


@dataclass(frozen=True)
class FitTarget:
    """The limit a prompt (system prompt and user message) is to fit.

    Attributes:
        limit: the most bytes or tokens the prompt may have.
        unit: ``bytes`` or ``tokens``.
        given: the target as the user wrote it (``120KiB``, ``30000t``, ``80%``).
    """

    limit: int
    unit: Unit
    given: str
    scope: Literal["prompt", "injection"] = "prompt"
    """What is measured: the prompt sent, or the injection alone (its error line)."""

    def describe(self) -> str:
        """``120.0 KiB (120KiB)`` or ``30,000 tokens (80% of a 37,500-token window)``."""
        amount = human_bytes(self.limit) if self.unit == "bytes" else f"{self.limit:,} tokens"
        return amount if amount == self.given else f"{amount} ({self.given})"


def agent_window(config: Config, captured: int | None = None) -> int:
    """The context window a ``%`` target is a share of: the default agent's (Claude's when
    none is set), as :func:`~promptdeck.core.tokens.context_window.context_use` takes it —
    the window a kept capture of the client reported (``captured``) wins over the configured
    one, whose default is the client's in :data:`~promptdeck.core.client_loads.CLIENT_WINDOWS`.
    """
    agent = "codex" if config.agent_default == "codex" else "claude"
    return captured or context_window_of(config, agent)


def parse_target(text: str, window_tokens: int) -> FitTarget:
    """``120KiB`` (bytes), ``30000t`` (tokens) or ``80%`` (of the model's context window).

    Raises:
        UsageError: the text names no size.
    """
    match = _TARGET.match(text)
    if match is None:
        raise UsageError(
            f"--fit {text!r}: give a size such as 120KiB, 150000 (bytes), 30000t (tokens) or "
            "80% (of the model's context window)"
        )
    number = float(match["number"])
    unit = (match["unit"] or "").lower()
    if unit == "%":
        if not 0 < number <= 100:
            raise UsageError(f"--fit {text!r}: a share is more than 0% and at most 100%")
        given = f"{match['number']}% of a {window_tokens:,}-token window"
        return FitTarget(math.floor(window_tokens * number / 100), "tokens", given)
    if unit in ("t", "tok", "token", "tokens"):
        return FitTarget(int(number), "tokens", text.strip())
    return FitTarget(int(number * _BYTE_UNITS[unit]), "bytes", text.strip())
