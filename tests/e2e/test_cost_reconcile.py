"""Predicted and actual cost, reconciled, with the real ``claude`` CLI against the loopback
fake of the Anthropic API: each run's ``cost.json`` keeps the prediction made before it
started, the usage the fake reported priced with the same table, and every cache miss named."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import promptdeck.core
import pytest
from e2e_project import PROMPTDECK, TIMEOUT, agent_cli, make_project
from fake_anthropic import FakeAnthropic, claude_env
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.tokens.pricing import load_prices

pytestmark = pytest.mark.e2e

CLAUDE = agent_cli("claude", "@anthropic-ai/claude-code")
MODEL = "claude-sonnet-4-6"
REPLY = "Done.\nIMPLEMENTATION COMPLETE: 1.2"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    config = (
        f'[agent]\nclaude_bin = "{CLAUDE}"\nclaude_model = "{MODEL}"\ntimeout = 150.0\n\n'
        # The story file stays as it is between runs, so only what a test changes differs.
        "[status]\nwrite_back = false\n"
    )
    root = make_project(tmp_path, "Keep functions small.\n", {".promptdeck/config.toml": config})
    trust_config(open_workspace(root))
    return root


def _run(root: Path, home: Path, usage: dict[str, int] | None = None) -> dict[str, object]:
    """One dev run of story 1.2 against the fake; the new run's ``cost.json``."""
    before = set((root / ".promptdeck" / "runs").glob("*/cost.json"))
    with FakeAnthropic(
        reply=REPLY, usage=usage, is_main=lambda r: "Story" in r.system_text()
    ) as fake:
        env = claude_env(fake, home)
        done = subprocess.run(
            [*PROMPTDECK, "run", "1.2", "--phase", "dev", "--agent", "claude", "--no-git"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    (new,) = set((root / ".promptdeck" / "runs").glob("*/cost.json")) - before
    data = json.loads(new.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _age(root: Path, seconds: float) -> None:
    """Move every recorded run ``seconds`` into the past: the simulated clock."""
    for meta in (root / ".promptdeck" / "runs").glob("*/meta.json"):
        data = json.loads(meta.read_text(encoding="utf-8"))
        data["started_ts"] = float(data["started_ts"]) - seconds
        meta.write_text(json.dumps(data), encoding="utf-8")


def test_six_minutes_later_the_miss_is_ttl_expired(project: Path, tmp_path: Path) -> None:
    first = _run(project, tmp_path / "home")
    assert first["miss_cause"] == ["no_previous_run"]
    _age(project, 6 * 60)
    second = _run(project, tmp_path / "home")
    assert second["miss_cause"] == ["ttl_expired"]
    cache = second["cache"]
    assert isinstance(cache, dict) and cache["gap_s"] > 300


def test_an_edited_guardrails_template_is_named_as_the_changed_prefix(
    project: Path, tmp_path: Path
) -> None:
    _run(project, tmp_path / "home")
    # The bundled layer templates: a data folder at the top of the engine's package.
    bundled = Path(promptdeck.core.__file__).parent / "templates"
    template = (bundled / "layer-1-guardrails.md").read_text()
    override = project / ".promptdeck" / "templates" / "layer-1-guardrails.md"
    override.parent.mkdir(parents=True, exist_ok=True)
    override.write_text(template + "- Ask before deleting anything.\n", encoding="utf-8")
    second = _run(project, tmp_path / "home")
    assert second["miss_cause"] == ["prefix_changed@Layer-1"]


def test_the_reported_usage_priced_matches_the_prediction(project: Path, tmp_path: Path) -> None:
    # The provider bills exactly the split promptdeck predicted for the first run: the cost
    # reconciled from the fake's usage equals the prediction within 1 %.
    dry = subprocess.run(
        [*PROMPTDECK, "run", "1.2", "--phase", "dev", "--agent", "claude", "--dry-run", "--json"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    predicted = json.loads(dry.stdout)["cost"]
    usage = {
        "input_tokens": predicted["input_tokens"],
        "cache_creation_input_tokens": predicted["cache_write_tokens"],
        "cache_read_input_tokens": predicted["cache_read_tokens"],
        "output_tokens": predicted["output_tokens"],
    }
    record = _run(project, tmp_path / "home", usage)
    actual = record["actual"]
    assert isinstance(actual, dict) and actual["unknown"] is None
    price = load_prices().find(MODEL)
    assert price is not None
    by_hand = (
        actual["input_tokens"] * price.input
        + actual["cache_write_tokens"] * price.cache_write_5m
        + actual["cache_read_tokens"] * price.cache_read
        + actual["output_tokens"] * price.output
    ) / 1e6
    assert actual["dollars"] == pytest.approx(by_hand, rel=1e-9)
    recorded = record["predicted"]
    assert isinstance(recorded, dict)
    assert actual["dollars"] == pytest.approx(recorded["dollars"], rel=0.01)


def test_with_no_model_set_the_run_is_priced_as_the_clients_own_default(tmp_path: Path) -> None:
    # No model anywhere: the prediction is of the model this claude version requests (the
    # dated defaults table), and the actual cost of the models its stream names.
    config = f'[agent]\nclaude_bin = "{CLAUDE}"\ntimeout = 150.0\n\n[status]\nwrite_back = false\n'
    root = make_project(tmp_path, "Keep functions small.\n", {".promptdeck/config.toml": config})
    trust_config(open_workspace(root))
    record = _run(root, tmp_path / "home")
    assert record["model"] == "claude-opus-4-8"
    assert str(record["model_source"]).startswith("claude default for 2.1.197")
    actual = record["actual"]
    assert isinstance(actual, dict) and "claude-opus-4-8" in actual["models"]
    # Its stream names the model with and without its window suffix (claude-opus-4-8[1m]),
    # one price row for both.
    assert actual["unknown"] is None and actual["dollars"] > 0
