"""The environment variables that turn a part of promptdeck off (``PROMPTDECK_TOKEN_CACHE=off``,
``PROMPTDECK_ANSWER_CACHE=off`` …), and the one set of words that means "off" for all of them.

A leaf module: the CLI asks it before it loads anything else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

ANSWER_CACHE = "PROMPTDECK_ANSWER_CACHE"
"""Remembered answers: the CLI's (``inspect``, ``compose``, ``stories`` into a pipe or a file)
and the app's opening."""

OFF_WORDS = ("off", "0", "no", "false", "none")
"""What a switch may be set to, in any case and with spaces around, to turn its part off."""


def is_off(value: str) -> bool:
    """True when ``value`` (a switch's setting) means off."""
    return value.strip().lower() in OFF_WORDS


def turned_off(variable: str, environ: Mapping[str, str] | None = None) -> bool:
    """True when the environment variable ``variable`` turns its part off."""
    env = os.environ if environ is None else environ
    return is_off(env.get(variable, ""))
