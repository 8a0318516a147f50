"""Seed 001's frozen ``ComposeInput``: what the composer is asked to compose.

The entry points, target types and modes it accepts, its ``writePolicy``, and the check of
its camelCase JSON shape (:meth:`ComposeInput.from_dict`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any

from ..errors import ComposeError
from ..lean_dataclass import dataclass
from ..phases.table import PHASE_NAMES
from ..vocabulary import MODES as _MODES

SEED_ENTRIES = ("workflow", "step", "agent", "asset")
"""Seed 001's entry points (authoring entries)."""
ENTRIES = (*SEED_ENTRIES, *PHASE_NAMES)
"""Every entry point: the seed's four and the six phases."""
TARGET_TYPES = (*SEED_ENTRIES, "story", "epic")
"""What the work is about: the seed's four, or a story / an epic for the phases."""
MODES = _MODES

JOINER = "\n\n"
"""What separates two non-empty layers in the system prompt (its bytes are their own share)."""

CONTEXT_ORDER = ("story", "transfers", "fileInjections")
"""Context-envelope keys rendered first, in this order; any others follow sorted by key."""


@dataclass(frozen=True)
class WritePolicy:
    """Seed 001's ``writePolicy``."""

    allow_apply: bool = False
    requires_validation: bool = True

    def to_dict(self) -> dict[str, bool]:
        """The frozen camelCase shape."""
        return {"allowApply": self.allow_apply, "requiresValidation": self.requires_validation}


_INPUT_KEYS = (
    "entrypoint",
    "targetType",
    "mode",
    "domainProfile",
    "contextEnvelope",
    "writePolicy",
)


def _frozen_mapping(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


@dataclass(frozen=True)
class ComposeInput:
    """Seed 001's frozen ``ComposeInput``.

    Attributes:
        entrypoint: one of :data:`ENTRIES`.
        target_type: one of :data:`TARGET_TYPES`.
        mode: ``create`` or ``optimize``.
        domain_profile: what the work is about. The phases read ``storyId``,
            ``storyTitle``, ``epicId``, ``epicTitle``, ``source`` and ``verifyCommands``; the
            seed's entries read ``outputSchema``.
        context_envelope: Layer-5 sections by key (:data:`CONTEXT_ORDER` first, then sorted).
        write_policy: Layer-6's flags.
    """

    entrypoint: str
    target_type: str
    mode: str
    domain_profile: Mapping[str, Any] = field(default_factory=dict)
    context_envelope: Mapping[str, Any] = field(default_factory=dict)
    write_policy: WritePolicy = WritePolicy()

    def __post_init__(self) -> None:
        # Freeze the mappings so a caller's later edit cannot change a composed input.
        object.__setattr__(self, "domain_profile", _frozen_mapping(self.domain_profile))
        object.__setattr__(self, "context_envelope", _frozen_mapping(self.context_envelope))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ComposeInput:
        """Build from the frozen camelCase JSON shape, checking every key.

        Raises:
            ComposeError: a key is missing, unknown, or of the wrong type or value.
        """
        if not isinstance(data, Mapping):
            raise ComposeError("ComposeInput must be a JSON object")
        missing = [key for key in _INPUT_KEYS if key not in data]
        if missing:
            raise ComposeError(f"ComposeInput is missing {', '.join(missing)}")
        extra = sorted(key for key in data if key not in _INPUT_KEYS)
        if extra:
            raise ComposeError(f"ComposeInput has unexpected keys: {', '.join(extra)}")
        for key in ("entrypoint", "targetType", "mode"):
            if not isinstance(data[key], str):
                raise ComposeError(f"ComposeInput.{key} must be a string")
        for key in ("domainProfile", "contextEnvelope", "writePolicy"):
            if not isinstance(data[key], Mapping):
                raise ComposeError(f"ComposeInput.{key} must be an object")
        policy = data["writePolicy"]
        for key in ("allowApply", "requiresValidation"):
            if not isinstance(policy.get(key), bool):
                raise ComposeError(f"ComposeInput.writePolicy.{key} must be true or false")
        extra_policy = sorted(k for k in policy if k not in ("allowApply", "requiresValidation"))
        if extra_policy:
            raise ComposeError(
                f"ComposeInput.writePolicy has unexpected keys: {', '.join(extra_policy)}"
            )
        made = cls(
            entrypoint=data["entrypoint"],
            target_type=data["targetType"],
            mode=data["mode"],
            domain_profile=data["domainProfile"],
            context_envelope=data["contextEnvelope"],
            write_policy=WritePolicy(policy["allowApply"], policy["requiresValidation"]),
        )
        made.validate()
        return made

    def validate(self) -> None:
        """Check the enumerated fields.

        Raises:
            ComposeError: an unknown entrypoint, targetType or mode.
        """
        for name, value, allowed in (
            ("entrypoint", self.entrypoint, ENTRIES),
            ("targetType", self.target_type, TARGET_TYPES),
            ("mode", self.mode, MODES),
        ):
            if value not in allowed:
                raise ComposeError(
                    f"ComposeInput.{name} '{value}' is not one of {'|'.join(allowed)}"
                )

    def to_dict(self) -> dict[str, Any]:
        """The frozen camelCase JSON shape."""
        return {
            "entrypoint": self.entrypoint,
            "targetType": self.target_type,
            "mode": self.mode,
            "domainProfile": dict(self.domain_profile),
            "contextEnvelope": dict(self.context_envelope),
            "writePolicy": self.write_policy.to_dict(),
        }
