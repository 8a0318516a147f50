"""The argument parser's own classes: ``--version`` and the usage error's exit code.

Apart from the CLI's entry module so that ``argparse`` is imported only when a command line is
parsed — never for ``promptdeck --version`` or an answer replayed from the cache.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..core.errors import EXIT_USAGE
from .version import PROG, installed_version


class VersionAction(argparse.Action):
    """``--version``: reads the package metadata only when asked, so other commands never pay."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(
            option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, help=help
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(f"{PROG} {installed_version()}")
        parser.exit()


class Parser(argparse.ArgumentParser):
    """A usage error exits with the CLI's usage code (2) after the usage line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")
