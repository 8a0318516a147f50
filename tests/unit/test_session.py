"""Re-injection in long sessions (seed 004 Req 3, 4): the pure decision, settings, sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from promptdeck.core.agents.base import check_session_id, is_session_id
from promptdeck.core.errors import UsageError
from promptdeck.core.project.config import Config
from promptdeck.core.run.runner import start_run
from promptdeck.core.run.session import (
    ENV_ENABLED,
    ENV_TURNS,
    ReinjectionSettings,
    Session,
    SessionState,
    advance,
    decide_reinjection,
    load_session,
    reinjection_settings,
    reinjection_text,
)
from test_runner import compose, make_workspace

ON = ReinjectionSettings(enabled=True, turns=15)


def _run_turns(settings: ReinjectionSettings, usages: list[float | None]) -> list[str | None]:
    """Triggers over a sequence of turns, given the context use after each."""
    state = SessionState()
    triggers: list[str | None] = []
    for used in usages:
        decision = decide_reinjection(settings, state)
        triggers.append(decision.trigger)
        state = advance(state, decision, used)
    return triggers


def test_first_turn_is_the_initial_injection_not_a_re_injection() -> None:
    decision = decide_reinjection(ON, SessionState())
    assert not decision.reinject


def test_without_usage_every_n_turns() -> None:
    triggers = _run_turns(ON, [None] * 46)
    fired = [i + 1 for i, t in enumerate(triggers) if t]
    # Turn 1 injects; turns 16 and 31 and 46 re-inject (15 turns since the last injection).
    assert fired == [16, 31, 46]
    assert {t for t in triggers if t} == {"turns"}


def test_the_sixteenth_turn_reinjects_with_defaults() -> None:
    state = SessionState(turns=15, turns_since_injection=15)
    decision = decide_reinjection(ReinjectionSettings(), state)
    assert decision.reinject and decision.trigger == "turns" and "15 turns" in decision.detail


def test_context_thresholds_fire_once_each() -> None:
    usages = [0.1, 0.2, 0.26, 0.3, 0.49, 0.51, 0.6, 0.76, 0.8, 0.9]
    triggers = _run_turns(ReinjectionSettings(turns=100), usages)
    # Decided before turn n from the use after turn n-1.
    assert triggers == [None, None, None, "context", None, None, "context", None, "context", None]


def test_several_thresholds_crossed_at_once_fire_once() -> None:
    state = SessionState(turns=3, turns_since_injection=3, context_used=0.8)
    decision = decide_reinjection(ON, state)
    assert decision.reinject and decision.crossed == (0.25, 0.5, 0.75)
    after = advance(state, decision, 0.82)
    assert not decide_reinjection(ON, after).reinject


def test_thresholds_rearm_after_the_context_shrinks() -> None:
    state = SessionState(turns=5, turns_since_injection=1, context_used=0.3, crossed=(0.25, 0.5))
    decision = decide_reinjection(ON, state)
    assert not decision.reinject and decision.crossed == (0.25,)
    later = advance(state, decision, 0.55)
    assert decide_reinjection(ON, later).trigger == "context"


def test_turn_rule_still_applies_when_usage_is_known() -> None:
    state = SessionState(turns=20, turns_since_injection=15, context_used=0.1)
    assert decide_reinjection(ON, state).trigger == "turns"


def test_disabled_never_reinjects() -> None:
    off = ReinjectionSettings(enabled=False, turns=1)
    assert _run_turns(off, [0.9, 0.95, None, 0.99, None]) == [None] * 5


def test_advance_counts_turns_since_injection() -> None:
    state = advance(SessionState(), decide_reinjection(ON, SessionState()), None)
    assert (state.turns, state.turns_since_injection) == (1, 1)
    state = advance(state, decide_reinjection(ON, state), 0.1)
    assert (state.turns, state.turns_since_injection, state.context_used) == (2, 2, 0.1)


def test_settings_from_config_and_environment() -> None:
    config = Config(session_reinjection_enabled=True, session_reinjection_turns=15)
    assert reinjection_settings(config, {}) == ReinjectionSettings(True, 15)
    env = {ENV_ENABLED: "false", ENV_TURNS: "4"}
    settings = reinjection_settings(config, env)
    assert (settings.enabled, settings.turns) == (False, 4)
    assert settings.overrides == (ENV_ENABLED, ENV_TURNS)
    line = settings.describe()
    assert "enabled=false" in line and "turns=4" in line and "25%" in line and ENV_TURNS in line
    from_config = reinjection_settings(Config(session_reinjection_enabled=False), {})
    assert not from_config.enabled and "from config)" in from_config.describe()
    for bad in ({ENV_ENABLED: "maybe"}, {ENV_TURNS: "0"}, {ENV_TURNS: "x"}):
        with pytest.raises(UsageError):
            reinjection_settings(config, bad)


def test_reinjection_text_reads_files_fresh_instructions_first(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    text, versions, warnings = reinjection_text(ws)
    assert text.index("<instructions>") < text.index("</instructions>")
    assert "<workspace_rules" not in text and warnings and "rules" in warnings[0]
    assert versions[1].status == "missing"
    rules = tmp_path / ".promptdeck" / "rules.md"
    rules.write_text("Rule one: keep it small.\n")
    text, versions, warnings = reinjection_text(ws)
    assert text.index("</instructions>") < text.index("Rule one") and not warnings
    first_hash = versions[1].sha256
    rules.write_text("Rule two.\n")
    text, versions, _ = reinjection_text(ws)
    assert "Rule two." in text and "Rule one" not in text and versions[1].sha256 != first_hash
    assert versions[0].sha256 and versions[1].mtime is not None


def test_session_turns_resume_and_reinject(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    (tmp_path / ".promptdeck" / "rules.md").write_text("Always run the tests.\n")
    logs: list[str] = []
    session = Session(ws, "1.2", "dev", settings=ReinjectionSettings(turns=2), log=logs.append)
    assert logs[0].startswith("re-injection settings: enabled=true turns=2")
    sent: list[str] = []
    for message in ("hello", "second", "third", "fourth"):
        prompt = compose(ws)
        plan = session.plan(message, prompt.user)
        result = start_run(
            ws,
            prompt,
            agent="replay",
            use_git=False,
            resume_session=None if plan.initial else session.session_id,
            turn=session.state.turns + 1,
            user_text=plan.user_text,
        ).wait(60)
        sent.append((result.run_dir / "user.md").read_text())
        session.finish(plan, result.run_dir, result.session_id, None)
    assert sent[0].startswith(compose(ws).user) and sent[0].endswith("hello")
    assert sent[1] == "second"
    assert sent[2].startswith("<system_reminder>") and "Always run the tests." in sent[2]
    assert sent[2].endswith("third") and sent[3] == "fourth"
    counters = session.counters
    assert (counters.initial_injections, counters.reinjections, counters.failures) == (1, 1, 0)
    assert any("trigger turns" in line for line in logs)
    assert any(".promptdeck/rules.md [ok] sha256=" in line for line in logs)
    saved = json.loads((result.run_dir / "session.json").read_text())
    assert saved["state"]["turns"] == 4 and saved["counters"]["reinjections"] == 1
    assert (
        "re-injection #1"
        in (tmp_path / ".promptdeck" / "runs")
        .joinpath(
            sorted(p.name for p in (tmp_path / ".promptdeck" / "runs").iterdir())[2], "session.log"
        )
        .read_text()
    )
    again = Session(ws, "1.2", "dev", settings=ReinjectionSettings(turns=2), log=logs.append)
    assert again.session_id == session.session_id and again.state.turns == 4


def test_a_shipped_record_never_resumes_with_a_flag_nor_breaks_the_session(
    tmp_path: Path,
) -> None:
    # Run records are files a repository can commit: what they say is checked, not obeyed.
    ws = make_workspace(tmp_path, git=False)
    result = start_run(ws, compose(ws), agent="replay", use_git=False).wait(60)
    assert result.session_id is not None and is_session_id(result.session_id)
    assert load_session(ws.root, "1.2", "dev")[0] == result.session_id

    (result.run_dir / "session.json").write_text(
        '{"state": {"turns": "x"}, "counters": {"nope": 1}}', encoding="utf-8"
    )
    session_id, state, _ = load_session(ws.root, "1.2", "dev")
    assert session_id == result.session_id and state.turns == 1  # read as a plain run

    record = json.loads((result.run_dir / "result.json").read_text(encoding="utf-8"))
    record["session_id"] = '--settings={"hooks":{"SessionStart":[]}}'
    (result.run_dir / "result.json").write_text(json.dumps(record), encoding="utf-8")
    assert load_session(ws.root, "1.2", "dev")[0] is None


def test_session_ids_are_ids_and_the_agents_refuse_anything_else() -> None:
    assert is_session_id("0199a213-81c0-7800-8aa1-bbab2a035a53")
    assert is_session_id("sess_abc-123")
    for bad in ("", "--settings={}", "-x", "a b", "a;b", "x" * 129):
        assert not is_session_id(bad)
    with pytest.raises(UsageError, match="not a session id"):
        check_session_id("--settings={}")


def test_a_left_out_rules_layer_stays_out_of_the_reminders(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    (tmp_path / ".promptdeck" / "rules.md").write_text("Always run the tests.\n")
    session = Session(ws, "1.2", "dev", settings=ReinjectionSettings(turns=1), log=lambda _: None)
    rules = compose(ws).rules
    assert rules is not None and rules.present
    first = session.plan("hello", "task", rules)
    session.finish(first, tmp_path, "0199a213-81c0-7800-8aa1-bbab2a035a53", None)
    kept = session.plan("again", "task", rules)
    assert kept.user_text.startswith("<system_reminder>")
    assert "Always run the tests." in kept.user_text
    left = session.plan("again", "task", rules.leave_out())
    assert left.user_text.startswith("<system_reminder>")
    assert "Always run the tests." not in left.user_text
    assert left.rules_status == "left-out"
