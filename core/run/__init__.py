"""Runs: one fresh agent process per phase, planned, confirmed, supervised, streamed, recorded.

:func:`start_run` (in :mod:`.runner`) takes the story's lock, writes the run folder and hands the
run to its thread; :mod:`.plan` is the confirmation both faces show; :mod:`.supervise` owns the
process; :mod:`.stream` cuts its output into events; :mod:`.policy` decides what happens after
it (outcome, write-back, git); :mod:`.flow` and :mod:`.session` hold the phases' states across
runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .flow import StoryFlow, Suggestion, auto_course, flow_for, last_failure, run_auto
    from .handle import RunHandle
    from .locks import holding
    from .optional_phases import AutoPlan, auto_plan, parse_with
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

_HOMES = {
    "StoryFlow": ".flow",
    "auto_course": ".flow",
    "Suggestion": ".flow",
    "flow_for": ".flow",
    "last_failure": ".flow",
    "run_auto": ".flow",
    "RunHandle": ".handle",
    "holding": ".locks",
    "AutoPlan": ".optional_phases",
    "auto_plan": ".optional_phases",
    "parse_with": ".optional_phases",
    "PlannedRun": ".plan",
    "RunPlan": ".plan",
    "confirmation_blocks": ".plan",
    "describe_image": ".plan",
    "describe_plan": ".plan",
    "discard_plan": ".plan",
    "plan_run": ".plan",
    "start_run": ".runner",
    "Session": ".session",
    "RunEvent": ".stream",
    "RECORD_ATTRIBUTE": ".system_prompt_log",
    "logger": ".system_prompt_log",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "RECORD_ATTRIBUTE",
    "AutoPlan",
    "PlannedRun",
    "RunEvent",
    "RunHandle",
    "RunPlan",
    "Session",
    "StoryFlow",
    "Suggestion",
    "auto_course",
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
