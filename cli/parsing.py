"""The argument parser's own classes: ``--version``, the usage error's exit code and each
command's link to its reference page.

Apart from the CLI's entry module so that ``argparse`` is imported only when a command line is
parsed — never for ``promptdeck --version`` or an answer replayed from the cache.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import EXIT_USAGE
from .version import PROG, installed_version

COMMANDS_PAGE = "docs/commands.md"
"""The reference page of every command, a section per command (its heading: the command's name)."""


def reference(command: str) -> str:
    """The line closing ``command``'s ``--help``: where its reference lives."""
    return f"Reference: {COMMANDS_PAGE}#{command}"


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


if TYPE_CHECKING:
    _SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:  # not subscriptable at run time
    _SubParsers = argparse._SubParsersAction


class Subcommands(_SubParsers):
    """The subcommands' action: every command's ``--help`` ends with its reference link, so a new
    command is linked without a word in its own module."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        epilog = kwargs.get("epilog")
        kwargs["epilog"] = f"{epilog}\n\n{reference(name)}" if epilog else reference(name)
        return super().add_parser(name, **kwargs)
