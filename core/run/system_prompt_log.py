"""The ``promptdeck.system_prompt`` logger (seed 004: Req 2 validation, observability).

One standard :mod:`logging` logger records every injection of instructions and rules: the
initial one (a run, or a chat's first turn) and each re-injection. A record's message is one
readable line; its ``system_prompt`` attribute holds the same facts as a dict for handlers:

- ``trigger``: ``initial``, ``turns`` or ``context 50 %``;
- ``instructions``: ``{"path": "asset:instructions.md", "source": "bundled asset", "sha256",
  "bytes"}`` — the package's own file, named as such;
- ``rules``: ``{"path", "status", "sha256", "bytes"}`` (no hash or size when not read);
- ``run_id``, ``agent`` and ``system_bytes`` where known.

Missing or unreadable rules log at WARNING, an alert (repeated failures) at ERROR, the rest at
INFO. Nothing is configured here: the CLI's ``--log-events`` prints the records as JSON lines,
an API caller attaches its own handler.
"""

from __future__ import annotations

import logging
from typing import Any

from ..layers.instructions import InstructionsFile
from ..layers.rules import RulesFile

LOGGER_NAME = "promptdeck.system_prompt"
logger = logging.getLogger(LOGGER_NAME)
# A library logs, the application decides: without a handler of its own nothing is printed
# (not even through logging's last-resort stderr handler, which would garble the app).
logger.addHandler(logging.NullHandler())
RECORD_ATTRIBUTE = "system_prompt"


def injection_facts(
    trigger: str,
    instructions: InstructionsFile,
    rules: RulesFile,
    *,
    run_id: str | None = None,
    agent: str | None = None,
    system_bytes: int | None = None,
) -> dict[str, Any]:
    """The facts one injection record carries."""
    return {
        "trigger": trigger,
        "instructions": {
            "path": instructions.source,
            "source": "bundled asset",
            "sha256": instructions.sha256,
            "bytes": len(instructions.text.encode("utf-8")),
        },
        "rules": {
            "path": rules.path,
            "status": rules.status,
            "sha256": rules.sha256,
            "bytes": len(rules.text.encode("utf-8")) if rules.present else None,
        },
        "run_id": run_id,
        "agent": agent,
        "system_bytes": system_bytes,
    }


def log_injection(facts: dict[str, Any], *, alert: str | None = None) -> None:
    """Emit one record for an injection (``alert``: the repeated-failure error line)."""
    instructions, rules = facts["instructions"], facts["rules"]
    rules_part = (
        f"rules {rules['path']} sha256={rules['sha256']} bytes={rules['bytes']}"
        if rules["status"] == "ok"
        else f"rules {rules['path']} [{rules['status']}]"
    )
    message = (
        f"system prompt injected ({facts['trigger']}): instructions {instructions['path']} "
        f"(bundled asset) sha256={instructions['sha256']} bytes={instructions['bytes']}; "
        f"{rules_part}"
    )
    if facts.get("run_id"):
        message += f"; run {facts['run_id']}"
    level = logging.INFO if rules["status"] == "ok" else logging.WARNING
    if alert:
        level = logging.ERROR
        message += f"; {alert}"
    logger.log(level, message, extra={RECORD_ATTRIBUTE: facts})
