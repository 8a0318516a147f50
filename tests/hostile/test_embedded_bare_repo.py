"""git as promptdeck runs it starts none of a repository's programs: a bare repository committed
inside a plan folder never becomes *the* repository (promptdeck's git uses the ``.git`` found
walking up, named explicitly), and the repository's own ``core.fsmonitor``, ``core.hooksPath``
and hooks never run — not while a replay run looks at git, not when it stages and commits."""

from __future__ import annotations

import json
from pathlib import Path

from _run_helpers import STORY, cli, cloned_workspace, git

PLAN_STORY = "plan/_bmad-output/implementation-artifacts/1-1-parse-lines.md"


def _fsmonitor(marker: Path) -> str:
    # A command git runs through the shell whenever it would ask a file-system monitor.
    return f'"touch {marker}"'


def _bare_repo_files(marker: Path) -> dict[str, str]:
    """The files of a bare repository, committed as plain files of the plan folder."""
    return {
        "plan/HEAD": "ref: refs/heads/main\n",
        "plan/objects/info/.keep": "",
        "plan/refs/heads/.keep": "",
        "plan/config": (
            "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
            f"\tfsmonitor = {_fsmonitor(marker)}\n"
        ),
        "plan/hooks/pre-commit": f"#!/bin/sh\ntouch {marker}\n",
    }


def _hostile_clone(tmp_path: Path, marker: Path, config: str, *, bare: bool = True) -> Path:
    files = {PLAN_STORY: STORY, "README.md": "# web\n"}
    if bare:
        files.update(_bare_repo_files(marker))
    files["plan/.promptdeck/config.toml"] = config
    root = cloned_workspace(tmp_path, files)
    # The clone's own .git/config, as a repository set up by someone else would have it.
    hooks = root / "hooks-dir"
    hooks.mkdir()
    for name in ("pre-commit", "commit-msg", "post-commit", "post-index-change"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
        hook.chmod(0o755)
        own = root / ".git" / "hooks" / name
        own.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
        own.chmod(0o755)
    with (root / ".git" / "config").open("a", encoding="utf-8") as handle:
        handle.write(f"[core]\n\tfsmonitor = {_fsmonitor(marker)}\n\thooksPath = {hooks}\n")
    if bare:
        (root / "plan" / "hooks" / "pre-commit").chmod(0o755)
    return root


def test_a_replay_run_from_the_plan_folder_runs_no_program_of_either_repository(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran-a-repository-program"
    root = _hostile_clone(tmp_path, marker, "[agent]\nreplay_delay = 0.0\n")
    plan = root / "plan"
    done = cli(plan, "run", "1-1", "--phase", "dev", "--agent", "replay", cwd=plan)
    assert done.code == 0, done.stderr
    done = cli(root, "run", "1-1", "--phase", "review", "--agent", "replay", "--root", "plan")
    assert done.code == 0, done.stderr
    assert not marker.exists(), "a program named by the repository's git config ran"


def test_a_replay_run_that_commits_runs_no_hook_and_commits_to_the_found_git(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran-a-repository-program"
    config = '[agent]\ndefault = "replay"\nreplay_git = true\nreplay_delay = 0.0\n'
    root = _hostile_clone(tmp_path, marker, config)
    head = git(root, "rev-parse", "HEAD")
    done = cli(root / "plan", "run", "1-1", "--auto", cwd=root / "plan")
    assert done.code == 0, done.stderr
    assert not marker.exists(), "a hook or fsmonitor of the repository ran"
    # The commit went to the repository found walking up, on top of the clone's HEAD.
    assert git(root, "rev-parse", "HEAD~1").strip() == head.strip()
    assert git(root, "log", "-1", "--format=%s").strip() == "feat(1-1): Parse lines"


def test_the_git_step_runs_neither_fsmonitor_nor_hooks_of_the_clone_s_own_config(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran-a-repository-program"
    config = '[agent]\ndefault = "replay"\nreplay_git = true\nreplay_delay = 0.0\n'
    root = _hostile_clone(tmp_path, marker, config, bare=False)
    done = cli(root, "run", "1-1", "--auto", "--root", "plan")
    assert done.code == 0, done.stderr
    assert git(root, "log", "-1", "--format=%s").strip() == "feat(1-1): Parse lines"
    assert not marker.exists(), "a hook or fsmonitor named by .git/config ran"


def test_a_signing_program_of_the_repository_s_own_config_never_runs(tmp_path: Path) -> None:
    # `commit.gpgSign` with a `gpg.program` (or `gpg.ssh.defaultKeyCommand`) of the
    # repository's own config: a signed commit would run it. The commit is made unsigned, and
    # the run says why.
    marker = tmp_path / "ran-a-repository-program"
    config = '[agent]\ndefault = "replay"\nreplay_git = true\nreplay_delay = 0.0\n'
    root = _hostile_clone(tmp_path, marker, config, bare=False)
    signer = tmp_path / "signer"
    signer.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n", encoding="utf-8")
    signer.chmod(0o755)
    with (root / ".git" / "config").open("a", encoding="utf-8") as handle:
        handle.write(f'[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {signer}\n[gpg "ssh"]\n')
        handle.write(f"\tdefaultKeyCommand = {signer}\n")
    done = cli(root, "run", "1-1", "--auto", "--root", "plan")
    assert done.code == 0, done.stderr
    assert git(root, "log", "-1", "--format=%s").strip() == "feat(1-1): Parse lines"
    assert not marker.exists(), "a signing program named by .git/config ran"
    [review] = (root / "plan" / ".promptdeck" / "runs").glob("*-review-*/result.json")
    warnings = json.loads(review.read_text(encoding="utf-8"))["warnings"]
    assert any("gpg.program" in w and "the commit was not signed" in w for w in warnings)
