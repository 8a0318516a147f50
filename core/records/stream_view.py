"""A recorded run's stream as the live panel showed it: the agent's text, its tool calls and
results, and the process's own end — parsed by the same parser the run used."""

from __future__ import annotations

from ..agents.base import INFO, RESULT, TEXT, TOOL_RESULT, TOOL_USE
from ..agents.registry import get_agent
from ..errors import PromptdeckError
from ..lean_dataclass import dataclass
from ..project.config import Config
from ..project.textfiles import RECORD_TEXT_LIMIT, TextProblem, read_file_bytes
from .reader import RunInfo, stream_file


@dataclass(frozen=True)
class StreamLine:
    """One line as shown: ``kind`` is ``text``, ``tool_use``, ``tool_result``, ``result`` or
    ``info``; ``text`` is what reads."""

    kind: str
    text: str


def readable_stream(run: RunInfo, config: Config) -> list[StreamLine]:
    """The run's stream parsed into readable lines (raw lines when its agent is unknown)."""
    path = stream_file(run)
    # Guarded and bounded: the record may be a FIFO or a link to /dev/zero from the repository.
    data = read_file_bytes(path, run.dir.parent.parent.parent.resolve(), limit=RECORD_TEXT_LIMIT)
    if isinstance(data, TextProblem):
        return [StreamLine(INFO, f"({path.name}: {data})")]
    raw = data.decode("utf-8", errors="replace")
    try:
        parser = get_agent(run.run_meta.agent or "claude", config).output_parser()
    except PromptdeckError:
        return [StreamLine(TEXT, line) for line in raw.splitlines()]
    lines: list[StreamLine] = []
    for line in raw.splitlines():
        for event in parser.parse(line):
            if event.kind in (TEXT, TOOL_USE, TOOL_RESULT, RESULT, INFO) and event.text:
                for part in event.text.splitlines() or [""]:
                    lines.append(StreamLine(event.kind, part))
    return lines


def shown_line(line: StreamLine) -> str:
    """How a line reads in the phase log and the run detail."""
    if line.kind == TOOL_USE:
        return f"→ {line.text}"
    if line.kind == TOOL_RESULT:
        return f"  ← {line.text}"
    return line.text
