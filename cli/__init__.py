"""The headless CLI, ``promptdeck``: a thin face over the same core calls the app makes.

Each command lives in its own module exposing ``register(subparsers)``; the module's handler
returns an exit code. :func:`main` turns every :class:`PromptdeckError` into one line on
stderr and its documented exit code — never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..core.errors import EXIT_INTERRUPTED, EXIT_USAGE, PromptdeckError
from ..core.terminal import printable_line

if TYPE_CHECKING:
    import argparse

from .version import PROG, installed_version

_TOP_LEVEL_OPTIONS = ("-h", "--help", "--version")
_COUNTING_COMMANDS = ("inspect", "compose")
_HELP = frozenset(("-h", "--help"))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``promptdeck`` argument parser: every subcommand, or only ``command``'s."""
    from . import commands
    from .parsing import Parser, Subcommands, VersionAction

    parser = Parser(
        prog=PROG,
        description=(
            "A terminal workbench for the prompts that drive coding agents. With no command, "
            "opens the app on the workspace at PATH (default: found from the current folder)."
        ),
        epilog="Exit codes: 0 ok · 2 usage or bad input · 3 over the size limit · "
        "4 the agent signalled failure · 5 no signal, timeout or crash · "
        "6 the git step failed or was refused · 7 the run could not be saved, or another "
        "run holds the story · 8 run refused: likely secrets in the injection "
        "(--allow-secrets) · 9 run refused: over the phase's token budget · 10 run refused: the "
        "project's config names the agent's program and is not trusted (promptdeck trust) · "
        "11 the status write-back failed · 12 capture: no client, too old, a timeout, another "
        "host tried, or no request · 13 the agent changed a file outside its phase's write scope · "
        "130 Ctrl-C.",
    )
    parser.add_argument(
        "--version", action=VersionAction, help="print the installed version and exit"
    )
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=Parser, action=Subcommands
    )
    for module in commands.modules(command):
        module.register(sub)
    return parser


def _did_you_mean(word: str, commands: Iterable[str]) -> str | None:
    """The command ``word`` was most likely meant to be (a typo), if one is close enough."""
    import difflib

    matches = difflib.get_close_matches(word.lower(), list(commands), n=1, cutoff=0.7)
    return matches[0] if matches else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns (and, as a console script, exits with) the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["--version"]:
        # Answered before any command module is imported: the whole answer is one file read.
        print(f"{PROG} {installed_version()}")
        return 0
    # Before any class is made: their generated methods come compiled from the last run
    # (promptdeck.core.tokens.generated_code).
    from ..core.tokens import install_code_memory

    install_code_memory()
    # First of all, so that the build overlaps everything else (only when nothing is counted
    # yet, so no remembered answer can end the command before the encoder is wanted).
    _start_encoder(args_list)
    from . import answers

    if answers.answerable(args_list):
        # inspect/compose/stories into a pipe: a remembered answer, proven current, ends it here.
        replayed = answers.replay(args_list)
        if replayed is None:
            code = answers.record(args_list, lambda: _parsed_and_run(args_list))
        else:
            code = replayed
    else:
        code = _parsed_and_run(args_list)
    # After the output (and outside any copy of it): the store's rebuild, if there was one.
    _cache_notice()
    return code


def _start_encoder(args_list: list[str]) -> None:
    """For a command that counts tokens, build the encoder in a second process while this one
    imports and composes (promptdeck.core.tokens.encoder_process); unused if every count it
    needs is remembered."""
    if args_list[:1] and args_list[0] in _COUNTING_COMMANDS and not _HELP.intersection(args_list):
        from ..core.tokens import start_encoder_process

        start_encoder_process()


def _parsed_and_run(args_list: list[str]) -> int:
    from .commands import COMMAND_MODULES
    from .common import safe_output

    # `promptdeck [PATH]` opens the app: anything that is not a command or an option is a path.
    first = args_list[0] if args_list else None
    if first is not None and first not in COMMAND_MODULES and not first.startswith("-"):
        suggestion = _did_you_mean(first, COMMAND_MODULES)
        if suggestion is not None and not os.path.exists(first):
            print(
                f"{PROG}: unknown command {first!r}; did you mean {suggestion!r}?"
                f" ({PROG} --help lists the commands)",
                file=sys.stderr,
            )
            return EXIT_USAGE
    if first is None or (first not in COMMAND_MODULES and first not in _TOP_LEVEL_OPTIONS):
        args_list = ["app", *args_list]
    command = args_list[0] if args_list[0] in COMMAND_MODULES else None
    args = build_parser(command).parse_args(args_list)
    if args.command in ("app", "demo"):
        # The app draws the screen with escape sequences of its own; its widgets show
        # workspace text through the same guard (promptdeck.core.terminal).
        return _dispatch(args)
    # Every byte a command prints passes the terminal guard: no control sequence from a
    # cloned repository (a story title, an agent's output) reaches the user's terminal raw.
    with safe_output():
        return _dispatch(args)


def _cache_notice() -> None:
    """One line on stderr for each cache file found foreign or damaged (and rebuilt)."""
    # Read from the module only if this process loaded it: an answered command never did.
    store = sys.modules.get("promptdeck.core.tokens.store")
    for notice in getattr(store, "store_notices", list)():
        print(f"{PROG}: {printable_line(notice)}", file=sys.stderr)


def _dispatch(args: argparse.Namespace) -> int:
    try:
        code: int = args.handler(args)
        sys.stdout.flush()
    except PromptdeckError as exc:
        print(f"{PROG}: {printable_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            return _broken_pipe()
        # A full disk, a read-only project, a vanished folder: one line, never a traceback.
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"{PROG}: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_USAGE
    except RecursionError:
        print(f"{PROG}: input nested too deeply to read", file=sys.stderr)
        return EXIT_USAGE
    return code


def _broken_pipe() -> int:
    # The reader went away (`promptdeck stories | head`): not an error. Point stdout at
    # /dev/null so the interpreter's final flush does not fail a second time.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
