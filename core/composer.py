"""The eight-layer prompt composer (seed 001, with its frozen contract).

:func:`compose_system_instruction` turns a :class:`ComposeInput` into exactly eight
:class:`PromptLayer` objects in the fixed order ``Layer-0A, 0B, 1, 2, 3, 4, 5, 6``;
:func:`compose_messages` wraps them as ``[system, *prior, user]``. The composer only assembles
what it is given (seed 001: no database reads); :func:`promptdeck.core.prompt.compose_prompt`
gathers a story's inputs and calls it.

Layer texts are templates bundled in the package (``core/templates/``), overridable per
workspace in ``config.paths_templates``; a layer built from an override names that file as its
source. Placeholders are ``$name``; an unknown placeholder is a :class:`ComposeError`, never a
blank. A line holding only a placeholder whose value is empty is dropped with the blank line
after it, which is how optional sections (learnings, retry) come and go.

Determinism: the same input gives the same layers and :func:`signature` in any process — no
set or dict-order effects (mapping keys are rendered in a fixed or sorted order), no clock, no
absolute paths in sources.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .errors import ComposeError
from .instructions import InstructionsFile, load_instructions
from .phases import PHASE_NAMES, get_phase
from .rules import RulesFile
from .textfiles import DEFAULT_READ_LIMIT, TextProblem, read_text
from .tokens import TokenCounter
from .vocabulary import LAYER_IDS as _LAYER_IDS
from .vocabulary import MODES as _MODES
from .vocabulary import LayerId

LAYER_IDS = _LAYER_IDS
"""The fixed layer order (seed 001, frozen decision 1)."""

LAYER_TITLES: Mapping[LayerId, str] = MappingProxyType(
    {
        "Layer-0A": "Instructions",
        "Layer-0B": "Workspace rules",
        "Layer-1": "Guardrails",
        "Layer-2": "Contract",
        "Layer-3": "Entry",
        "Layer-4": "Mode",
        "Layer-5": "Context",
        "Layer-6": "ApplyPolicy",
    }
)
OPTIONAL_LAYERS = frozenset({"Layer-0B"})
"""Layers that may be empty: only the workspace rules (seed 004 Req 4 over seed 001)."""

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

SCHEMA_FIRST = """\
### Schema-first self-check

Before you print any structured output — a signal line, a record section, JSON — check it
against its contract:
- `required`: every required field is present and not empty;
- `type`: every value has the type the contract gives (text, number, list, object);
- `enum`: where the contract allows a fixed set of values, use one of them, spelled exactly;
- no extra fields: nothing the contract does not name.

If you are not sure what a field must hold, read more context first — the story file, the
code, the specs — instead of guessing. Never invent a value to fill a field."""
"""Fixed Layer-1 text (seed 001 AC-4). Appended in code, so no template override drops it."""


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class TemplateText:
    """A template's text and where it came from (``template:NAME`` or a workspace path)."""

    name: str
    text: str
    source: str


_PACKAGE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=128)
def _bundled(name: str) -> str | None:
    # Package data cannot change under a running process, so it is read once.
    # The package is installed as plain files: a path next to this module is the package
    # data (importlib.resources would cost a headless command ~10 ms of imports).
    entry = _PACKAGE_DIR / "templates" / name
    try:
        return entry.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return None


def bundled_template(name: str) -> TemplateText:
    """The bundled template ``name``.

    Raises:
        ComposeError: no such bundled template.
    """
    text = _bundled(name)
    if text is None:
        raise ComposeError(f"template {name} is missing from the installed package")
    return TemplateText(name, text, f"template:{name}")


class TemplateSet:
    """Layer templates: a workspace override when one exists, else the bundled one.

    Overrides are read fresh on every :meth:`get`, so an edit shows at the next compose.
    """

    def __init__(
        self,
        root: Path | None = None,
        override_dir: str | None = None,
        limit: int = DEFAULT_READ_LIMIT,
    ) -> None:
        """Use overrides from ``root / override_dir`` (none when either is None), each read
        through the guarded reader with at most ``limit`` bytes."""
        self.root = root
        self.override_dir = override_dir
        self.limit = limit

    def _override_path(self, name: str) -> tuple[Path, str] | None:
        if self.root is None or not self.override_dir:
            return None
        folder = Path(self.override_dir)
        path = (folder if folder.is_absolute() else self.root / folder) / name
        shown = (Path(self.override_dir) / name).as_posix()
        return path, shown

    def get(self, name: str) -> TemplateText:
        """The template ``name``, overridden or bundled.

        Raises:
            ComposeError: an override exists but is not readable UTF-8 text or lies (or
                links) outside the project, or the bundled template is missing.
        """
        override = self._override_path(name)
        if override is not None:
            path, shown = override
            if os.path.lexists(path):
                assert self.root is not None  # an override path exists only with a root
                # Never read a file outside the project into a prompt: a cloned repository
                # could otherwise send a home-folder secret to the agent.
                text = read_text(path, self.root.resolve(), limit=self.limit)
                if isinstance(text, TextProblem):
                    if text.reason == "missing" or text.detail == "is a folder":
                        return bundled_template(name)
                    if text.reason == "empty":
                        text = ""
                    elif text.reason == "outside-project":
                        raise ComposeError(
                            f"template override {shown} leads outside the project; not read"
                        )
                    elif text.reason in ("not-utf8", "binary"):
                        raise ComposeError(f"template override {shown}: not UTF-8 text")
                    else:
                        raise ComposeError(f"template override {shown}: {text}")
                return TemplateText(name, text, shown)
        return bundled_template(name)


BUNDLED = TemplateSet()
"""Bundled templates only (no workspace)."""

_PLACEHOLDER_LINE = re.compile(r"^[ \t]*\$(?:\{(\w+)\}|(\w+))[ \t]*$")


def render(template: TemplateText, values: Mapping[str, str]) -> str:
    """Fill ``template`` from ``values``.

    A line that holds only a placeholder whose value is ``""`` is dropped together with the
    blank line after it. Leading and trailing newlines of the result are removed.

    Raises:
        ComposeError: the template names a placeholder ``values`` lacks, or has a stray ``$``.
    """
    kept: list[str] = []
    drop_blank = False
    for line in template.text.replace("\r\n", "\n").split("\n"):
        match = _PLACEHOLDER_LINE.match(line)
        if match:
            name = match.group(1) or match.group(2)
            if values.get(name, None) == "":
                drop_blank = True
                continue
        if drop_blank and not line.strip():
            drop_blank = False
            continue
        drop_blank = False
        kept.append(line)
    try:
        text = string.Template("\n".join(kept)).substitute(values)
    except KeyError as exc:
        raise ComposeError(
            f"template {template.source}: unknown placeholder ${exc.args[0]}"
        ) from None
    except ValueError as exc:
        raise ComposeError(f"template {template.source}: {exc}") from None
    return text.strip("\n")


# --------------------------------------------------------------------------- input


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


# --------------------------------------------------------------------------- layers


@dataclass(frozen=True)
class PromptLayer:
    """One layer of the system instruction (seed 001's frozen shape, plus meters).

    Attributes:
        layer_id: ``Layer-0A`` … ``Layer-6``.
        title: e.g. ``Guardrails``.
        content: the exact text sent.
        required: a required layer is never empty.
        source: ``template:NAME``, ``asset:instructions.md``, a workspace path, or
            ``input:contextEnvelope``.
        bytes: UTF-8 bytes of :attr:`content`.
        tokens: tokens of :attr:`content`, or None when not counted.
        sha256: hex sha256 of :attr:`content`.
        missing: True when an optional layer's source was missing (Layer-0B without rules).
    """

    layer_id: LayerId
    title: str
    content: str
    required: bool
    source: str
    bytes: int
    tokens: int | None
    sha256: str
    missing: bool = False

    @classmethod
    def build(
        cls,
        layer_id: LayerId,
        content: str,
        source: str,
        *,
        counter: TokenCounter | None = None,
        missing: bool = False,
        pieces: Sequence[str] | None = None,
    ) -> PromptLayer:
        """Make a layer, measuring ``content``.

        ``pieces``, when given, concatenate to ``content``: their counts (the injection's,
        already made) are reused, so no byte is encoded twice.

        Raises:
            ComposeError: a required layer's content is empty.
        """
        required = layer_id not in OPTIONAL_LAYERS
        if required and not content.strip():
            raise ComposeError(
                f"{layer_id} ({LAYER_TITLES[layer_id]}) is required but empty (source: {source})"
            )
        data = content.encode("utf-8")
        return cls(
            layer_id=layer_id,
            title=LAYER_TITLES[layer_id],
            content=content,
            required=required,
            source=source,
            bytes=len(data),
            tokens=None
            if counter is None
            else counter.count_joined(pieces, content)
            if pieces is not None
            else counter.count(content),
            sha256=hashlib.sha256(data).hexdigest(),
            missing=missing,
        )

    def to_dict(self, *, content: bool = True) -> dict[str, Any]:
        """The camelCase shape (``content`` left out when ``content=False``)."""
        shape: dict[str, Any] = {
            "layerId": self.layer_id,
            "title": self.title,
            "required": self.required,
            "source": self.source,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "sha256": self.sha256,
            "missing": self.missing,
        }
        if content:
            shape["content"] = self.content
        return shape


def signature(layers: Iterable[PromptLayer]) -> str:
    """sha256 over the ordered layers: one ``<layerId>:<sha256>`` line per layer."""
    digest = hashlib.sha256()
    for layer in layers:
        digest.update(f"{layer.layer_id}:{layer.sha256}\n".encode())
    return digest.hexdigest()


def system_text(layers: Sequence[PromptLayer]) -> str:
    """The system prompt: the non-empty layers' contents joined by :data:`JOINER`."""
    return JOINER.join(layer.content for layer in layers if layer.content)


def system_pieces(layers: Sequence[PromptLayer]) -> list[str]:
    """:func:`system_text` as pieces (the layers and the joiners) that concatenate to it."""
    pieces: list[str] = []
    for layer in layers:
        if layer.content:
            if pieces:
                pieces.append(JOINER)
            pieces.append(layer.content)
    return pieces


def joiner_count(layers: Sequence[PromptLayer]) -> int:
    """How many joiners :func:`system_text` puts between the layers."""
    return max(0, sum(1 for layer in layers if layer.content) - 1)


# --------------------------------------------------------------------------- composing


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip("\n")
    return json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2)


def epic_label(epic_id: str, title: str | None) -> str:
    """``epic 1: Statement import``, or just ``epic 1`` when the title adds nothing."""
    title = (title or "").strip()
    if not title or title.lower() in (epic_id.lower(), f"epic {epic_id}".lower()):
        return f"epic {epic_id}"
    return f"epic {epic_id}: {title}"


def _values(compose_input: ComposeInput) -> dict[str, str]:
    """Template values from the input; phases need their story or epic."""
    profile = compose_input.domain_profile
    values = {
        "entrypoint": compose_input.entrypoint,
        "target_type": compose_input.target_type,
        "mode": compose_input.mode,
    }
    for key, name in (
        ("storyId", "story_id"),
        ("storyTitle", "story_title"),
        ("epicId", "epic_id"),
        ("epicTitle", "epic_title"),
        ("source", "source"),
    ):
        value = profile.get(key)
        if value is not None:
            values[name] = str(value)
    if compose_input.entrypoint in PHASE_NAMES:
        phase = get_phase(compose_input.entrypoint)
        needed = ("epicId",) if phase.scope == "epic" else ("storyId", "storyTitle")
        for key in needed:
            if not str(profile.get(key) or "").strip():
                raise ComposeError(
                    f"domainProfile.{key} is required for the {compose_input.entrypoint} entry"
                )
        values.setdefault("epic_title", values.get("epic_id", ""))
        values["epic_label"] = epic_label(values.get("epic_id", ""), values["epic_title"])
        if phase.scope == "epic":
            values["scope"] = values["epic_label"]
        else:
            values["scope"] = f"story {values['story_id']}: {values['story_title']}"
        values["phase"] = phase.name
        values["phase_title"] = phase.title
        record = str(profile.get("recordPath") or "")
        # Where records go is part of each workflow's contract: a BMAD story's own file, or
        # an OpenSpec story's record file (its tasks.md is shared by every story of the change).
        values["record_file"] = (
            f"the story's record file `{record}`"
            if values.get("source") == "openspec" and record
            else "the story file"
        )
    else:
        values["scope"] = f"the {compose_input.target_type} named in the context"
    return values


def _entry_template(compose_input: ComposeInput, values: dict[str, str]) -> str:
    """Layer-3's template: the phase's own, or its party variant (``domainProfile.variant``),
    whose participants come rendered in ``domainProfile.personas`` / ``voices``."""
    variant = str(compose_input.domain_profile.get("variant") or "standard")
    if variant == "standard":
        return f"layer-3-entry-{compose_input.entrypoint}.md"
    if variant != "party":
        raise ComposeError(f"domainProfile.variant '{variant}' is not one of standard|party")
    for key, name in (
        ("personas", "personas"),
        ("participants", "participants"),
        ("voices", "voices"),
    ):
        text = str(compose_input.domain_profile.get(key) or "")
        if not text.strip():
            raise ComposeError(f"domainProfile.{key} is required for a party entry")
        values[name] = text
    return f"layer-3-entry-party-{compose_input.entrypoint}.md"


def _verify_commands(compose_input: ComposeInput) -> tuple[str, ...]:
    raw = compose_input.domain_profile.get("verifyCommands") or ()
    if isinstance(raw, str) or not all(isinstance(item, str) for item in raw):
        raise ComposeError("domainProfile.verifyCommands must be a list of strings")
    return tuple(raw)


def _contract(
    compose_input: ComposeInput, values: dict[str, str], templates: TemplateSet
) -> TemplateText:
    if compose_input.entrypoint in PHASE_NAMES:
        phase = get_phase(compose_input.entrypoint)
        ident = values["epic_id"] if phase.scope == "epic" else values["story_id"]
        specs = phase.contract_signals(values.get("source", ""))
        values["signal_id"] = ident
        # Promise tags carry no id: the check names one only when a signal line has it.
        values["signal_id_check"] = (
            f" the id `{ident}`," if any("{id}" in spec.template for spec in specs) else ""
        )
        values["signal_lines"] = "\n".join(
            f"- `{spec.display(ident)}`\n  when {spec.when}" for spec in specs
        )
        return templates.get("layer-2-contract.md")
    schema = compose_input.domain_profile.get("outputSchema")
    if schema is None:
        target = compose_input.target_type
        values["schema"] = (
            f"No schema was given for this {target}. Follow the structure of the "
            f"existing {target}s in the context; read more of them rather than "
            "guess at a field."
        )
    else:
        values["schema"] = "```json\n" + _text(schema) + "\n```"
    return templates.get("layer-2-contract-artifact.md")


def _apply_values(compose_input: ComposeInput, values: Mapping[str, str]) -> dict[str, str]:
    """Layer-6's values: ``values`` (left as they are) and the write policy's words."""
    policy = compose_input.write_policy
    commands = _verify_commands(compose_input)
    if compose_input.entrypoint in PHASE_NAMES:
        apply = get_phase(compose_input.entrypoint).apply_policy
        writes, stage = apply.writes, apply.stage[:1].upper() + apply.stage[1:]
        if compose_input.domain_profile.get("variant") == "party" and apply.party_writes:
            writes = apply.party_writes
        record_file = values.get("record_file", "the story file")
        writes = writes.replace("the story file", record_file)
    else:
        writes = (
            f"You may write the {compose_input.target_type} files your output names."
            if policy.allow_apply
            else "Do not change any file: return your output only."
        )
        stage = "Stage nothing and do not commit."
    if not policy.allow_apply:
        writes = "Do not change any file: return your output only."
    if policy.requires_validation:
        if commands:
            listed = "\n".join(f"  - `{command}`" for command in commands)
            validation = (
                "Run these verification commands and make them pass before you print a "
                f"success signal:\n{listed}"
            )
        else:
            validation = (
                "No verification commands are configured for this workspace: run the "
                "project's own tests and checks, if it has any, before you print a success "
                "signal."
            )
    else:
        validation = "No verification is required in this phase."
    return {
        **values,
        "allow_apply": "yes" if policy.allow_apply else "no",
        "requires_validation": "yes" if policy.requires_validation else "no",
        "writes": writes,
        "stage": stage,
        "validation": validation,
    }


def _context(compose_input: ComposeInput) -> list[str]:
    """Layer-5's pieces: the envelope's parts with the joiners between them."""
    envelope = compose_input.context_envelope
    keys = [key for key in CONTEXT_ORDER if key in envelope]
    keys += sorted(key for key in envelope if key not in CONTEXT_ORDER)
    parts: list[str] = []
    for key in keys:
        value = envelope[key]
        text = _text(value)
        if not text.strip():
            continue
        if isinstance(value, str):
            parts.append(text)
        else:
            parts.append(f"### {key}\n\n```json\n{text}\n```")
    pieces: list[str] = []
    for part in parts:
        if pieces:
            pieces.append(JOINER)
        pieces.append(part)
    return pieces


def _rules_layer(rules: RulesFile | None, counter: TokenCounter | None) -> PromptLayer:
    if rules is None or not rules.present:
        source = rules.path if rules is not None else "none"
        return PromptLayer.build("Layer-0B", "", source, counter=counter, missing=True)
    content = (
        f"## Workspace rules\n\nThese are the rules of this workspace, from `{rules.path}`.\n\n"
        + rules.text.strip("\n")
    )
    return PromptLayer.build("Layer-0B", content, rules.path, counter=counter)


def compose_system_instruction(
    compose_input: ComposeInput,
    *,
    instructions: InstructionsFile | None = None,
    rules: RulesFile | None = None,
    templates: TemplateSet | None = None,
    counter: TokenCounter | None = None,
) -> list[PromptLayer]:
    """Compose the eight layers for ``compose_input``, in the fixed order.

    Args:
        compose_input: what to compose.
        instructions: Layer-0A; the bundled asset is read when None.
        rules: Layer-0B; None (or a rules file that is not present) leaves it missing.
        templates: where layer templates come from; bundled only when None.
        counter: counts each layer's tokens; tokens are None when not given.

    Raises:
        ComposeError: a required input or layer is missing or empty, or a template names an
            unknown placeholder.
        AssetMissing: the bundled instructions are missing.
    """
    compose_input.validate()
    templates = templates or BUNDLED
    instructions = instructions or load_instructions()
    values = _values(compose_input)

    layers = [
        PromptLayer.build(
            "Layer-0A", instructions.text.strip("\n"), instructions.source, counter=counter
        ),
        _rules_layer(rules, counter),
    ]

    guard = templates.get("layer-1-guardrails.md")
    layers.append(
        PromptLayer.build(
            "Layer-1", render(guard, values) + JOINER + SCHEMA_FIRST, guard.source, counter=counter
        )
    )

    contract = _contract(compose_input, values, templates)
    layers.append(
        PromptLayer.build("Layer-2", render(contract, values), contract.source, counter=counter)
    )

    entry = templates.get(_entry_template(compose_input, values))
    layers.append(
        PromptLayer.build("Layer-3", render(entry, values), entry.source, counter=counter)
    )

    mode = templates.get(f"layer-4-mode-{compose_input.mode}.md")
    layers.append(PromptLayer.build("Layer-4", render(mode, values), mode.source, counter=counter))

    if compose_input.entrypoint in PHASE_NAMES and not _text(
        compose_input.context_envelope.get("story", "")
    ):
        raise ComposeError(
            f"contextEnvelope.story is required for the {compose_input.entrypoint} entry (Layer-5)"
        )
    pieces = _context(compose_input)
    if not pieces:
        raise ComposeError("contextEnvelope is empty: Layer-5 (Context) is required")
    layers.append(
        PromptLayer.build(
            "Layer-5", "".join(pieces), "input:contextEnvelope", counter=counter, pieces=pieces
        )
    )

    apply_values = _apply_values(compose_input, values)
    apply = templates.get("layer-6-apply-policy.md")
    layers.append(
        PromptLayer.build("Layer-6", render(apply, apply_values), apply.source, counter=counter)
    )
    return layers


def compose_messages(
    *,
    input: ComposeInput,
    user_message: str,
    prior_messages: list[dict[str, str]] | None = None,
    layers: Sequence[PromptLayer] | None = None,
) -> list[dict[str, str]]:
    """``[system, *prior_messages, user]`` for ``input`` (seed 001 AC-3).

    ``input`` is the seed's keyword, kept for its callers; the helpers say ``compose_input``.

    Args:
        input: what to compose.
        user_message: the user turn (the phase's task).
        prior_messages: earlier turns, each ``{"role", "content"}``; copied, never aliased.
        layers: the already-composed layers of ``input`` (composed with bundled templates
            when None).

    Raises:
        ComposeError: the user message is empty or a prior message is malformed.
    """
    if not user_message.strip():
        raise ComposeError("user message is empty")
    if layers is None:
        layers = compose_system_instruction(input)
    prior: list[dict[str, str]] = []
    for index, message in enumerate(prior_messages or ()):
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant") or not isinstance(content, str):
            raise ComposeError(
                f"prior_messages[{index}] must be {{'role': 'user'|'assistant', 'content': str}}"
            )
        prior.append({"role": role, "content": content})
    return [
        {"role": "system", "content": system_text(layers)},
        *prior,
        {"role": "user", "content": user_message},
    ]
