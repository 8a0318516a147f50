"""Run records read back: every run of the workspace, one run by its id, the next attempt.

Each run folder (written by :mod:`promptdeck.core.run_record`) is read into a
:class:`RunInfo`, whose :attr:`RunInfo.run_meta` and :attr:`RunInfo.run_result` are the
run's schema (:mod:`promptdeck.core.run_schema`). The writer's names are importable from
here as well.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .errors import UsageError
from .keys import normalize_key
from .processes import pid_alive
from .run_record import DRY_RUN_DIR as DRY_RUN_DIR
from .run_record import GITIGNORE_LINES as GITIGNORE_LINES
from .run_record import GITIGNORE_RELPATH as GITIGNORE_RELPATH
from .run_record import RUNS_RELPATH as RUNS_RELPATH
from .run_record import RunRecord as RunRecord
from .run_record import ensure_gitignore as ensure_gitignore
from .run_record import iso_time as iso_time
from .run_record import new_run_id as new_run_id
from .run_record import runs_dir
from .run_schema import RunMeta, RunResult
from .signals import Signal
from .vocabulary import SUCCESS, RunState


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass(frozen=True)
class RunInfo:
    """One run as read back from its folder.

    The typed views :attr:`run_meta` and :attr:`run_result` are the run's schema
    (:mod:`promptdeck.core.run_schema`); ``meta`` and ``result`` are the JSON as it is on
    disk, for showing a record whole.

    Attributes:
        id: the run id (the folder name).
        dir: the run folder.
        meta: ``meta.json``.
        result: ``result.json``, or None while running or when the run was interrupted.
        signals: every line of ``signals.jsonl``.
    """

    id: str
    dir: Path
    meta: Mapping[str, Any]
    result: Mapping[str, Any] | None
    signals: tuple[Mapping[str, Any], ...]

    @cached_property
    def run_meta(self) -> RunMeta:
        """``meta.json`` read into its schema (missing values take their defaults)."""
        return RunMeta.from_dict(self.meta)

    @cached_property
    def run_result(self) -> RunResult | None:
        """``result.json`` read into its schema; None while there is none, or when it names
        no outcome promptdeck knows."""
        if self.result is None:
            return None
        signals = tuple(Signal.from_dict(signal) for signal in self.signals)
        try:
            return RunResult.from_dict(self.result, self.dir, signals, meta=self.run_meta)
        except ValueError:
            return None

    @property
    def story(self) -> str:
        """The story id."""
        return self.run_meta.story

    @property
    def phase(self) -> str:
        """The phase."""
        return self.run_meta.phase

    @property
    def phase_label(self) -> str:
        """The phase as lists show it: ``review (party)`` for a party variant."""
        variant = self.run_meta.variant
        return f"{self.phase} ({variant})" if variant and variant != "standard" else self.phase

    @property
    def attempt(self) -> int:
        """The attempt number."""
        return self.run_meta.attempt

    @property
    def started(self) -> float:
        """Start time (epoch seconds)."""
        return self.run_meta.started_ts

    @property
    def outcome(self) -> RunState:
        """The result's outcome; ``running`` or ``interrupted`` for a run with no result,
        ``unknown`` for a result that names no outcome promptdeck knows."""
        if self.result is not None:
            result = self.run_result
            return result.outcome if result is not None else "unknown"
        return "running" if pid_alive(self.run_meta.pid) else "interrupted"

    @property
    def signal(self) -> Mapping[str, Any] | None:
        """The deciding signal, from the result (or the last recorded signal)."""
        if self.result is not None:
            value = self.result.get("signal")
            return value if isinstance(value, Mapping) else None
        return self.signals[-1] if self.signals else None

    @property
    def run_signal(self) -> Signal | None:
        """:attr:`signal` read into its schema."""
        signal = self.signal
        return Signal.from_dict(signal) if signal is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The shape of ``runs --json`` rows."""
        meta, result = self.run_meta, self.run_result
        signal = self.signal or {}
        usage = result.usage if result is not None else None
        return {
            "id": self.id,
            "story": self.story,
            "phase": self.phase,
            "attempt": self.attempt,
            "mode": meta.mode,
            "variant": meta.variant,
            "agent": meta.agent,
            "started": meta.started,
            "outcome": self.outcome,
            "signal": signal.get("name"),
            "reason": signal.get("reason"),
            "duration_s": result.duration_s if result is not None else None,
            "cost_usd": result.cost_usd if result is not None else None,
            "tokens": usage.to_dict() if usage is not None else None,
            "exit_code": result.exit_code if result is not None else None,
        }


def load_run_dir(folder: Path) -> RunInfo | None:
    """Read one run folder; None when it holds no ``meta.json``."""
    meta = _read_json(folder / "meta.json")
    if meta is None:
        return None
    signals: list[Mapping[str, Any]] = []
    # No signals.jsonl is a run that printed no signal (or was killed before one).
    with contextlib.suppress(OSError):
        for line in (folder / "signals.jsonl").read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict):
                signals.append(item)
    return RunInfo(folder.name, folder, meta, _read_json(folder / "result.json"), tuple(signals))


def list_runs(root: Path, story_id: str | None = None) -> list[RunInfo]:
    """Every run of the workspace, oldest first; only one story's when ``story_id`` is given."""
    base = runs_dir(root)
    if not base.is_dir():
        return []
    runs: list[RunInfo] = []
    for folder in sorted(base.iterdir()):
        if folder.name == DRY_RUN_DIR or not folder.is_dir():
            continue
        info = load_run_dir(folder)
        if info is None:
            continue
        # `1.2` and `1-2` are one story: runs recorded under either spelling are its runs.
        if story_id is not None and normalize_key(info.story) != normalize_key(story_id):
            continue
        runs.append(info)
    return runs


def next_attempt(root: Path, story_id: str, phase: str) -> int:
    """The attempt number of the next run of ``phase`` for a story: one more than the runs
    of that phase since its last success (chat turns and runs the user cancelled do not
    count)."""
    attempt = 1
    for run in list_runs(root, story_id):
        if run.phase != phase or run.run_meta.mode == "chat" or run.outcome == "cancelled":
            continue
        attempt = 1 if run.outcome == SUCCESS else attempt + 1
    return attempt


def load_run(root: Path, run_id: str) -> RunInfo:
    """One run by its id, a unique prefix of it, or ``last``.

    Raises:
        UsageError: no run, or more than one, matches.
    """
    runs = list_runs(root)
    if run_id == "last":
        if not runs:
            raise UsageError(f"no runs yet in {runs_dir(root)}")
        return runs[-1]
    matches = [r for r in runs if r.id == run_id] or [r for r in runs if r.id.startswith(run_id)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no run '{run_id}' in {runs_dir(root)} (see `promptdeck runs`)")
    raise UsageError(f"run id '{run_id}' is ambiguous: {len(matches)} runs start with it")


def stream_file(run: RunInfo) -> Path:
    """The run's raw stream: ``stream.jsonl`` (stream-json agents) or ``stream.log``."""
    for name in ("stream.jsonl", "stream.log"):
        if (run.dir / name).exists():
            return run.dir / name
    return run.dir / "stream.jsonl"
