"""Finding the plan in a hostile project: a BMAD setting that points outside the project, at a
FIFO, a device or nothing; a malformed, huge or endless ``core-config.yaml``; a tree of
100,000 files; a symlink out of the project; a repository whose git configuration names a
program. Each is one line naming the key and its ``file:line``; nothing outside is read; the
rest of the plan is still read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from builders import write_files
from promptdeck.core.plans import load_catalog
from promptdeck.core.project import load_config, open_workspace
from promptdeck.core.project.plan_location import SEARCH_LIMIT, search_plans
from promptdeck.core.tokens import ReadRecorder

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
SPRINT_STATUS = "development_status:\n  epic-1: in-progress\n  1-1-first: ready-for-dev\n"
STORY = "# Story 1.1: First\n\nStatus: ready-for-dev\n"
OUTSIDE_STORY = "# Story 9.9: Outside\n\nStatus: done\n"


def project_with_plan_in_docs(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write_files(
        root,
        {
            "docs/sprint-artifacts/sprint-status.yaml": SPRINT_STATUS,
            "docs/sprint-artifacts/1-1-first.md": STORY,
        },
    )
    write_files(tmp_path / "elsewhere", {"9-9-outside.md": OUTSIDE_STORY})
    os.mkfifo(root / "fifo")
    (root / "device").symlink_to("/dev/null")
    return root


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("{project-root}/../elsewhere", "points outside the project; not read"),
        ("ELSEWHERE", "points outside the project; not read"),
        ("{project-root}/fifo", "is not a folder (a file, device or FIFO); not read"),
        # A device is reached through a symlink (making one needs root): it leads outside.
        ("device", "points outside the project; not read"),
        ("{project-root}/missing", "does not exist"),
    ],
)
@pytest.mark.parametrize("generation", ["v4", "v5"])
def test_a_setting_that_cannot_be_used_is_one_line_and_the_plan_is_still_read(
    tmp_path: Path, value: str, why: str, generation: str
) -> None:
    root = project_with_plan_in_docs(tmp_path)
    value = value.replace("ELSEWHERE", str(tmp_path / "elsewhere"))
    if generation == "v4":
        config_file, key, line = ".bmad-core/core-config.yaml", "devStoryLocation", 2
        text = f"slashPrefix: BMad\ndevStoryLocation: '{value}'\n"
    else:
        config_file, key, line = "bmad/bmm/config.yaml", "sprint_artifacts", 3
        text = f"project_name: x\noutput_folder: docs\nsprint_artifacts: '{value}'\n"
    write_files(root, {config_file: text})
    recorder = ReadRecorder()
    with recorder.recording():
        workspace = open_workspace(root)
        catalog = load_catalog(workspace)
    assert workspace.config.paths_artifacts == "docs/sprint-artifacts"
    assert [s.id for s in catalog.stories] == ["1-1"]
    [problem] = [u for u in catalog.unreadable if u.path == config_file]
    # A long value (a deep temporary folder) is shown shortened to 80 characters.
    shown = value if len(value) <= 80 else value[:79] + "…"
    assert (problem.line, problem.reason) == (line, f"{key} '{shown}' {why}")
    assert (shown, f"{key} in {config_file}:{line}: {why}") in (workspace.config.plan_alternatives)
    outside = str(tmp_path / "elsewhere")
    assert not [p for p, how in recorder.paths if p.startswith(outside) and how == "list"]


def malformed_configs(tmp_path: Path) -> dict[str, tuple[bytes | str, str]]:
    """Each malformed ``core-config.yaml`` and what its problem line says."""
    return {
        "bad indentation": (
            "devStoryLocation: docs/stories\nprd:\n    prdFile: a.md\n  prdSharded: true\n",
            ".bmad-core/core-config.yaml:4",
        ),
        "a 5,000-digit number": (
            f"devStoryLocation: {'9' * 5000}\nprd:\n  prdVersion: {'7' * 5000}\n",
            ".bmad-core/core-config.yaml:1",
        ),
        "10 MB": ("x: " + "y" * (10 * 1024 * 1024) + "\n", ".bmad-core/core-config.yaml"),
        "nested 30,000 deep": ("a: " + "[" * 30_000 + "\n", ".bmad-core/core-config.yaml:1"),
        "not a mapping": ("- devStoryLocation\n", ".bmad-core/core-config.yaml:1"),
        "binary": (b"devStoryLocation: \x00\xff\n", ".bmad-core/core-config.yaml"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "bad indentation",
        "a 5,000-digit number",
        "10 MB",
        "nested 30,000 deep",
        "not a mapping",
        "binary",
    ],
)
def test_a_malformed_core_config_is_named_with_its_line_and_the_plan_found_anyway(
    tmp_path: Path, case: str
) -> None:
    root = project_with_plan_in_docs(tmp_path)
    text, where = malformed_configs(tmp_path)[case]
    path = root / ".bmad-core" / "core-config.yaml"
    path.parent.mkdir()
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    config = load_config(root)
    assert config.paths_artifacts == "docs/sprint-artifacts"
    problems = [(at, why) for at, why in config.bmad_problems if at.startswith(where)]
    assert len(problems) == 1, config.bmad_problems
    assert all(len(why) < 300 for _, why in config.bmad_problems)


def test_a_core_config_that_is_a_fifo_is_one_line_through_the_cli(tmp_path: Path) -> None:
    root = project_with_plan_in_docs(tmp_path)
    (root / ".bmad-core").mkdir()
    os.mkfifo(root / ".bmad-core" / "core-config.yaml")
    done = subprocess.run(
        [PROMPTDECK, "doctor", "--json", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PROMPTDECK_ANSWER_CACHE": "off"},
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    payload = json.loads(done.stdout)
    assert payload["plan"]["folder"] == "docs/sprint-artifacts"
    [line] = [u for u in payload["unreadable"] if u["path"] == ".bmad-core/core-config.yaml"]
    assert "FIFO" in line["reason"]
    assert [s["id"] for s in payload["stories"]] == ["1-1"]


@pytest.fixture
def quick_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder where 100,000 empty files are made in well under a second: memory when the
    machine offers it (a disk takes ten times as long), else the test's own folder."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="promptdeck-plan-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_docs_tree_of_100000_files_stops_the_search_and_says_so(quick_folder: Path) -> None:
    for group in range(100):
        folder = quick_folder / "docs" / f"part-{group:03}"
        folder.mkdir(parents=True)
        handle = os.open(folder, os.O_RDONLY)
        try:
            for number in range(1000):
                os.mknod(f"note-{number}.md", dir_fd=handle)
        finally:
            os.close(handle)
    recorder = ReadRecorder()
    with recorder.recording():
        config = load_config(quick_folder)
    assert config.plan_origin == (
        "default (the search found no plan); the search stopped after 20,000 entries of the"
        " project (set [paths] artifacts in .promptdeck/config.toml)"
    )
    # Bounded: about SEARCH_LIMIT entries over at most that many folders listed.
    listed = [p for p, how in recorder.paths if how == "list"]
    assert len(listed) <= SEARCH_LIMIT // 1000 + 3


def test_a_symlink_out_of_the_project_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_files(tmp_path / "outside" / "sprint-artifacts", {"sprint-status.yaml": SPRINT_STATUS})
    root.mkdir()
    (root / "docs").symlink_to(tmp_path / "outside")
    assert search_plans(root).candidates == ()
    assert load_config(root).paths_artifacts == "_bmad-output/implementation-artifacts"


def test_a_repository_naming_an_fsmonitor_program_never_starts_it(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_files(root, {"docs/sprint-artifacts/sprint-status.yaml": SPRINT_STATUS})
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    marker = tmp_path / "started"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    hook.chmod(0o755)
    subprocess.run(["git", "config", "core.fsmonitor", str(hook)], cwd=root, check=True, env=env)
    config = load_config(root)
    assert config.plan_origin == "found by search: docs/sprint-artifacts/sprint-status.yaml"
    assert not marker.exists()


TWO_PLANS = {
    "a/docs/sprint-artifacts/sprint-status.yaml": SPRINT_STATUS,
    "b/docs/sprint-artifacts/sprint-status.yaml": SPRINT_STATUS,
}


def git(root: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def marker_program(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A program that leaves a file behind when it runs, and that file."""
    marker = tmp_path / f"{name}-started"
    program = tmp_path / f"{name}.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n", encoding="utf-8")
    program.chmod(0o755)
    return program, marker


def test_a_repository_asking_to_verify_signatures_never_starts_its_gpg_program(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    write_files(root, TWO_PLANS)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "plans")
    # The last commit changes a plan and carries a signature: `git log` verifies it with the
    # program the repository's configuration names when `log.showSignature` is on.
    (root / "a/docs/sprint-artifacts/sprint-status.yaml").write_text(SPRINT_STATUS + "# a\n")
    git(root, "add", "-A")
    tree, parent = git(root, "write-tree"), git(root, "rev-parse", "HEAD")
    commit = (
        f"tree {tree}\nparent {parent}\nauthor t <t@t.invalid> 1700000000 +0000\n"
        "committer t <t@t.invalid> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n"
        "\nsigned\n"
    )
    signed = git(root, "hash-object", "-t", "commit", "-w", "--stdin", stdin=commit)
    git(root, "update-ref", "HEAD", signed)
    program, marker = marker_program(tmp_path, "gpg")
    git(root, "config", "log.showSignature", "true")
    git(root, "config", "gpg.program", str(program))
    found = search_plans(root)
    assert len(found.candidates) == 2
    assert not marker.exists()


def partial_clone(tmp_path: Path, files: dict[str, str], edits: list[str]) -> Path:
    """A clone holding no tree of any commit but the last: git fetches the others from its
    remote the first time it needs them (a "treeless" partial clone)."""
    source = tmp_path / "source"
    write_files(source, files)
    git(source, "init", "-q")
    git(source, "config", "uploadpack.allowFilter", "true")
    git(source, "add", "-A")
    git(source, "commit", "-qm", "first")
    for number in range(2):
        for rel in edits:
            with (source / rel).open("a", encoding="utf-8") as handle:
                handle.write(f"# edit {number}\n")
        git(source, "commit", "-qam", f"edit {number}")
    clone = tmp_path / "project"
    git(tmp_path, "clone", "-q", "--filter=tree:0", source.as_uri(), str(clone))
    return clone


def test_a_partial_clone_never_starts_the_program_its_remote_names(tmp_path: Path) -> None:
    clone = partial_clone(tmp_path, TWO_PLANS, list(TWO_PLANS))
    program, marker = marker_program(tmp_path, "upload-pack")
    # Fetching a missing tree runs the remote's upload-pack, which the repository may name.
    git(clone, "config", "remote.origin.uploadpack", str(program))
    found = search_plans(clone)
    assert len(found.candidates) == 2
    assert not marker.exists()


def test_the_staleness_of_an_epic_context_never_starts_a_program_of_a_partial_clone(
    tmp_path: Path,
) -> None:
    from promptdeck.core.plans.context_files import epic_context_newer
    from promptdeck.core.project.config import Config
    from promptdeck.core.project.workspace import Workspace

    art = "_bmad-output/implementation-artifacts"
    files = {
        f"{art}/epic-1-context.md": "# Epic 1 Context: First\n",
        "_bmad-output/planning-artifacts/epics.md": "## Epic 1: First\n",
    }
    clone = partial_clone(tmp_path, files, list(files))
    program, marker = marker_program(tmp_path, "upload-pack")
    git(clone, "config", "remote.origin.uploadpack", str(program))
    workspace = Workspace(root=clone.resolve(), config=Config())
    epic_context_newer(workspace, f"{art}/epic-1-context.md")
    assert not marker.exists()


@pytest.mark.parametrize("layer", ["_bmad/config.toml", "_bmad/custom/config.user.toml"])
def test_a_bmad_toml_holding_a_5000_digit_number_is_one_line(tmp_path: Path, layer: str) -> None:
    root = project_with_plan_in_docs(tmp_path)
    write_files(root, {layer: f"[core]\nsize = {'9' * 5000}\n"})
    config = load_config(root)
    assert config.paths_artifacts == "docs/sprint-artifacts"
    problems = [why for at, why in config.bmad_problems if at == layer]
    assert len(problems) == 1, config.bmad_problems
    assert len(problems[0]) < 300


def test_a_promptdeck_config_holding_a_5000_digit_number_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    from promptdeck.core.errors import ConfigError

    root = project_with_plan_in_docs(tmp_path)
    write_files(root, {".promptdeck/config.toml": f"[paths]\nartifacts = {'9' * 5000}\n"})
    with pytest.raises(ConfigError) as refused:
        load_config(root)
    assert len(str(refused.value)) < 300


LONG_GAP = " " * 1_000_000
V4_STORY = "docs/stories/1.1.first.md"
V5_STORY = "docs/sprint-artifacts/1-1-first.md"


@pytest.mark.parametrize(
    ("files", "story"),
    [
        (
            {
                ".bmad-core/core-config.yaml": "devStoryLocation: docs/stories\n",
                V4_STORY: f"# Story 1.1: First\n\n## Status\n\nDone{LONG_GAP}x\n",
            },
            "1-1",
        ),
        (
            {
                "docs/sprint-artifacts/sprint-status.yaml": SPRINT_STATUS,
                V5_STORY: f"# Story 1.1: First\n\nStatus: a{LONG_GAP}b\n",
            },
            "1-1",
        ),
        (
            {
                "docs/sprint-artifacts/sprint-status.yaml": (
                    f"development_status:\n  1-1-first: done{LONG_GAP}x\n"
                ),
            },
            "1-1",
        ),
        (
            {
                "docs/sprint-artifacts/sprint-status.yaml": SPRINT_STATUS,
                V5_STORY: (
                    f"# Story 1.1: First{LONG_GAP}x\n\nStatus: done\n\n## Tasks\n\n"
                    f"- [ ] one{LONG_GAP}x\n  - [x] two{LONG_GAP}x\n"
                ),
            },
            "1-1",
        ),
        (
            {
                # BMAD's YAML configuration is read a line at a time (at most 256 KB).
                "bmad/bmm/config.yaml": f"output_folder: a{' ' * 250_000}b\n",
                "docs/sprint-artifacts/sprint-status.yaml": SPRINT_STATUS,
            },
            "1-1",
        ),
    ],
    ids=["v4-status-section", "status-line", "sprint-status-value", "heading-tasks", "bmad-yaml"],
)
def test_a_line_holding_a_megabyte_of_spaces_is_read_at_once(
    tmp_path: Path, files: dict[str, str], story: str
) -> None:
    # The patterns reading a status, a heading, a task or a setting once took time growing
    # with the square of a run of spaces: hours for these.
    root = tmp_path / "project"
    write_files(root, files)
    done = subprocess.run(
        [PROMPTDECK, "stories", "--json", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PROMPTDECK_ANSWER_CACHE": "off"},
    )
    assert done.returncode == 0, done.stderr[-600:]
    assert [s["id"] for s in json.loads(done.stdout)["stories"]] == [story]


def test_writing_back_over_a_megabyte_status_line_changes_nothing(tmp_path: Path) -> None:
    from promptdeck.core.plans.writeback import set_story_file_status

    for text in (
        f"# Story 1.1: First\n\nStatus: a{LONG_GAP}b\n\n## Tasks\n",
        f"# Story 1.1: First\n\n## Status\n\nDone{LONG_GAP}x\n",
    ):
        assert set_story_file_status(text, "in-progress") is None
