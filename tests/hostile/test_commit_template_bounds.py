"""The commit template is the repository's: it is formatted by a bounded formatter — only
``{story}`` and ``{title}``, no conversion, a format spec at most a few hundred wide — so a
``{title:>1500000000}`` is refused in one line instead of allocating gigabytes at commit."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, cli, cloned_workspace, git
from promptdeck.core.errors import GitError
from promptdeck.core.run.gitops import commit_message

LIMIT = 512 * 1024 * 1024
PROBE = """
import sys
from promptdeck.core.errors import GitError
from promptdeck.core.run.gitops import commit_message
try:
    commit_message(sys.argv[1], "1-1", "Parse lines")
except GitError as exc:
    print("refused:", exc)
"""


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


@pytest.mark.parametrize(
    "template",
    [
        "feat({story}): {title:>1500000000}",
        "feat({story}): {title:.1500000000}{title:1500000000}",
        "{title:{story}}",
    ],
)
def test_a_huge_format_is_refused_without_allocating(template: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, template],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limited,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("refused: git.commit_template")


@pytest.mark.parametrize("template", ["{title!r}", "{title.__class__}", "{0}", "{ticket}"])
def test_only_the_two_fields_as_text(template: str) -> None:
    with pytest.raises(GitError, match=r"git\.commit_template"):
        commit_message(template, "1-1", "Parse")


def test_a_small_format_still_works() -> None:
    assert commit_message("feat({story}): {title:.5}", "1-1", "Parse lines") == "feat(1-1): Parse"


def test_a_run_with_a_huge_template_refuses_the_commit_in_one_line(tmp_path: Path) -> None:
    config = (
        '[agent]\ndefault = "replay"\nreplay_git = true\nreplay_delay = 0.0\n'
        '[git]\ncommit_template = "feat({story}): {title:>3000000000}"\n'
    )
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, ".promptdeck/config.toml": config})
    head = git(root, "rev-parse", "HEAD")
    done = cli(root, "run", "1-1", "--auto")
    assert done.code != 0
    refused = [line for line in done.lines if "git.commit_template" in line]
    assert refused and all(len(line) < 400 for line in refused), done.stderr
    assert git(root, "rev-parse", "HEAD") == head
