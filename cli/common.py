"""Options and output helpers shared by the CLI commands."""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..core.errors import UsageError
from ..core.project import ENCODINGS, Workspace, open_workspace
from ..core.terminal import printable_keep_style, printable_line
from ..core.vocabulary import optional_layer
from .streams import StreamProxy

if TYPE_CHECKING:
    import logging

    from ..core.injection import Selection
    from ..core.prompt import ComposedPrompt


def add_workspace_options(parser: argparse.ArgumentParser) -> None:
    """``--root``, ``--encoding`` and ``--json``: every command takes them."""
    parser.add_argument(
        "--root", metavar="PATH", help="workspace root (default: found from the current folder)"
    )
    parser.add_argument(
        "--encoding",
        choices=ENCODINGS,
        help="tiktoken encoding for token counts (default: config, else o200k_base)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON for machines")


def add_inclusion_options(parser: argparse.ArgumentParser) -> None:
    """What the file injection includes (seed 000's flags)."""
    group = parser.add_argument_group("inclusion")
    group.add_argument("--discovery", action="store_true", help="include discovery files")
    group.add_argument("--tech-spec", action="store_true", help="include tech-spec files")
    group.add_argument(
        "--no-project-context", action="store_true", help="leave out the project context file"
    )
    group.add_argument(
        "--file",
        dest="files",
        action="append",
        default=[],
        type=_file_path,
        metavar="PATH",
        help="add a file (relative to the root); repeatable",
    )
    group.add_argument(
        "--leave-out",
        dest="left_out",
        action="append",
        default=[],
        type=_file_path,
        metavar="PATH",
        help="leave out a file the story would get (a spec's context: file, say), named as "
        "inspect lists it, for this command only (--exclude remembers it); a path that is no "
        "candidate is refused with the nearest ones (exit 2); repeatable",
    )
    group.add_argument(
        "--exclude",
        action="append",
        default=[],
        type=_file_path,
        metavar="PATH",
        help="leave this file out of the story's injection, and remember it for the story "
        "(never the story's own file); a path that is no candidate is refused with the "
        "nearest ones (exit 2); repeatable",
    )
    group.add_argument(
        "--include",
        action="append",
        default=[],
        type=_file_path,
        metavar="PATH",
        help="take this file in although no toggle includes it, and remember it for the "
        "story; a file the story remembers as excluded has that choice cleared instead (back "
        "to what the toggles say); repeatable",
    )
    group.add_argument(
        "--exclude-layer",
        dest="exclude_layers",
        action="append",
        default=[],
        type=_optional_layer,
        metavar="LAYER",
        help="leave the workspace rules layer out of the prompt (0B, the only optional "
        "layer), and remember it for the story",
    )
    group.add_argument(
        "--include-layer",
        dest="include_layers",
        action="append",
        default=[],
        type=_optional_layer,
        metavar="LAYER",
        help="put a remembered --exclude-layer back (0B), and remember that for the story",
    )


def selection_from(args: argparse.Namespace) -> Selection:
    """The :class:`Selection` the inclusion options describe."""
    # Imported here: every command imports this module, and `stories` or `doctor` never
    # compose a prompt.
    from ..core.injection import Selection, normal_path

    return Selection(
        project_context=not args.no_project_context,
        discovery=args.discovery,
        tech_spec=args.tech_spec,
        additional_files=tuple(args.files),
        left_out=tuple(args.left_out),
        excluded=tuple(normal_path(p) for p in args.exclude),
        included=tuple(normal_path(p) for p in args.include),
        left_out_layers=tuple(getattr(args, "exclude_layers", ())),
        put_back_layers=tuple(getattr(args, "include_layers", ())),
    )


def check_file_choices(args: argparse.Namespace, prompt: ComposedPrompt) -> None:
    """Refuse an ``--exclude`` / ``--leave-out`` that names no candidate of the injection.

    Raises:
        UsageError: one line per such path, with the nearest candidates (exit 2).
    """
    named = [*getattr(args, "exclude", ()), *getattr(args, "left_out", ())]
    if not named:
        return
    from ..core.injection import unknown_choices

    lines = unknown_choices((f.path for f in prompt.injection.files), named)
    if lines:
        raise UsageError(
            f"--exclude/--leave-out: {'; '.join(lines)}; nothing was left out or remembered"
        )


def remember_file_choices(args: argparse.Namespace, root: Path, prompt: ComposedPrompt) -> None:
    """Remember ``--exclude`` / ``--include`` for the story (one warning line if it cannot),
    after refusing an ``--exclude`` / ``--leave-out`` that names no candidate
    (:func:`check_file_choices`)."""
    check_file_choices(args, prompt)
    asked = ("exclude", "include", "exclude_layers", "include_layers")
    if not any(getattr(args, name, None) for name in asked):
        return
    from ..core.injection import remember_selection

    own = [f.path for f in prompt.injection.files if f.category == "story"]
    try:
        remember_selection(root, prompt.story.id, prompt.request.selection, own)
    except OSError as exc:
        warn(f"the file choices of story {prompt.story.id} could not be remembered: {exc}")


def _optional_layer(text: str) -> str:
    layer = optional_layer(text)
    if layer is None:
        raise argparse.ArgumentTypeError(
            f"{text!r}: only 0B (Layer-0B, the workspace rules) may be left out; the other "
            "layers are required"
        )
    return layer


def _file_path(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path names no file")
    return text


def workspace_from(args: argparse.Namespace) -> Workspace:
    """Open the workspace the arguments name."""
    return open_workspace(getattr(args, "root", None))


def encoding_from(args: argparse.Namespace, workspace: Workspace) -> str:
    """``--encoding`` if given, else the workspace's configured encoding."""
    return getattr(args, "encoding", None) or workspace.config.tokens_encoding


_JSON_CONTROLS = re.compile("[\x7f-\x9f\u2028\u2029]")


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented JSON on stdout.

    JSON escapes C0 controls itself; DEL and the C1 controls (which ``ensure_ascii=False``
    would write raw, and a terminal would obey) are written as ``\\u00XX`` escapes too: the
    same JSON value, nothing a terminal interprets. ``Infinity`` and ``NaN`` are not JSON: a
    figure that is not finite is printed as ``null`` (unknown).
    """
    try:
        text = json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError:
        from ..core.records import finite_json

        text = json.dumps(finite_json(payload), indent=2, ensure_ascii=False, allow_nan=False)
    text = _JSON_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    sys.stdout.write(text + "\n")


def warn(message: str) -> None:
    """One warning line on stderr."""
    print(f"promptdeck: warning: {printable_line(message)}", file=sys.stderr)


def console() -> Any:
    """A Rich console for people's output; a closed pipe ends the command quietly with 0.

    Rich's own handling exits 1 when the reader goes away (``promptdeck stories | head``);
    raising :class:`BrokenPipeError` instead lets :func:`promptdeck.cli.main` treat it as
    the normal end it is.
    """
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    # Text from the workspace is never Rich markup: a title holding "[/x]" is shown as it is.
    # Piped, a line is never broken at Rich's default 80 columns: a reader (grep, a script)
    # gets each line whole.
    return _Console(markup=False, emoji=False, soft_wrap=not sys.stdout.isatty())


def cell(value: object, style: str = "") -> Any:
    """A table cell for text from the workspace or a run: controls made visible, one line,
    never parsed as markup."""
    from rich.text import Text

    return Text(printable_line(str(value)), style=style)


class SafeStream(StreamProxy):
    """A text stream that writes everything through
    :func:`~promptdeck.core.terminal.printable_keep_style`: the CLI's last line of defence, so
    no output path can pass a raw control sequence from a workspace to the terminal."""

    @property
    def wrapped(self) -> TextIO:
        """The stream written to."""
        return self._stream

    def write(self, text: str) -> int:
        self._stream.write(printable_keep_style(text))
        return len(text)

    @property
    def buffer(self) -> Any:
        """The raw byte stream, for output that is data rather than text for people."""
        return self._stream.buffer


@contextlib.contextmanager
def safe_output() -> Iterator[None]:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`SafeStream` while inside."""
    saved = sys.stdout, sys.stderr
    sys.stdout = SafeStream(sys.stdout)
    sys.stderr = SafeStream(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = saved


def add_log_events_option(parser: argparse.ArgumentParser) -> None:
    """``--log-events``: the core's events as JSON lines on stderr."""
    parser.add_argument(
        "--log-events",
        action="store_true",
        help="print events as JSON lines on stderr: injection:warning, injection:empty, "
        "injection:skipped and system_prompt:injected",
    )


class EventLog:
    """Prints events as JSON lines (``{"event": NAME, ...}``) on a stream (stderr).

    Call it as an ``emit`` (``injection:*``); :meth:`attach` also forwards the
    ``promptdeck.system_prompt`` logger's records as ``system_prompt:injected`` events.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    def __call__(self, name: str, payload: dict[str, Any]) -> None:
        line = json.dumps({"event": name, **payload}, ensure_ascii=False, default=str)
        print(line, file=self.stream, flush=True)

    def attach(self) -> logging.Handler:
        """Forward the system-prompt logger's records; returns the handler (to detach)."""
        import logging

        from ..core.run import RECORD_ATTRIBUTE, logger

        events = self

        class Forward(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                facts = getattr(record, RECORD_ATTRIBUTE, None) or {}
                events(
                    "system_prompt:injected",
                    {"level": record.levelname.lower(), "message": record.getMessage(), **facts},
                )

        handler = Forward(logging.INFO)
        logger.addHandler(handler)
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)
        return handler


def event_log(args: argparse.Namespace) -> EventLog | None:
    """The event log ``--log-events`` asks for (attached), or None."""
    if not getattr(args, "log_events", False):
        return None
    events = EventLog()
    events.attach()
    return events
