"""The model each agent's runs will request, resolved once per workspace and agent.

The cache row and the epic forecast price a run as the model its client will request
(:func:`promptdeck.core.cost.forecast_model`), never as a stand-in. When only the client's
default would name it, the client's ``--version`` is asked (core remembers the answer per
program file, so an unchanged client is started once): blocking work, so :meth:`ClientModels.of`
runs in a worker, and its answer is kept for the session.

A stable session asks no client: the client installed is the machine's, not the session's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptdeck.core.cost import ResolvedModel
    from promptdeck.core.project import Workspace

VERSION_TIMEOUT_SECONDS = 5.0
"""How long the client's ``--version`` may take before the model is left to the settings."""

VersionAsker = Callable[["Workspace", str], "str | None"]
"""Finds a client's installed version (``claude`` → ``2.1.197``), None when unknown."""


def installed_client_version(workspace: Workspace, client: str) -> str | None:
    """``client``'s version as a run would start it (remembered per program file)."""
    from promptdeck.core.capture import installed_version

    return installed_version(
        workspace.config, client, timeout=VERSION_TIMEOUT_SECONDS, root=workspace.root
    )


def resolve_client_model(
    workspace: Workspace, agent: str, version: VersionAsker | None
) -> ResolvedModel:
    """The model ``agent``'s runs will request in ``workspace`` (blocking); ``""`` is the
    configured default agent. ``version`` is asked only when the client's default is needed;
    None leaves a model named only by that default unknown."""
    from promptdeck.core.cost import forecast_model

    asked = (lambda client: version(workspace, client)) if version is not None else None
    return forecast_model(workspace, agent or None, version=asked)


def model_said(model: ResolvedModel) -> str:
    """One line for a tooltip: the model and where it came from."""
    return f"model {model.shown}: from {model.source}"


class ClientModels:
    """Each agent's resolved model, kept once resolved (safe to call from worker threads).

    Args:
        version: finds a client's installed version; None asks no client (a stable session).
    """

    def __init__(self, version: VersionAsker | None = installed_client_version) -> None:
        self._version = version
        self._known: dict[tuple[Path, str], ResolvedModel] = {}
        self._lock = threading.Lock()

    def of(self, workspace: Workspace, agent: str) -> tuple[ResolvedModel, tuple[str, ...]]:
        """``agent``'s model in ``workspace`` (blocking the first time), and the notes of the
        client files that could not be read — given the first time only, so they are said
        once."""
        key = (workspace.root, agent)
        with self._lock:
            known = self._known.get(key)
            if known is not None:
                return known, ()
            resolved = resolve_client_model(workspace, agent, self._version)
            self._known[key] = resolved
            return resolved, resolved.notes
