"""The codex backend with protected files: a permission profile that makes them read-only.

What Codex does with the profile was measured against the real client (see
``core/agents/codex_profile.py``); these tests pin what promptdeck writes and passes.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from promptdeck.core.agent_names import CODEX_BIN_ENV
from promptdeck.core.agents import codex_profile
from promptdeck.core.agents.base import LaunchRequest
from promptdeck.core.agents.codex import CodexAgent
from promptdeck.core.agents.codex_profile import PROFILE_FILE
from promptdeck.core.project.config import Config

SYSTEM = ' "quotes", back\\slash, ü\n\n'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.delenv(CODEX_BIN_ENV, raising=False)
    return codex_home


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "_bmad-output" / "implementation-artifacts").mkdir(parents=True)
    (project / "_bmad-output" / "implementation-artifacts" / "sprint-status.yaml").write_text("")
    return project


SPRINT = "_bmad-output/implementation-artifacts/sprint-status.yaml"


def _request(root: Path, *protected: str, resume: str | None = None) -> LaunchRequest:
    run_dir = root.parent / "runs" / "20260101-000000-1.2-dev"
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "system.md").write_bytes(SYSTEM.encode("utf-8"))
    (run_dir / "user.md").write_bytes(b"Implement story 1-2.")
    return LaunchRequest(
        run_dir=run_dir,
        root=root,
        story_id="1.2",
        phase="dev",
        resume_session=resume,
        protected_paths=protected,
    )


def _profile(request: LaunchRequest) -> dict[str, object]:
    return tomllib.loads((request.run_dir / PROFILE_FILE).read_text(encoding="utf-8"))


def _read_only(profile: dict[str, object]) -> dict[str, str]:
    permissions = profile["permissions"]["promptdeck"]  # type: ignore[index]
    assert permissions["extends"] == ":workspace"
    return permissions["filesystem"][":project_roots"]  # type: ignore[no-any-return]


def test_protected_files_are_read_only_in_a_permission_profile_instead_of_s(
    root: Path, home: Path
) -> None:
    request = _request(root, SPRINT, "tickets.toml", ".promptdeck/config.toml")
    (root / ".promptdeck").mkdir()
    spec = CodexAgent(Config()).launch(request)
    # --sandbox would override the permission profile: it is not passed.
    assert "-s" not in spec.argv and "workspace-write" not in spec.argv
    assert spec.argv[-3:-1] == ("-p", spec.argv[-2]) and spec.argv[-1] == "-"
    profile = _profile(request)
    assert profile["developer_instructions"] == SYSTEM  # the system prompt, still exact
    assert profile["default_permissions"] == "promptdeck"
    assert _read_only(profile) == {
        SPRINT: "read",
        "tickets.toml": "read",  # missing, in an existing folder: it cannot be created
        ".promptdeck/config.toml": "read",
    }
    assert spec.warnings == ()


def test_nothing_protected_keeps_todays_argv_and_profile(root: Path, home: Path) -> None:
    request = _request(root)
    spec = CodexAgent(Config()).launch(request)
    assert spec.argv[3:5] == ("-s", "workspace-write")
    assert set(_profile(request)) == {"developer_instructions"}
    assert spec.warnings == ()


@pytest.mark.parametrize(
    "args",
    [
        ("-s", "danger-full-access"),
        ("--sandbox=workspace-write",),
        ("-c", "sandbox_workspace_write.network_access=true"),
        ("-c", 'default_permissions="mine"'),
    ],
)
def test_a_sandbox_chosen_in_codex_args_is_kept_with_one_warning(
    root: Path, home: Path, args: tuple[str, ...]
) -> None:
    request = _request(root, SPRINT)
    spec = CodexAgent(Config(agent_codex_args=args)).launch(request)
    assert "default_permissions" not in _profile(request)
    unprotected = CodexAgent(Config(agent_codex_args=args)).launch(_request(root))
    assert spec.argv == unprotected.argv  # the launch of today, the user's choice kept
    assert len(spec.warnings) == 1
    assert spec.warnings[0].startswith("codex: 1 protected file(s) stay writable")
    assert "agent.codex_args set the sandbox" in spec.warnings[0]


def test_other_sandboxes_keep_their_flag(root: Path, home: Path) -> None:
    read_only = CodexAgent(Config(agent_codex_sandbox="read-only")).launch(_request(root, SPRINT))
    assert read_only.argv[3:5] == ("-s", "read-only")
    assert read_only.warnings == ()  # nothing is writable: nothing to warn of
    full = CodexAgent(Config(agent_codex_sandbox="danger-full-access")).launch(
        _request(root, SPRINT)
    )
    assert full.argv[3:5] == ("-s", "danger-full-access")
    assert "sandbox danger-full-access" in full.warnings[0]


def test_paths_no_entry_can_name_are_left_out_with_one_warning(root: Path, home: Path) -> None:
    request = _request(root, SPRINT, "docs/*.md", "new-folder/plan.md", "../out.md", "a\nb")
    spec = CodexAgent(Config()).launch(request)
    assert _read_only(_profile(request)) == {SPRINT: "read"}
    assert len(spec.warnings) == 1
    warning = spec.warnings[0]
    assert warning.startswith("codex: 4 protected file(s) stay writable")
    assert "'docs/*.md'" in warning and "\n" not in warning


def test_names_toml_would_misread_are_quoted(root: Path, home: Path) -> None:
    (root / "a b").mkdir()
    request = _request(root, 'a b/say "hi" (1).md', "ü.md")
    CodexAgent(Config()).launch(request)
    assert _read_only(_profile(request)) == {'a b/say "hi" (1).md': "read", "ü.md": "read"}


def test_past_the_most_guarded_files_the_sprint_status_comes_first(
    root: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codex_profile, "MOST_GUARDED_PATHS", 2)
    text, left_out = codex_profile.guard_text(root, ("a.md", "b.md", SPRINT, "c.md"))
    assert _read_only(tomllib.loads(text)) == {SPRINT: "read", "a.md": "read"}
    assert left_out == ("b.md", "c.md")


def test_a_resumed_turn_gets_a_profile_holding_only_the_guard(root: Path, home: Path) -> None:
    request = _request(root, SPRINT, resume="thread-1")
    spec = CodexAgent(Config()).launch(request)
    assert spec.argv[-5:] == ("-p", spec.argv[-4], "resume", "thread-1", "-")
    assert "-s" not in spec.argv
    profile = _profile(request)
    assert "developer_instructions" not in profile  # the thread replays it by itself
    assert _read_only(profile) == {SPRINT: "read"}
    assert spec.scope is not None
    with spec.scope() as link:
        assert Path(link).resolve() == (request.run_dir / PROFILE_FILE).resolve()
    assert not any(home.iterdir())


def test_a_resumed_turn_with_nothing_protected_is_unchanged(root: Path, home: Path) -> None:
    spec = CodexAgent(Config()).launch(_request(root, resume="thread-1"))
    assert spec.argv[-3:] == ("resume", "thread-1", "-")
    assert "-p" not in spec.argv and spec.scope is None


def test_a_workspace_reached_through_a_link_is_guarded(root: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(root)
    (root / "real").mkdir()
    (root / "linked").symlink_to(root / "real")
    text, left_out = codex_profile.guard_text(link, ("tickets.toml", SPRINT, "linked/x.md"))
    assert _read_only(tomllib.loads(text)) == {SPRINT: "read", "tickets.toml": "read"}
    # A folder of the project that is a link may lead anywhere: left to the after-check.
    assert left_out == ("linked/x.md",)
