"""What to compose and what composing gives: the request and the composed prompt.

A :class:`PromptRequest` names the story, phase, mode, selection and variant (and, for the
failure phase, a :class:`FailureInfo`); :func:`check_request` refuses a request no phase can
take; a :class:`ComposedPrompt` is what every face shows and every agent receives.
"""

from __future__ import annotations

from dataclasses import field

from ..errors import UsageError
from ..injection.model import Injection, Selection
from ..layers.delivery import Delivered
from ..layers.input import MODES, ComposeInput
from ..layers.instructions import InstructionsFile
from ..layers.model import PromptLayer
from ..layers.rules import RulesFile
from ..lean_dataclass import dataclass
from ..phases.table import Phase, get_phase
from ..stories.model import Story
from ..tokens.counter import Meter
from ..units import PromptSize
from .verify import Verification

_FAILURE_SIGNALS = {"dev": "IMPLEMENTATION BLOCKED", "review": "REVIEW FAILED"}


@dataclass(frozen=True)
class FailureInfo:
    """What the failure-analysis phase is told about the failure (seed 002, transfer D).

    Attributes:
        phase: the phase that failed (``dev`` or ``review``; any phase name is accepted).
        signal: the signal it printed, e.g. ``IMPLEMENTATION BLOCKED``, or ``no signal``.
        message: the reason the signal gave, or what went wrong.
    """

    phase: str
    signal: str
    message: str

    @classmethod
    def for_phase(cls, phase: str, message: str, signal: str | None = None) -> FailureInfo:
        """A failure of ``phase``; the signal defaults to that phase's failure signal."""
        return cls(phase, signal or _FAILURE_SIGNALS.get(phase, "no signal"), message)

    def render(self) -> str:
        """The Markdown list the failure phase receives."""
        message = " ".join(self.message.split()) or "(no message)"
        return (
            f"- **Type**: {self.phase} phase\n"
            f"- **Signal**: {self.signal}\n"
            f'- **Message**: "{message}"'
        )


@dataclass(frozen=True)
class PromptRequest:
    """What to compose.

    Attributes:
        story_id: the story, as the user types it (``1-2``, ``1.2``, ``add-auth:2``).
        phase: ``kickoff``, ``dev``, ``review``, ``failure``, ``uat`` or ``retro``.
        mode: ``create`` or ``optimize``.
        selection: what the injection includes beyond the story's own files.
        retry_reason: optimize only: the previous attempt's FAILED / BLOCKED reason. None
            (or blank) after an abnormal termination: then there is no retry section.
        failure: the failure phase's input: the failed phase, its signal and message.
        variant: ``standard`` or ``party`` (kickoff, review, failure and retro only); None
            takes the workspace's default (``[party] <phase>``).
        delivery: ``layered`` or ``cache-aware`` (see :mod:`promptdeck.core.layers.delivery`);
            None takes the workspace's ``delivery`` setting.
    """

    story_id: str
    phase: str = "dev"
    mode: str = "create"
    selection: Selection = field(default_factory=Selection)
    retry_reason: str | None = None
    failure: FailureInfo | None = None
    variant: str | None = None
    delivery: str | None = None


@dataclass(frozen=True)
class ComposedPrompt:
    """One composed prompt: the eight layers, the exact system prompt and user message, the
    messages array, the injection, and their meters.

    ``system_meter.bytes`` equals the sum of the layers' bytes plus ``joiner.bytes`` exactly
    (the joiner row is the bytes of the blank lines between layers); token counts of the
    joiner row are the remainder, so the rows add up to the total in tokens too. In the
    cache-aware delivery (:mod:`promptdeck.core.layers.delivery`) the layers are split between
    the system prompt and the head of the user turn: ``joiner.bytes`` is then what the two hold
    beyond the layers and the task, and its tokens are not counted.
    """

    story: Story
    request: PromptRequest
    layers: tuple[PromptLayer, ...]
    system: str
    user: str
    messages: tuple[dict[str, str], ...]
    injection: Injection
    signature: str
    system_meter: Meter
    user_meter: Meter
    warnings: tuple[str, ...]
    joiner: Meter = field(default_factory=lambda: Meter(0, 0))
    instructions: InstructionsFile | None = None
    rules: RulesFile | None = None
    compose_input: ComposeInput | None = None
    verification: Verification | None = None
    variant: str = "standard"
    """The variant composed: ``standard`` or ``party``."""
    summarised: tuple[str, ...] = ()
    """Retro only: the stories whose files are summarised rather than injected whole."""
    delivered: Delivered | None = None
    """Where each layer went (system prompt or user turn), as labelled segments."""

    @property
    def counted(self) -> bool:
        """True when token counts were made (``count_tokens=True``)."""
        return all(layer.tokens is not None for layer in self.layers)

    def size(self) -> PromptSize:
        """The prompt's size as every face labels it: the bytes sent to the agent, and apart
        the bytes on disk of files too large to read
        (:class:`~promptdeck.core.units.PromptSize`)."""
        return PromptSize(
            self.system_meter.bytes, self.user_meter.bytes, self.injection.unread_bytes
        )


def check_request(request: PromptRequest) -> Phase:
    """The request's phase.

    Raises:
        UsageError: an unknown phase or mode, or a retry reason outside optimize mode.
    """
    phase = get_phase(request.phase)
    if request.mode not in MODES:
        raise UsageError(f"unknown mode '{request.mode}' (one of: {', '.join(MODES)})")
    reason = request.retry_reason
    if reason is not None and reason.strip() and request.mode != "optimize":
        raise UsageError("a retry reason needs mode 'optimize' (the retry of a failed attempt)")
    return phase
