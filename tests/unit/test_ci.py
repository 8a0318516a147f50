"""CI: an epic exported as a GitHub Actions workflow (checked for its structure: jobs, needs,
matrices, steps, the actions' documented inputs) and the jobs' artifacts read back as runs."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
import yaml
from promptdeck.core.errors import UsageError
from promptdeck.core.fleet import export_github, import_runs
from promptdeck.core.fleet.ci import ACTION_INPUTS, ACTIONS
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.records.reader import list_runs
from test_parallel import epic


def _workflow(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_the_workflow_runs_the_waves_story_by_phase(tmp_path: Path, agent: str) -> None:
    ws = epic(tmp_path)
    written = export_github(ws, "1", agent)
    assert written.waves == (("1-1", "1-2", "1-4"), ("1-3",))
    data = _workflow(written.workflow)
    assert data["on"] == {"workflow_dispatch": {}}
    jobs = data["jobs"]
    assert list(jobs) == ["wave-1-dev", "wave-1-review", "wave-2-dev", "wave-2-review"]
    assert "needs" not in jobs["wave-1-dev"]
    assert jobs["wave-1-review"]["needs"] == ["wave-1-dev"]
    assert jobs["wave-2-dev"]["needs"] == ["wave-1-review"]
    assert jobs["wave-2-review"]["needs"] == ["wave-2-dev"]
    for job_id, job in jobs.items():
        assert set(job.get("needs", [])) <= set(jobs)
        assert job["runs-on"] == "ubuntu-latest"
        include = job["strategy"]["matrix"]["include"]
        wave = written.waves[int(job_id.split("-")[1]) - 1]
        assert [entry["story"] for entry in include] == list(wave)
        phase = job_id.rsplit("-", 1)[1]
        for entry in include:
            folder = tmp_path / entry["dir"]
            assert entry["dir"].endswith(f"/{phase}")
            assert {p.name for p in folder.iterdir()} >= {"system.md", "user.md", "meta.json"}
        steps = job["steps"]
        assert all(("uses" in step) != ("run" in step) for step in steps)
        assert steps[0]["uses"].startswith("actions/checkout@")
        [action] = [s for s in steps if s.get("uses") == ACTIONS[agent]]
        assert set(action["with"]) - {"output-file"} == set(ACTION_INPUTS[agent])
        assert steps[-1]["uses"].startswith("actions/upload-artifact@")
        assert steps[-1]["if"] == "always()"
    # The payload is promptdeck's prompt, exactly.
    folder = tmp_path / ".promptdeck/ci/epic-1/1-2/dev"
    prompt = compose_prompt(
        ws, load_catalog(ws), PromptRequest(story_id="1-2", phase="dev"), count_tokens=False
    )
    assert (folder / "system.md").read_text() == prompt.system
    assert (folder / "user.md").read_text() == prompt.user
    if agent == "codex":
        config = tomllib.loads((folder / "codex-home" / "config.toml").read_text())
        assert config["developer_instructions"] == prompt.system
    else:
        [action] = [s for s in jobs["wave-1-dev"]["steps"] if s.get("uses") == ACTIONS[agent]]
        assert (
            "--append-system-prompt-file ${{ matrix.dir }}/system.md"
            in action["with"]["claude_args"]
        )
    # Exported again: the workflow promptdeck wrote is replaced, a foreign one never.
    export_github(ws, "1", agent)
    written.workflow.write_text("name: mine\n")
    with pytest.raises(UsageError, match="promptdeck did not write it"):
        export_github(ws, "1", agent)
    assert written.workflow.read_text() == "name: mine\n"


def _artifact(root: Path, name: str, story: str, phase: str, output: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    payload = root.parent / "project" / f".promptdeck/ci/epic-1/{story}/{phase}/meta.json"
    (folder / "meta.json").write_text(payload.read_text())
    (folder / "execution.json").write_text(json.dumps([{"type": "result", "result": output}]))
    (folder / "ci.json").write_text('{"conclusion": "success", "run": "42"}')
    return folder


def test_artifacts_are_read_back_and_bad_ones_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    ws = epic(project)
    export_github(ws, "1", "claude")
    downloads = tmp_path / "downloads"
    _artifact(downloads, "promptdeck-1-2-dev", "1-2", "dev", "Done.\nIMPLEMENTATION COMPLETE: 1.2")
    _artifact(downloads, "promptdeck-1-4-dev", "1-4", "dev", "I could not finish.")
    bad = downloads / "broken"
    bad.mkdir()
    (bad / "meta.json").write_text("{not json")
    linked = _artifact(downloads, "linked", "1-1", "dev", "x")
    (linked / "meta.json").unlink()
    outside = tmp_path / "outside.json"
    outside.write_text('{"story": "1-1", "phase": "dev"}')
    os.symlink(outside, linked / "meta.json")
    huge = _artifact(downloads, "huge", "1-1", "dev", "x")
    (huge / "execution.json").write_text("x" * (5 * 1024 * 1024))
    done = import_runs(ws, downloads)
    assert len(done.runs) == 2
    assert sorted(line.split(":")[0] for line in done.refused) == ["broken", "huge", "linked"]
    runs = {run.story: run for run in list_runs(project)}
    assert runs["1-2"].outcome == "success" and runs["1-2"].run_meta.mode == "ci"
    assert runs["1-4"].outcome == "no-signal"
    assert "1-1" not in runs


def test_the_cli_exports_and_imports(tmp_path: Path) -> None:
    from in_process import cli_in_process

    project = tmp_path / "project"
    project.mkdir()
    epic(project)
    shown = cli_in_process(project, "export", "--ci", "github", "--epic", "1", "--agent", "codex")
    assert shown.returncode == 0, shown.stderr
    assert "workflow\t.github/workflows/promptdeck-epic-1.yml" in shown.stdout
    downloads = tmp_path / "downloads"
    _artifact(downloads, "a", "1-3", "review", "REVIEW PASSED: 1.3")
    (downloads / "b").mkdir()
    imported = cli_in_process(project, "import-runs", str(downloads))
    assert imported.returncode == 2 and "b: meta.json" in imported.stderr
    assert imported.stdout.startswith("imported\t")
