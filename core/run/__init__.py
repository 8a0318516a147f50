"""Runs: one fresh agent process per phase, planned, confirmed, supervised, streamed, recorded.

:func:`start_run` (in :mod:`.runner`) takes the story's lock, writes the run folder and hands the
run to its thread; :mod:`.plan` is the confirmation both faces show; :mod:`.supervise` owns the
process; :mod:`.stream` cuts its output into events; :mod:`.policy` decides what happens after
it (outcome, write-back, git); :mod:`.flow` and :mod:`.session` hold the phases' states across
runs.
"""

from __future__ import annotations

from .flow import StoryFlow, Suggestion, flow_for, last_failure, run_auto
from .handle import RunHandle
from .locks import holding
from .optional_phases import auto_plan, parse_with
from .plan import (
    PlannedRun,
    RunPlan,
    confirmation_blocks,
    describe_image,
    describe_plan,
    discard_plan,
    plan_run,
)
from .runner import start_run
from .session import Session
from .stream import RunEvent
from .system_prompt_log import RECORD_ATTRIBUTE, logger

__all__ = [
    "RECORD_ATTRIBUTE",
    "PlannedRun",
    "RunEvent",
    "RunHandle",
    "RunPlan",
    "Session",
    "StoryFlow",
    "Suggestion",
    "auto_plan",
    "confirmation_blocks",
    "describe_image",
    "describe_plan",
    "discard_plan",
    "flow_for",
    "holding",
    "last_failure",
    "logger",
    "parse_with",
    "plan_run",
    "run_auto",
    "start_run",
]
