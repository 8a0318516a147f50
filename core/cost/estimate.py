"""A Claude-family token estimate beside the tiktoken count, and an opt-in exact count.

Anthropic's tokenizer is not public; the meters count with tiktoken (``o200k_base`` by
default), which under-counts Claude's newer tokenizer by 15–50 % depending on content. The
estimate scales the tiktoken count by a factor calibrated per project and model:

- for every finished run of this project whose ``cost.json`` holds the prediction made at its
  launch (the tiktoken count of the prompt that was sent: plain input + cache write + cache
  read) and the usage the agent reported (``input_tokens`` + ``cache_creation_input_tokens`` +
  ``cache_read_input_tokens``), on the same model and not the replay simulation, the ratio
  reported / counted;
- a ratio outside :data:`RATIO_BOUNDS` is not taken: a run's reported usage covers every
  model call it made and the client's own system prompt and tools, so a long run reports many
  times the prompt (×118 after one run is not a tokenizer's difference); such runs are
  counted and said, and the factor stays the default;
- the factor is the median of the ratios taken; with none, :data:`DEFAULT_FACTOR`, stated as
  the default.

The reported figure covers the whole run — every model call re-sends the context, and the
agent adds its own system prompt and tools — so a calibrated factor also carries that
overhead; the spread of the ratios is shown so the remaining error is visible. It is always
labelled "claude-family estimate", never exact. The exact count is Anthropic's
``count_tokens`` endpoint (:func:`exact_claude_tokens`), called only when the user asks for it.
"""

from __future__ import annotations

import json
import math
import statistics
from typing import Any

from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, read_json_object
from ..project.workspace import Workspace
from ..records.reader import list_runs
from .client_model import resolve_model
from .prediction import simulated

DEFAULT_FACTOR = 1.3
"""Claude-family tokens per tiktoken token when no finished run calibrates it: inside the
15–50 % Claude's newer tokenizer counts above ``o200k_base``, nearer its low end."""
LABEL = "claude-family estimate"
"""How every face names the estimate (never "exact", never "Claude tokens")."""
RATIO_BOUNDS = (0.8, 2.0)
"""The ratios reported / counted a calibration takes: a tokenizer's difference (Claude's
newer tokenizer counts 15–50 % above ``o200k_base``), with room on both sides; anything
beyond is the run's other calls and the client's own prompt, not the tokenizer."""
ANTHROPIC_API = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
COUNT_TIMEOUT_SECONDS = 30.0


def claude_model(workspace: Workspace, requested: str | None = None) -> str:
    """The Claude model an estimate is for: ``requested`` when it is one, else the one a
    ``claude`` run resolves to without starting the client ("" when unknown)."""
    for model in (requested or "", resolve_model(workspace, "claude").model):
        if model.startswith("claude"):
            return model
    return ""


@dataclass(frozen=True)
class Calibration:
    """The factor from tiktoken tokens to Claude-family tokens for one project and model.

    Attributes:
        model: the model.
        factor: Claude-family tokens per tiktoken token.
        runs: how many finished runs it comes from (0: the default).
        low: the smallest run ratio (None with no runs).
        high: the largest.
    """

    model: str
    factor: float
    runs: int
    low: float | None = None
    high: float | None = None
    rejected: int = 0

    @property
    def source(self) -> str:
        """Where the factor comes from, in words."""
        model = self.model or "the model (unknown)"
        if not self.runs and self.rejected:
            low, high = RATIO_BOUNDS
            return (
                f"default {DEFAULT_FACTOR:.2f}: not calibrated — {self.rejected} real run(s) "
                f"of {model} reported outside {low:.1f}–{high:.1f}× the counted prompt "
                "(their usage covers every call, not the tokenizer)"
            )
        if not self.runs:
            return f"default {DEFAULT_FACTOR:.2f} (no finished real runs of {model} to calibrate)"
        return (
            f"median of {self.runs} finished run(s) of {self.model}, "
            f"ratios {self.low:.2f}–{self.high:.2f}"
        )


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0 or value != int(value):
        return None
    return int(value)


def _sum(record: object, names: tuple[str, ...]) -> int | None:
    if not isinstance(record, dict):
        return None
    values = [_count(record.get(name)) for name in names]
    if any(value is None for value in values):
        return None
    return sum(value for value in values if value is not None)


_SENT = ("input_tokens", "cache_write_tokens", "cache_read_tokens")


def calibrate(workspace: Workspace, model: str) -> Calibration:
    """The factor for ``model`` from this project's finished runs (their ``cost.json``, read
    through the guarded reader); a run without both figures counts in nothing."""
    ratios: list[float] = []
    rejected = 0
    if not model:
        return Calibration(model, DEFAULT_FACTOR, 0)
    low, high = RATIO_BOUNDS
    for run in list_runs(workspace.root):
        if simulated(run) or str(run.meta.get("agent") or "") == "codex":
            continue
        data = read_json_object(run.dir / "cost.json", workspace.root)
        if isinstance(data, TextProblem) or str(data.get("model") or "") != model:
            continue
        counted = _sum(data.get("predicted"), _SENT)
        reported = _sum(data.get("actual"), _SENT)
        if counted and reported:
            ratio = reported / counted
            if low <= ratio <= high:
                ratios.append(ratio)
            else:
                rejected += 1
    if not ratios:
        return Calibration(model, DEFAULT_FACTOR, 0, rejected=rejected)
    return Calibration(
        model, statistics.median(ratios), len(ratios), min(ratios), max(ratios), rejected
    )


@dataclass(frozen=True)
class ClaudeEstimate:
    """A prompt's Claude-family estimate beside its tiktoken count.

    Attributes:
        encoding: the tiktoken encoding scaled.
        system_tokens: the system prompt, estimated.
        user_tokens: the user message, estimated.
        calibration: the factor and where it comes from.
    """

    encoding: str
    system_tokens: int
    user_tokens: int
    calibration: Calibration

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``inspect --json``: ``claude_estimate``)."""
        calibration = self.calibration
        return {
            "label": LABEL,
            "family": "claude",
            "exact": False,
            "model": calibration.model,
            "encoding": self.encoding,
            "factor": round(calibration.factor, 4),
            "runs": calibration.runs,
            "ratio_range": None
            if calibration.low is None
            else [round(calibration.low, 4), round(calibration.high or 0.0, 4)],
            "source": calibration.source,
            "calibrated": calibration.runs > 0,
            "runs_outside_bounds": calibration.rejected,
            "system_tokens": self.system_tokens,
            "user_tokens": self.user_tokens,
        }

    def describe(self) -> str:
        """One line for the text report."""
        calibration = self.calibration
        return (
            f"≈ {self.system_tokens:,} system + {self.user_tokens:,} user tokens · "
            f"{calibration.factor:.2f} × {self.encoding} · {calibration.source}"
        )


def claude_estimate(
    workspace: Workspace,
    model: str,
    encoding: str,
    system_tokens: int,
    user_tokens: int,
    calibration: Calibration | None = None,
) -> ClaudeEstimate:
    """Scale a prompt's tiktoken counts by the project's factor for ``model``."""
    calibration = calibration or calibrate(workspace, model)
    return ClaudeEstimate(
        encoding,
        round(system_tokens * calibration.factor),
        round(user_tokens * calibration.factor),
        calibration,
    )


class ExactCountError(Exception):
    """The exact count could not be had (no key, the API refused or did not answer)."""


def exact_claude_tokens(
    system: str, user: str, model: str, api_key: str, base_url: str = ANTHROPIC_API
) -> int:
    """The input tokens Anthropic's ``count_tokens`` endpoint reports for the prompt.

    Sends the system prompt and the user message, nothing else, to
    ``<base_url>/v1/messages/count_tokens``. Only ever called on the user's request.

    Raises:
        ExactCountError: no key, an HTTP error, no answer, or an answer without a count.
    """
    # Imported here: the HTTP chain is paid for only when the exact count is asked for.
    import urllib.error
    import urllib.request

    if not api_key:
        raise ExactCountError("--exact-claude needs ANTHROPIC_API_KEY")
    if not model:
        raise ExactCountError(
            "--exact-claude needs a Claude model: the one the run would use is unknown "
            "(name it with --model)"
        )
    body = json.dumps(
        {"model": model, "system": system, "messages": [{"role": "user", "content": user}]}
    ).encode("utf-8")
    request = urllib.request.Request(
        base_url.rstrip("/") + "/v1/messages/count_tokens",
        data=body,
        method="POST",
        headers={
            "x-api-key": api_key,
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=COUNT_TIMEOUT_SECONDS) as response:
            answer = json.loads(response.read(1024 * 1024).decode("utf-8", errors="replace"))
    except urllib.error.HTTPError as exc:
        raise ExactCountError(f"count_tokens: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ExactCountError(f"count_tokens: {type(exc).__name__}") from None
    count = _count(answer.get("input_tokens")) if isinstance(answer, dict) else None
    if count is None:
        raise ExactCountError("count_tokens: the answer has no input_tokens")
    return count
