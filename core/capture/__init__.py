"""Capture mode: the real client run once against a loopback stand-in of its API, and the
request it sent, taken apart.

:mod:`.loopback` records the exact request bytes and answers with a canned stop;
:mod:`.session` composes the prompt as a run would, launches the client with its base URL
pointed at the loopback, and splits the request into the client's system text, promptdeck's,
the tools, the user turn and the envelope, the parts summing to the request.
"""

from .loopback import CapturedRequest, LoopbackCapture
from .session import (
    CAPTURE_TIMEOUT,
    CLIENTS,
    Capture,
    CaptureError,
    RequestPart,
    capture_prompt,
    request_parts,
)

__all__ = [
    "CAPTURE_TIMEOUT",
    "CLIENTS",
    "Capture",
    "CaptureError",
    "CapturedRequest",
    "LoopbackCapture",
    "RequestPart",
    "capture_prompt",
    "request_parts",
]
