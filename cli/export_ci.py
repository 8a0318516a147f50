"""``promptdeck export --ci github --epic N``: the epic's stories as GitHub Actions jobs.

Writes ``.github/workflows/promptdeck-epic-<N>.yml`` (per wave of the overlap plan, a dev job
and a review job, matrices over the wave's stories, each running the agent's action with
promptdeck's system prompt and user message) and the payload files under
``.promptdeck/ci/epic-<N>/``. Commit both; run the workflow by hand (workflow_dispatch); read its
artifacts back with ``promptdeck import-runs``.
"""

from __future__ import annotations

import argparse

from ..core.agents import resolve_agent_name
from ..core.errors import EXIT_OK
from ..core.fleet import export_github
from ..core.terminal import printable_line
from .common import add_workspace_options, print_json, workspace_from


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``export`` subcommand."""
    parser = subparsers.add_parser(
        "export",
        help="export an epic's stories as CI jobs (a GitHub Actions workflow)",
        description=(
            "Compose every story × phase (dev, review) of the epic and write a GitHub Actions "
            "workflow that runs them in the overlap plan's waves with anthropics/claude-code-"
            "action or openai/codex-action, plus the prompt files it sends."
        ),
    )
    parser.add_argument("--ci", choices=("github",), required=True, help="the CI to export for")
    parser.add_argument("--epic", required=True, metavar="N", help="the epic id")
    parser.add_argument(
        "--agent", choices=("claude", "codex"), help="the agent's action (default: config)"
    )
    parser.add_argument(
        "--allow-secrets",
        action="store_true",
        help="write the payloads even when injected files hold likely credentials (the "
        "payloads are committed and pushed for the workflow to read them)",
    )
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle ``promptdeck export``."""
    workspace = workspace_from(args)
    agent = args.agent or resolve_agent_name(None, workspace.config)
    written = export_github(workspace, args.epic, agent, allow_secrets=args.allow_secrets)
    root = workspace.root
    if args.json:
        print_json(
            {
                "workflow": str(written.workflow.relative_to(root)),
                "payloads": [str(p.relative_to(root)) for p in written.payloads],
                "waves": [list(wave) for wave in written.waves],
            }
        )
        return EXIT_OK
    rows = [
        ("workflow", str(written.workflow.relative_to(root))),
        *((f"wave {n}", " ".join(wave)) for n, wave in enumerate(written.waves, start=1)),
        ("payloads", f"{len(written.payloads)} under .promptdeck/ci/"),
    ]
    for label, value in rows:
        print(f"{label}\t{printable_line(value)}")
    return EXIT_OK
