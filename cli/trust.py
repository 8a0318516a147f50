"""``promptdeck trust``: allow runs to act on what the project's own config chooses.

``.promptdeck/config.toml`` is a file of the repository; it may name the program a run starts
(``[agent] claude_bin``, ``codex_bin``, ``command_argv``) or its arguments (``claude_args``,
``codex_args``, ``codex_sandbox``). A run that would act on such a setting is refused (exit 10)
until the user has read the file and trusted this version of it. See
:mod:`promptdeck.core.project.trust`.
"""

from __future__ import annotations

import argparse

from ..core.errors import EXIT_OK
from ..core.project import (
    forget_config,
    program_files,
    program_settings,
    trust_config,
    trust_store_path,
)
from .common import add_workspace_options, print_json, workspace_from


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``trust`` subcommand."""
    parser = subparsers.add_parser(
        "trust",
        help="allow runs to use the program and arguments the project's config names",
        description=(
            "Show the settings of .promptdeck/config.toml that choose what a run starts (the "
            "agent's binary, its arguments, a command's argv) and record that you trust this "
            "version of the file, in $XDG_CONFIG_HOME/promptdeck/trusted.json. A changed file "
            "must be trusted again; until then a run that would use it is refused (exit 10)."
        ),
    )
    parser.add_argument(
        "--forget", action="store_true", help="withdraw the trust in this project's config"
    )
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle ``promptdeck trust``."""
    workspace = workspace_from(args)
    config = workspace.config
    settings = program_settings(config)
    files = program_files(workspace)
    if args.forget:
        forgotten = forget_config(workspace)
        if args.json:
            print_json({"config": config.source, "forgotten": forgotten})
        else:
            print("trust withdrawn" if forgotten else "this project's config was not trusted")
        return EXIT_OK
    digest = trust_config(workspace)
    if args.json:
        print_json(
            {
                "config": config.source,
                "config_sha256": config.source_sha256,
                "digest": digest,
                "settings": list(settings),
                "files": list(files),
                "store": str(trust_store_path()),
            }
        )
        return EXIT_OK
    if digest is None:
        print("this project has no .promptdeck/config.toml: nothing to trust")
        return EXIT_OK
    print(f"trusted {config.source} as it is now (digest {digest[:12]}…) for {workspace.root}")
    if settings:
        print("runs may now use:")
        for line in settings:
            print(f"  {line}")
        for rel in files:
            print(f"  {rel} (this project's file, as it is now: a change needs trusting again)")
    else:
        print("it names no program or arguments: runs needed no trust")
    return EXIT_OK
