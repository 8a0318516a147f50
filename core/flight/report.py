"""A run's flight report: its turn list and where its spend went, from its record alone and,
for the client's own overhead and window, the capture kept for the run's client version."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..capture.memory import remembered_capture
from ..capture.model import Capture, capture_summary
from ..cost.record import read_cost
from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, read_text
from ..project.workspace import Workspace
from ..records.reader import RunInfo
from ..tokens.context_window import context_window_of
from ..tokens.pricing import load_prices, priced_model
from .attribution import Spend, SpendInput, injected_files, spend
from .model import TurnList
from .store import turns_of

PROMPT_MAX_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class FlightReport:
    """A run's requests and its spend."""

    run_id: str
    model: str
    turns: TurnList
    spend: Spend
    simulation: bool = False
    """A simulated (``replay``) run: its usage is invented, so its spend is no one's bill."""

    def to_dict(self) -> dict[str, Any]:
        """The ``show --turns --json`` shape."""
        return {
            "run": self.run_id,
            "model": self.model,
            **self.turns.to_dict(),
            "spend": self.spend.to_dict(),
            "simulation": self.simulation,
        }


def _size(path: Path, root: Path) -> tuple[int, str]:
    text = read_text(path, root, limit=PROMPT_MAX_BYTES)
    if isinstance(text, TextProblem):
        return 0, ""
    return len(text.encode("utf-8")), text


def client_version(turns: TurnList) -> str | None:
    """The client version the run's stream states (the last word of its format), or None."""
    word = turns.format.rsplit(" ", 1)[-1] if turns.format else ""
    return word if word and word[0].isdigit() else None


def kept_capture(
    agent: str, version: str | None, environ: Mapping[str, str] | None = None
) -> tuple[Capture | None, str]:
    """The capture kept for ``agent`` at exactly ``version`` (a capture of another version
    measured another client), or None and why not."""
    if agent not in ("claude", "codex"):
        return None, f"the {agent or 'unknown'} agent runs no client"
    if version is None:
        return None, "the run's stream states no client version"
    found = remembered_capture(agent, version, environ=environ)
    if found is None or found.client_version != version:
        return None, f"promptdeck capture keeps one for {agent} {version}"
    return found, ""


def flight_report(
    workspace: Workspace, run: RunInfo, environ: Mapping[str, str] | None = None
) -> FlightReport:
    """The run's turn list (kept in its folder) and where its spend went."""
    root = workspace.root.resolve()
    meta = run.run_meta
    agent = meta.agent or ""
    turns = turns_of(run.dir, workspace.root, agent, meta.cwd, environ=environ)
    system_bytes, system_text = _size(run.dir / "system.md", root)
    user_bytes, _ = _size(run.dir / "user.md", root)
    cost = read_cost(run.dir, root)
    model = cost.model if cost is not None and cost.model else priced_model(workspace, agent)
    result = run.run_result
    capture, why = kept_capture(agent, client_version(turns), environ)
    # The window the client reported for the run wins; then the capture's, as context_use.
    window = (
        result.context_window
        if result is not None and result.context_window
        else (capture.window if capture is not None else 0)
        or context_window_of(workspace.config, agent)
    )
    overhead = capture_summary(capture).overhead_tokens if capture is not None else None
    given = SpendInput(
        prompt_bytes=system_bytes + user_bytes,
        injected=injected_files(system_text),
        cwd=meta.cwd or str(root),
        root=root,
        price=load_prices(workspace).find(model),
        ttl=workspace.config.pricing_ttl,
        window=window,
        overhead_tokens=overhead,
        overhead_from=(f"the kept capture of {capture.origin()}" if capture is not None else why),
    )
    return FlightReport(run.id, model, turns, spend(turns, given), bool(meta.simulation))
