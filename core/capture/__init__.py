"""Capture mode: the real client run once against a loopback stand-in of its API, and the
request it sent, taken apart.

:mod:`.loopback` records the exact request bytes, answers with a canned stop and refuses every
other host; :mod:`.clients` launches each client as a run would, pointed at it; :mod:`.session`
runs one capture; :mod:`.parts` splits the request into the client's system text, its tools,
the rules files it loaded, promptdeck's eight layers, the user turn and the envelope (the
parts summing to the request) and finds text that arrives twice; :mod:`.memory` keeps the last
capture per client and version in the user's cache folder, for the app's meters
(:func:`remembered_capture`, :func:`capture_summary`), and :mod:`.versions` the installed
client's version per program file (so a forecast does not start the client each time);
:mod:`.user_config` reads the user's own client configuration (read only) so a capture
sees what a run sees; :mod:`.cache` lays the captured request out as the provider caches it
and predicts what each phase reads of the one before (:func:`client_cache`). What each client
loads by itself and its windows live in :mod:`promptdeck.core.client_loads`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from ..client_loads import CLIENT_WINDOWS, MODEL_WINDOWS, RULES_FILES, model_window
    from .cache import ClientCache, client_cache, layout_lines, measured_shared
    from .clients import CLIENTS, MINIMUM_VERSIONS
    from .loopback import (
        MAX_REQUEST_BYTES,
        CapturedRequest,
        Exchange,
        LoopbackCapture,
        anthropic_events,
        anthropic_message,
        response_events,
    )
    from .memory import capture_path, remember_capture, remembered_capture
    from .model import (
        PART_KINDS,
        Capture,
        CaptureSummary,
        DuplicateText,
        KindTotal,
        RequestPart,
        capture_summary,
    )
    from .parts import RulesText, duplicated_text, request_streams, split_request
    from .session import CAPTURE_TIMEOUT, CaptureError, capture_prompt, installed_version

_HOMES = {
    "ClientCache": ".cache",
    "client_cache": ".cache",
    "layout_lines": ".cache",
    "measured_shared": ".cache",
    "CLIENTS": ".clients",
    "MINIMUM_VERSIONS": ".clients",
    "RULES_FILES": "..client_loads",
    "anthropic_events": ".loopback",
    "anthropic_message": ".loopback",
    "CapturedRequest": ".loopback",
    "Exchange": ".loopback",
    "LoopbackCapture": ".loopback",
    "MAX_REQUEST_BYTES": ".loopback",
    "response_events": ".loopback",
    "capture_path": ".memory",
    "remember_capture": ".memory",
    "remembered_capture": ".memory",
    "Capture": ".model",
    "capture_summary": ".model",
    "CaptureSummary": ".model",
    "DuplicateText": ".model",
    "KindTotal": ".model",
    "PART_KINDS": ".model",
    "RequestPart": ".model",
    "duplicated_text": ".parts",
    "request_streams": ".parts",
    "RulesText": ".parts",
    "split_request": ".parts",
    "CAPTURE_TIMEOUT": ".session",
    "capture_prompt": ".session",
    "CaptureError": ".session",
    "installed_version": ".session",
    "CLIENT_WINDOWS": "..client_loads",
    "model_window": "..client_loads",
    "MODEL_WINDOWS": "..client_loads",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "CAPTURE_TIMEOUT",
    "CLIENTS",
    "CLIENT_WINDOWS",
    "MAX_REQUEST_BYTES",
    "MINIMUM_VERSIONS",
    "MODEL_WINDOWS",
    "PART_KINDS",
    "RULES_FILES",
    "Capture",
    "CaptureError",
    "CaptureSummary",
    "CapturedRequest",
    "ClientCache",
    "DuplicateText",
    "Exchange",
    "KindTotal",
    "LoopbackCapture",
    "RequestPart",
    "RulesText",
    "anthropic_events",
    "anthropic_message",
    "capture_path",
    "capture_prompt",
    "capture_summary",
    "client_cache",
    "duplicated_text",
    "installed_version",
    "layout_lines",
    "measured_shared",
    "model_window",
    "remember_capture",
    "remembered_capture",
    "request_streams",
    "response_events",
    "split_request",
]
