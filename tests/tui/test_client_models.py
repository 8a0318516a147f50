"""The model each agent's runs will request, resolved once per workspace and agent."""

from __future__ import annotations

from pathlib import Path

from promptdeck.core.project import open_workspace
from promptdeck.tui.session.client_models import ClientModels, model_said


def test_the_model_is_the_installed_clients_default_and_is_resolved_once(
    demo_root: Path,
) -> None:
    asked: list[str] = []

    def version(workspace: object, client: str) -> str:
        asked.append(client)
        return "2.1.197"

    models = ClientModels(version)
    workspace = open_workspace(demo_root)
    model, _ = models.of(workspace, "claude")
    again, notes = models.of(workspace, "claude")
    assert model.model == "claude-opus-4-8"
    assert again is model and notes == ()
    assert asked == ["claude"]
    assert model_said(model).startswith("model claude-opus-4-8: from ")


def test_a_stable_session_asks_no_client_and_says_the_model_is_unknown(demo_root: Path) -> None:
    model, _ = ClientModels(None).of(open_workspace(demo_root), "codex")
    assert not model.known
    assert model_said(model).startswith("model unknown: from ")


def test_an_unreadable_client_settings_file_is_said_once(demo_root: Path) -> None:
    settings = demo_root / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text("{not json", encoding="utf-8")
    models = ClientModels(None)
    workspace = open_workspace(demo_root)
    _, first = models.of(workspace, "claude")
    _, second = models.of(workspace, "claude")
    assert first and "settings.json" in first[0]
    assert second == ()
