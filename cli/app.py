"""``promptdeck [PATH]`` / ``promptdeck app`` and ``promptdeck demo``: the Textual app.

The app is imported inside the launch only (an ordinary import mypy checks), so every
headless command starts without Textual.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..core.errors import EXIT_OK, UsageError
from ..core.project import AGENTS, ENCODINGS, Workspace, open_workspace

DEMO_LABEL = "demo"
"""What the header calls the demo workspace (its real folder is temporary)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``app`` and ``demo`` subcommands."""
    app = subparsers.add_parser(
        "app",
        help="open the app on a workspace (the default: `promptdeck [PATH]`)",
        description=(
            "Open the app: the story tree, the live eight-layer preview with byte and token "
            "meters, inclusion toggles, and a phase panel that streams the agent's output."
        ),
    )
    app.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="a folder inside the workspace (default: the current folder)",
    )
    _add_common(app)
    app.add_argument(
        "--root", metavar="PATH", help="the workspace root itself (instead of finding it)"
    )
    app.add_argument(
        "--no-git",
        action="store_true",
        help="runs without git: no SHAs, no staging, no commit (for a workspace outside git)",
    )
    app.set_defaults(handler=run_app)

    demo = subparsers.add_parser(
        "demo",
        help="open the app on a temporary copy of the bundled demo workspace (replay agent)",
        description=(
            "Copy the bundled demo workspace into a temporary git repository and open the app "
            "on it with the offline replay agent: nothing else needs to be installed. The "
            "temporary folder is deleted on quit unless --keep is given."
        ),
    )
    _add_common(demo, agent_default="replay")
    demo.add_argument(
        "--keep",
        action="store_true",
        help="keep the demo's temporary folder after quitting (default: it is deleted)",
    )
    demo.set_defaults(handler=run_demo)


def _add_common(parser: argparse.ArgumentParser, agent_default: str | None = None) -> None:
    parser.add_argument(
        "--agent",
        choices=AGENTS,
        default=agent_default,
        help="agent backend for runs (default: the workspace's [agent] default)"
        if agent_default is None
        else f"agent backend for runs (default: {agent_default})",
    )
    parser.add_argument(
        "--encoding",
        choices=ENCODINGS,
        help="tiktoken encoding for token meters (default: config, else o200k_base)",
    )


def _require_terminal() -> None:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "the app needs a terminal (stdin and stdout are not one); for scripts use the "
            "headless commands: stories, inspect, compose, run, runs"
        )


def _launch(workspace: Workspace, args: argparse.Namespace, label: str | None) -> int:
    # Imported here, not at the top: the headless commands never load Textual.
    from ..tui.session.opening import OpeningHelper
    from ..tui.settings import load_settings
    from ..tui.startup import hold_for_first_frame

    settings = load_settings()
    encoding = args.encoding or workspace.config.tokens_encoding
    # Both forked before Textual is imported (and before any thread starts): the encoder, so
    # that building it never holds the screen still (promptdeck.core.tokens), held until the
    # first frame is painted (promptdeck.tui.startup), and the catalog and the first prompt,
    # read on another core while this process builds the screen.
    hold_for_first_frame(encoding)
    opening = OpeningHelper.start(
        workspace,
        encoding,
        settings.settings.open_phase,
        workspace.config.delivery,
        settings.settings.theme,
    )
    try:
        from ..tui.app import PromptdeckApp

        app = PromptdeckApp(
            workspace,
            agent=args.agent,
            encoding=args.encoding,
            workspace_label=label,
            settings=settings,
            use_git=not getattr(args, "no_git", False),
            opening=opening,
        )
        app.run()
    finally:
        if opening is not None:
            opening.close()
    return EXIT_OK


def open_app_workspace(path: str | None, root: str | None) -> Workspace:
    """The workspace ``promptdeck [PATH] [--root PATH]`` names.

    Raises:
        UsageError: PATH is not a folder, or PATH and --root are both given.
        WorkspaceError: no workspace is found from PATH.
    """
    if path is not None and root is not None:
        raise UsageError("give either PATH or --root, not both")
    if path is None:
        return open_workspace(root)
    start = Path(path).expanduser()
    if not start.is_dir():
        raise UsageError(f"{path}: not a folder")
    return open_workspace(None, cwd=start)


def run_app(args: argparse.Namespace) -> int:
    """Open the app on the workspace found from PATH (or at --root)."""
    workspace = open_app_workspace(args.path, args.root)
    _require_terminal()
    return _launch(workspace, args, None)


def run_demo(args: argparse.Namespace) -> int:
    """Open the app on a temporary copy of the demo workspace; delete it on quit unless --keep."""
    from ..core.demo import temporary_demo  # here: opening a project never loads the demo

    _require_terminal()
    with temporary_demo(keep=args.keep) as root:
        print(f"promptdeck: demo workspace at {root}", file=sys.stderr)
        code = _launch(open_workspace(os.fspath(root)), args, DEMO_LABEL)
    if args.keep:
        print(f"promptdeck: demo workspace kept at {root}", file=sys.stderr)
    else:
        print(
            f"promptdeck: demo workspace {root} deleted (`promptdeck demo --keep` keeps it)",
            file=sys.stderr,
        )
    return code
