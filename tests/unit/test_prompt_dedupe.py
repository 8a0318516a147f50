"""Each fact once: no composed prompt holds the same paragraph of a story's own files twice.

A story file (BMAD) or a change's spec (OpenSpec) is injected whole; the story prompt points to
it rather than copying its task list or scenarios next to it. Checked on the demo workspace and
on the real-project fixtures, for every phase.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from promptdeck.core.demo.bundle import prepare_demo
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
PHASES = ("kickoff", "dev", "review", "failure", "uat", "retro")
_CHECKBOX = re.compile(r"^\s*[-*+]\s+\[[ xX]\]\s+\S")
MIN_PARAGRAPH = 24
"""Shorter blocks (``## Tasks``, ``Status: done``) may repeat legitimately as headings."""


def paragraphs(text: str) -> list[str]:
    """The blank-line separated blocks of ``text``, and every checkbox line on its own."""
    blocks = [block.strip() for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n"))]
    lines = [line.strip() for line in text.splitlines() if _CHECKBOX.match(line)]
    return [block for block in (*blocks, *lines) if len(block) >= MIN_PARAGRAPH]


def occurrences(text: str, paragraph: str) -> int:
    """How often ``paragraph`` stands as whole lines of ``text`` (``# Story 1.1: X`` is not
    counted inside ``### Story 1.1: X``)."""
    return len(re.findall(r"(?m)^[ \t]*" + re.escape(paragraph) + r"[ \t]*$", text))


def workspaces(tmp_path: Path) -> list[Workspace]:
    found = [open_workspace(prepare_demo(tmp_path / "demo"))]
    for name in sorted(p.name for p in REAL.iterdir() if p.is_dir()):
        shutil.copytree(REAL / name, tmp_path / name)
        found.append(Workspace(root=(tmp_path / name).resolve(), config=Config()))
    return found


def test_no_prompt_holds_a_paragraph_of_a_story_file_twice(tmp_path: Path) -> None:
    checked = 0
    for workspace in workspaces(tmp_path):
        catalog = load_catalog(workspace)
        for story in catalog.stories:
            own = [f for f in (story.path, *story.files) if f]
            texts = {
                f: (workspace.root / f).read_text(encoding="utf-8")
                for f in own
                if (workspace.root / f).is_file()
            }
            for phase in PHASES:
                prompt = compose_prompt(
                    workspace, catalog, PromptRequest(story.id, phase=phase), count_tokens=False
                )
                others = [
                    (workspace.root / f.path).read_text(encoding="utf-8")
                    for f in prompt.injection.included()
                ]
                for name, text in texts.items():
                    for paragraph in paragraphs(text):
                        count = occurrences(prompt.system, paragraph)
                        # Another injected file may hold the same words (a shared heading
                        # of an epic's story files): each file may say it once.
                        allowed = max(1, sum(occurrences(other, paragraph) for other in others))
                        assert count <= allowed, (
                            f"{workspace.root.name} {story.id} {phase}: a paragraph of {name} "
                            f"appears {count} times:\n{paragraph[:200]}"
                        )
                        checked += 1
    assert checked > 1000  # the check saw real content, not empty stories


@pytest.mark.parametrize("phase", ["dev", "kickoff", "review", "failure"])
def test_the_story_file_is_still_in_the_prompt_once(tmp_path: Path, phase: str) -> None:
    root = tmp_path / "todo"
    shutil.copytree(REAL / "bmad-todo-app", root)
    workspace = Workspace(root=root.resolve(), config=Config())
    prompt = compose_prompt(workspace, None, PromptRequest("5-4", phase=phase), count_tokens=False)
    story_file = (root / prompt.story.path).read_text()  # type: ignore[operator]
    assert prompt.system.count(story_file) == 1
    for task in ("Task 1: contrast audit (AC: #1)", "Task 2: reduced motion (AC: #1)"):
        assert prompt.system.count(task) == 1
