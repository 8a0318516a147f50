"""Golden files of the prompts composed for the demo workspace's stories.

Any change to what agents are told — a template, the instructions, a phase's contract, the
story prompt, the demo's stories — changes a file under ``tests/golden/prompts/`` and so shows
up in review. Injected file contents are summarised (path and size) so the goldens stay small;
the envelope around them is kept byte for byte.

After a deliberate change, regenerate and read the diff before committing:

    PROMPTDECK_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_golden_prompts.py
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from promptdeck.core.demo.bundle import DEMO_SOURCE, installed_name
from promptdeck.core.injection.model import render_envelope
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "prompts"
UPDATE = os.environ.get("PROMPTDECK_UPDATE_GOLDEN") == "1"
STORY_PHASES = ("kickoff", "dev", "review", "failure")
EPIC_PHASES = ("uat", "retro")


def _copy(source: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(source.iterdir()):
        if entry.name == "__pycache__":
            continue
        destination = target / installed_name(entry.name)
        if entry.is_dir():
            _copy(entry, destination)
        else:
            shutil.copyfile(entry, destination)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("golden") / "ledgerline"
    _copy(DEMO_SOURCE, root)
    return root


def golden_text(prompt: ComposedPrompt) -> str:
    """The prompt as a reviewable document: layer table, system (files summarised), user."""
    injection = prompt.injection
    summary = render_envelope(
        (f.path, f"[{f.bytes:,} bytes of {f.path}]") for f in injection.included()
    )
    system = prompt.system.replace(injection.text, summary) if injection.text else prompt.system
    request = prompt.request
    lines = [
        f"<!-- golden prompt: story {prompt.story.id} · phase {request.phase} · "
        f"mode {request.mode}"
        + (f" · variant {prompt.variant}" if prompt.variant != "standard" else "")
        + (f" · summarised {', '.join(prompt.summarised)}" if prompt.summarised else "")
        + " -->",
        "<!-- layers:",
        *(
            f"  {x.layer_id} {x.title} · {x.source}{' (missing)' if x.missing else ''}"
            for x in prompt.layers
        ),
        "-->",
        "==== system ====",
        system,
        "==== user ====",
        prompt.user,
        "",
    ]
    return "\n".join(lines)


def cases(root: Path) -> list[tuple[str, PromptRequest]]:
    workspace = open_workspace(root)
    catalog = load_catalog(workspace)
    found: list[tuple[str, PromptRequest]] = []
    groups: list[str] = []
    for story in catalog.stories:
        slug = story.id.replace(":", "-")
        for phase in STORY_PHASES:
            found.append((f"{slug}.{phase}", PromptRequest(story.id, phase=phase)))
        if story.group not in groups:
            groups.append(story.group)
            for phase in EPIC_PHASES:
                found.append((f"epic-{story.group}.{phase}", PromptRequest(story.id, phase=phase)))
    # Every party variant, for the first story of each source and its epic or change.
    for source in ("bmad", "openspec"):
        story = next(s for s in catalog.stories if s.source == source)
        slug = story.id.replace(":", "-")
        for phase in ("kickoff", "review", "failure"):
            found.append(
                (f"{slug}.party-{phase}", PromptRequest(story.id, phase=phase, variant="party"))
            )
        found.append(
            (
                f"epic-{story.group}.party-retro",
                PromptRequest(story.id, phase="retro", variant="party"),
            )
        )
    first = catalog.stories[0].id
    found.append(
        (
            f"{first.replace(':', '-')}.dev-retry",
            PromptRequest(first, mode="optimize", retry_reason="tests fail: rounding of 0.005"),
        )
    )
    return found


def test_golden_prompts_of_the_demo(demo: Path) -> None:
    workspace = open_workspace(demo)
    catalog = load_catalog(workspace)
    expected_names = set()
    mismatched: list[str] = []
    for name, request in cases(demo):
        expected_names.add(f"{name}.md")
        text = golden_text(compose_prompt(workspace, catalog, request, count_tokens=False))
        path = GOLDEN / f"{name}.md"
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        elif not path.is_file() or path.read_text(encoding="utf-8") != text:
            mismatched.append(name)
    if UPDATE:
        for stale in GOLDEN.glob("*.md"):
            if stale.name not in expected_names:
                stale.unlink()
    assert not mismatched, (
        f"composed prompts differ from tests/golden/prompts for: {', '.join(mismatched)}. "
        "If the change is deliberate, regenerate with PROMPTDECK_UPDATE_GOLDEN=1 and review "
        "the diff."
    )
    assert {p.name for p in GOLDEN.glob("*.md")} == expected_names


def test_golden_cover_every_phase_of_every_demo_story(demo: Path) -> None:
    names = {name for name, _ in cases(demo)}
    catalog = load_catalog(open_workspace(demo))
    assert len(catalog.stories) >= 6
    for story in catalog.stories:
        for phase in STORY_PHASES:
            assert f"{story.id.replace(':', '-')}.{phase}" in names
        for phase in EPIC_PHASES:
            assert f"epic-{story.group}.{phase}" in names


def test_no_demo_dev_prompt_carries_review_language(demo: Path) -> None:
    workspace = open_workspace(demo)
    catalog = load_catalog(workspace)
    for story in catalog.stories:
        prompt = compose_prompt(workspace, catalog, PromptRequest(story.id), count_tokens=False)
        for text in (prompt.system, prompt.user):
            assert "code review" not in text.lower(), story.id
            assert "severity" not in text.lower(), story.id
