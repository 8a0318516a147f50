"""``promptdeck diff RUN [RUN | --now]``: what changed between the prompt a run sent and
another run's, or the prompt that would be sent now — per layer and per injected file."""

from __future__ import annotations

import argparse

from ..core.errors import EXIT_OK, UsageError
from ..core.prompt import (
    PromptRequest,
    compare,
    diff_text,
    last_run_of,
    side_of_prompt,
    side_of_run,
)
from ..core.records import load_run
from .common import (
    add_inclusion_options,
    add_workspace_options,
    print_json,
    selection_from,
    workspace_from,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``diff`` subcommand."""
    parser = subparsers.add_parser(
        "diff",
        help="compare the prompt of a run with another run's, or with the prompt now",
        description=(
            "Compare the exact prompt a run sent with another run's (RUN RUN), with the prompt "
            "that would be sent now for the same story, phase and mode (RUN --now), or, with "
            "one RUN, with the previous run of that phase. Per layer and per injected file: "
            "added, removed, changed, with line diffs. RUN is a run id, a unique prefix, or "
            "'last'."
        ),
    )
    parser.add_argument("old", metavar="RUN", help="the run to compare from")
    parser.add_argument("new", metavar="RUN", nargs="?", help="the run to compare with")
    parser.add_argument(
        "--now", action="store_true", help="compare with the prompt that would be sent now"
    )
    add_inclusion_options(parser)
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the comparison (or JSON); exit 0 whether or not the prompts differ."""
    workspace = workspace_from(args)
    old_run = load_run(workspace.root, args.old)
    if args.now and args.new:
        raise UsageError("give a second RUN or --now, not both")
    if args.now:
        from ..core.plans import load_catalog
        from ..core.prompt import compose_prompt
        from ..core.tokens import get_counter

        catalog = load_catalog(workspace)
        old_meta = old_run.run_meta
        mode = old_meta.mode or "create"
        request = PromptRequest(
            story_id=old_run.story,
            phase=old_run.phase,
            mode="create" if mode == "chat" else mode,
            retry_reason=old_meta.retry_reason,
            selection=selection_from(args),
        )
        prompt = compose_prompt(
            workspace,
            catalog,
            request,
            counter=get_counter(workspace.config.tokens_encoding),
            count_tokens=False,
        )
        old, new = side_of_run(old_run), side_of_prompt(prompt)
    elif args.new:
        old, new = side_of_run(old_run), side_of_run(load_run(workspace.root, args.new))
    else:
        previous = last_run_of(workspace.root, old_run.story, old_run.phase, before=old_run.id)
        if previous is None:
            raise UsageError(
                f"no earlier {old_run.phase} run of story {old_run.story} to compare with "
                "(give a second RUN, or --now)"
            )
        old, new = side_of_run(previous), side_of_run(old_run)
    diff = compare(old, new)
    if args.json:
        print_json(
            {
                "old": diff.old,
                "new": diff.new,
                "parts": [
                    {
                        "kind": part.kind,
                        "name": part.name,
                        "change": part.change,
                        "old_bytes": part.old_bytes,
                        "new_bytes": part.new_bytes,
                        "diff": list(part.lines),
                    }
                    for part in diff.parts
                ],
            }
        )
        return EXIT_OK
    for line in diff_text(diff):
        print(line)
    return EXIT_OK
