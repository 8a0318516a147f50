"""The models a finished run's client reported using, and its usage split by model.

After a run, the model is the client's own word, never the one it was priced as before:

- Claude Code (``stream-json``): the ``result`` line's ``modelUsage`` (one entry per model,
  with ``inputTokens``, ``cacheCreationInputTokens``, ``cacheReadInputTokens``,
  ``outputTokens``), and the ``model`` of each ``assistant`` message;
- Codex (``--json``): a ``model`` field on its events, where its version writes one; 0.171
  writes none, so the thread's session log (``$CODEX_HOME/sessions/…/rollout-…-<thread>.jsonl``,
  its ``turn_context`` lines) is read for it, bounded, through the guarded reader.

A model entry whose counts are missing or not whole non-negative numbers is "unknown": it is
never summed in, and the run's actual cost is then unknown with the reason. The stream is read
through the guarded reader, bounded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..agents.codex_profile import codex_home
from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, read_text, read_text_head
from ..records.usage import STREAM_MAX_BYTES, ReportedUsage, json_lines, token_count

MODEL_USAGE_FIELDS = (
    "inputTokens",
    "cacheCreationInputTokens",
    "cacheReadInputTokens",
    "outputTokens",
)
MODEL_NAME_MAX = 200
ROLLOUT_HEAD_BYTES = 1024 * 1024
"""How much of a Codex session log is read for its models: its turn contexts come first."""
_THREAD = re.compile(r"^[A-Za-z0-9-]{1,100}$")


@dataclass(frozen=True)
class ReportedModels:
    """What the client said about the models it used.

    Attributes:
        models: each model it named, in first-seen order (empty: it named none).
        usage: the usage per model, when every ``modelUsage`` entry was whole; None when the
            stream has none.
        unknown: why the per-model usage is unknown ("" when known or absent).
    """

    models: tuple[str, ...]
    usage: dict[str, ReportedUsage] | None = None
    unknown: str = ""


def _model_name(value: object) -> str | None:
    if isinstance(value, str) and value and len(value) <= MODEL_NAME_MAX and value.isprintable():
        return value
    return None


def _model_usage(entries: object) -> tuple[dict[str, ReportedUsage] | None, str]:
    if not isinstance(entries, dict):
        return None, ""
    usage: dict[str, ReportedUsage] = {}
    for name, counts in entries.items():
        model = _model_name(name)
        if model is None:
            return None, "modelUsage: a model name that is not one"
        if not isinstance(counts, dict):
            return None, f"modelUsage {model}: not an object"
        values = [token_count(counts.get(field)) for field in MODEL_USAGE_FIELDS]
        for field, value in zip(MODEL_USAGE_FIELDS, values, strict=True):
            if value is None:
                state = "missing" if field not in counts else "not a whole number"
                return None, f"modelUsage {model}: {field} is {state}"
        plain, written, read, output = (value or 0 for value in values)
        usage[model] = ReportedUsage(plain, written, read, output)
    return usage, ""


def claude_models(events: list[dict[str, Any]]) -> ReportedModels:
    """The models Claude Code's stream names, and its ``modelUsage`` when whole."""
    names: dict[str, None] = {}
    for event in events:
        message = event.get("message")
        if event.get("type") == "assistant" and isinstance(message, dict):
            model = _model_name(message.get("model"))
            if model is not None:
                names[model] = None
    results = [e for e in events if e.get("type") == "result"]
    usage: dict[str, ReportedUsage] | None = None
    unknown = ""
    if results:
        usage, unknown = _model_usage(results[-1].get("modelUsage"))
        names.update(dict.fromkeys(usage or ()))
    return ReportedModels(tuple(names), usage, unknown)


def codex_models(events: list[dict[str, Any]]) -> ReportedModels:
    """The models Codex's events name (a top-level or ``item`` ``model`` field)."""
    names: dict[str, None] = {}
    for event in events:
        for holder in (event, event.get("item")):
            model = _model_name(holder.get("model")) if isinstance(holder, dict) else None
            if model is not None:
                names[model] = None
    return ReportedModels(tuple(names))


def session_models(home: Path, thread: str) -> tuple[str, ...]:
    """The models a Codex thread's session log names in its ``turn_context`` lines (none when
    there is no such log, or it cannot be read)."""
    if not _THREAD.match(thread):
        return ()
    found = sorted((home / "sessions").glob(f"*/*/*/rollout-*-{thread}.jsonl"))
    if not found:
        return ()
    head = read_text_head(found[-1], ROLLOUT_HEAD_BYTES, root=home, limit=STREAM_MAX_BYTES)
    if isinstance(head, TextProblem):
        return ()
    names: dict[str, None] = {}
    for event in json_lines(head[0]):
        payload = event.get("payload")
        if event.get("type") == "turn_context" and isinstance(payload, dict):
            model = _model_name(payload.get("model"))
            if model is not None:
                names[model] = None
    return tuple(names)


def reported_models(
    run_dir: Path, root: Path, agent: str, environ: Mapping[str, str] | None = None
) -> ReportedModels:
    """What ``run_dir/stream.jsonl`` (and, for Codex, its thread's session log under
    ``CODEX_HOME`` read from ``environ``) says about the models ``agent``'s client used (an
    unreadable stream names none)."""
    text = read_text(run_dir / "stream.jsonl", root, limit=STREAM_MAX_BYTES)
    if isinstance(text, TextProblem):
        return ReportedModels((), None, f"stream.jsonl: {text}")
    events = json_lines(text)
    if agent != "codex":
        return claude_models(events)
    reported = codex_models(events)
    if reported.models:
        return reported
    thread = next(
        (str(e.get("thread_id")) for e in events if e.get("type") == "thread.started"), ""
    )
    home = codex_home(os.environ if environ is None else environ)
    return ReportedModels(session_models(home, thread) if thread else ())
