"""A run's flight report: its turn list and where its spend went, from its record alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cost.record import read_cost
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

    def to_dict(self) -> dict[str, Any]:
        """The ``show --turns --json`` shape."""
        return {
            "run": self.run_id,
            "model": self.model,
            **self.turns.to_dict(),
            "spend": self.spend.to_dict(),
        }


def _size(path: Path, root: Path) -> tuple[int, str]:
    text = read_text(path, root, limit=PROMPT_MAX_BYTES)
    if isinstance(text, TextProblem):
        return 0, ""
    return len(text.encode("utf-8")), text


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
    window = (
        result.context_window
        if result is not None and result.context_window
        else context_window_of(workspace.config, agent)
    )
    given = SpendInput(
        prompt_bytes=system_bytes + user_bytes,
        injected=injected_files(system_text),
        cwd=meta.cwd or str(root),
        root=root,
        price=load_prices(workspace).find(model),
        ttl=workspace.config.pricing_ttl,
        window=window,
    )
    return FlightReport(run.id, model, turns, spend(turns, given))
