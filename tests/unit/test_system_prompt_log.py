"""Seed 004's observability: the ``promptdeck.system_prompt`` logger's records, the alert after
repeated failures to read the rules, the ``failures`` counter and ``--log-events``."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from promptdeck.core.errors import ConfigError
from promptdeck.core.layers.instructions import load_instructions
from promptdeck.core.layers.rules import note_rules_read, read_rules, rules_health
from promptdeck.core.project.config import config_from_mapping
from promptdeck.core.run.runner import start_run
from promptdeck.core.run.session import ReinjectionSettings, Session
from promptdeck.core.run.system_prompt_log import LOGGER_NAME, RECORD_ATTRIBUTE
from test_runner import compose, make_workspace

RULES = "Always run the tests.\n"


def _facts(caplog: pytest.LogCaptureFixture) -> list[dict]:  # type: ignore[type-arg]
    return [getattr(r, RECORD_ATTRIBUTE) for r in caplog.records if r.name == LOGGER_NAME]


def test_the_initial_injection_and_a_reinjection_are_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    ws = make_workspace(tmp_path, git=False)
    (tmp_path / ".promptdeck" / "rules.md").write_text(RULES)
    session = Session(ws, "1.2", "dev", settings=ReinjectionSettings(turns=1), log=lambda _: None)
    for message in ("first", "second"):
        prompt = compose(ws)
        plan = session.plan(message, prompt.user, prompt.rules)
        result = start_run(
            ws,
            prompt,
            agent="replay",
            use_git=False,
            resume_session=None if plan.initial else session.session_id,
            user_text=plan.user_text,
        ).wait(60)
        session.finish(plan, result.run_dir, result.session_id, None)
    initial, again = _facts(caplog)
    instructions = load_instructions()
    assert initial["trigger"] == "initial" and again["trigger"] == "turns"
    for facts in (initial, again):
        assert facts["instructions"] == {
            "path": "asset:instructions.md",
            "source": "bundled asset",
            "sha256": instructions.sha256,
            "bytes": len(instructions.text.encode()),
        }
        assert facts["rules"]["path"] == ".promptdeck/rules.md"
        assert facts["rules"]["status"] == "ok"
        assert facts["rules"]["bytes"] == len(RULES)
        assert facts["rules"]["sha256"] == read_rules(ws).sha256
    assert initial["run_id"] and initial["agent"] == "replay" and initial["system_bytes"] > 0
    assert [r.levelno for r in caplog.records if r.name == LOGGER_NAME] == [logging.INFO] * 2


def test_repeated_rules_failures_escalate_to_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    ws = make_workspace(tmp_path, git=False)
    rules = tmp_path / ".promptdeck" / "rules.md"
    rules.write_bytes(b"\xff\xfe not UTF-8")
    alerts = []
    for _ in range(4):
        result = start_run(ws, compose(ws), agent="replay", use_git=False).wait(60)
        alerts.append([w for w in result.warnings if "check the workspace" in w])
    assert [len(a) for a in alerts] == [0, 0, 1, 1]
    assert alerts[2][0] == (
        "workspace rules .promptdeck/rules.md could not be read 3 times in a row "
        "(last: not-utf8): check the workspace"
    )
    levels = [r.levelno for r in caplog.records if r.name == LOGGER_NAME]
    assert levels == [logging.WARNING, logging.WARNING, logging.ERROR, logging.ERROR]
    meta = json.loads((result.run_dir / "meta.json").read_text())
    assert "4 times in a row" in meta["rules_alert"]
    # A good read resets the count.
    rules.write_text(RULES)
    assert note_rules_read(ws, read_rules(ws)).consecutive == 0
    assert not rules_health(ws).alert


def test_the_threshold_is_configurable_and_zero_never_alerts(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False, config="[session]\nrules_alert_after = 0\n")
    for _ in range(5):
        health = note_rules_read(ws, read_rules(ws))
    assert health.consecutive == 5 and not health.alert and health.message() is None
    with pytest.raises(ConfigError, match="rules_alert_after"):
        config_from_mapping({"session": {"rules_alert_after": -1}}, "config.toml")


def test_chat_counts_rules_failures_and_logs_the_alert(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False, config="[session]\nrules_alert_after = 1\n")
    logs: list[str] = []
    session = Session(ws, "1.2", "dev", settings=ReinjectionSettings(turns=1), log=logs.append)
    for message in ("first", "second"):
        prompt = compose(ws)
        plan = session.plan(message, prompt.user, prompt.rules)
        result = start_run(
            ws,
            prompt,
            agent="replay",
            use_git=False,
            resume_session=None if plan.initial else session.session_id,
            user_text=plan.user_text,
        ).wait(60)
        session.finish(plan, result.run_dir, result.session_id, None)
    assert session.counters.failures == 2  # the initial read and the re-injection's
    session_log = (result.run_dir / "session.log").read_text()
    assert "error: workspace rules .promptdeck/rules.md could not be read 2 times" in session_log
    assert any(line.startswith("warning: no workspace rules file") for line in logs)


def test_log_events_prints_json_lines_on_stderr(tmp_path: Path) -> None:
    make_workspace(tmp_path, git=False)
    code = "import sys; from promptdeck.cli import main; sys.exit(main())"
    run = [
        sys.executable,
        "-c",
        code,
        "run",
        "1.2",
        "--phase",
        "dev",
        "--no-git",
        "--agent",
        "replay",
    ]
    done = subprocess.run(
        [*run, "--file", "missing.md", "--log-events"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    names = [e["event"] for e in events]
    assert "injection:skipped" in names and names[-1] == "system_prompt:injected"
    skipped = next(e for e in events if e.get("path") == "missing.md")
    assert skipped == {
        "event": "injection:skipped",
        "command": "dev",
        "path": "missing.md",
        "status": "missing",
        "reason": "no such file",
    }
    injected = events[-1]
    assert injected["trigger"] == "initial" and injected["level"] == "warning"
    assert injected["rules"]["status"] == "missing"
    # Without the flag, no JSON and no logging noise on stderr.
    quiet = subprocess.run(
        run,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert not any(line.startswith("{") for line in quiet.stderr.splitlines())
    assert "system prompt injected" not in quiet.stderr
