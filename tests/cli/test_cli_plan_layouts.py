"""``stories --json`` and ``inspect --json`` on the layout fixtures (tests/fixtures/layouts/)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"


def run(root: Path, *args: str) -> Any:
    env = {
        **os.environ,
        "COLUMNS": "200",
        "NO_COLOR": "1",
        "HOME": str(root.parent),
        "XDG_CONFIG_HOME": str(root.parent / "config"),
        "XDG_CACHE_HOME": str(root.parent / "cache"),
    }
    done = subprocess.run(
        [PROMPTDECK, *args, "--root", str(root), "--json"],
        capture_output=True,
        env=env,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def copy(tmp_path: Path, name: str) -> Path:
    shutil.copytree(LAYOUTS / name, tmp_path / name)
    return tmp_path / name


# name → {story id: (layout, status, status source)}; every story once, nothing else.
EXPECTED: dict[str, dict[str, tuple[str, str, str]]] = {
    "bmad-spec": {
        "spec-rate-limits:1": (
            "bmad-spec",
            "done",
            "_bmad-output/specs/spec-rate-limits/stories/1-token-bucket.md:4",
        ),
        "spec-rate-limits:2": (
            "bmad-spec",
            "review",
            "_bmad-output/specs/spec-rate-limits/stories/2-metrics.md:4",
        ),
        "spec-rate-limits:3": (
            "bmad-spec",
            "backlog",
            "_bmad-output/specs/spec-rate-limits/stories.yaml:8",
        ),
    },
    "v7-initiative": {
        "1-1": ("v7", "done", "initiative-checkout/epic-cart/story-add-to-cart-plan.md:3"),
        "1-2": ("v7", "waiting-on-design", "epic-cart/story-remove-item-plan.md:3"),
        "1-2a": ("v7", "review", "epic-cart/story-cart-badge-plan.md:3"),
        "1-3": ("v7", "backlog", "epic-cart/tickets.toml:22"),
        "2-1": ("v7", "in-progress", "epic-payment/story-card-form-plan.md:5"),
        "2-2": ("v7", "review", "epic-payment/bug-double-charge-plan.md:3"),
        "backlog:rounding": ("v7", "backlog", "_bmad-output/backlog/bug-rounding-plan.md:2"),
    },
    "openspec-1x": {
        "add-search:1": ("openspec", "in-progress", "add-search/tasks.md"),
        "add-search:2": ("openspec", "ready-for-dev", "add-search/tasks.md"),
        "lean-flow:1": ("openspec", "in-progress", "lean-flow/todo.md"),
        "new-idea": ("openspec", "backlog", "new-idea/.openspec.yaml"),
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_stories_json_lists_every_story_once_with_layout_status_and_source(
    tmp_path: Path, name: str
) -> None:
    payload = run(copy(tmp_path, name), "stories")
    listed = {s["id"]: s for s in payload["stories"]}
    assert len(listed) == len(payload["stories"])
    assert set(listed) == set(EXPECTED[name])
    for story_id, (layout, status, source) in EXPECTED[name].items():
        story = listed[story_id]
        assert (story["layout"], story["status"]) == (layout, status), story_id
        assert story["status_source"].endswith(source), (story_id, story["status_source"])


def test_stories_json_lists_the_v63_specs_and_the_unattached_quick_spec(tmp_path: Path) -> None:
    payload = run(copy(tmp_path, "v63-specs"), "stories")
    listed = {s["id"]: (s["layout"], s["status"]) for s in payload["stories"]}
    assert listed == {
        "1-1": ("classic", "done"),
        "1-2": ("spec", "in-progress"),
        "1-3": ("spec", "backlog"),
        "1-4": ("spec", "in-progress"),
        "2-1": ("spec", "backlog"),
        "3-1": ("spec", "backlog"),
    }
    assert payload["unattached"] == ["_bmad-output/implementation-artifacts/tech-spec-dark-mode.md"]


def story_rows(payload: Any) -> dict[str, tuple[str, str]]:
    return {
        f["path"]: (f["status"], f["reason"]) for f in payload["files"] if f["category"] == "story"
    }


def test_inspect_json_of_chosen_stories_lists_exactly_their_own_files(tmp_path: Path) -> None:
    root = copy(tmp_path, "v63-specs")
    art = "_bmad-output/implementation-artifacts"
    rows = story_rows(run(root, "inspect", "1-2"))
    assert set(rows) == {
        f"{art}/spec-1-2-password-reset.md",
        f"{art}/epic-1-context.md",
        "docs/architecture.md",
        "docs/api/errors.md",
    }
    assert rows["docs/architecture.md"] == ("included", "context: list")

    root = copy(tmp_path, "bmad-spec")
    folder = "_bmad-output/specs/spec-rate-limits"
    rows = story_rows(run(root, "inspect", "spec-rate-limits:2"))
    assert set(rows) == {
        f"{folder}/SPEC.md",
        f"{folder}/stories/2-metrics.md",
        f"{folder}/glossary.md",
    }
    assert rows[f"{folder}/glossary.md"] == ("included", "companions: list")

    root = copy(tmp_path, "v7-initiative")
    cart = "_bmad-output/initiative-checkout/epic-cart"
    rows = story_rows(run(root, "inspect", "1-2a"))
    assert set(rows) == {f"{cart}/story-cart-badge-plan.md", f"{cart}/epic-cart.md"}

    root = copy(tmp_path, "openspec-1x")
    rows = story_rows(run(root, "inspect", "lean-flow:1"))
    assert set(rows) == {"openspec/changes/lean-flow/brief.md"}


def test_inspect_leave_out_keeps_the_row_and_drops_the_text(tmp_path: Path) -> None:
    root = copy(tmp_path, "v63-specs")
    payload = run(root, "inspect", "1-2", "--leave-out", "docs/architecture.md")
    rows = story_rows(payload)
    assert rows["docs/architecture.md"] == ("excluded", "left out (context: list)")


def test_doctor_and_inspect_agree_on_a_story_three_specs_claim(tmp_path: Path) -> None:
    root = copy(tmp_path, "v63-specs")
    art = "_bmad-output/implementation-artifacts"
    doctor = run(root, "doctor")
    story = next(s for s in doctor["stories"] if s["id"] == "1-4")
    assert story["files"] == [f"{art}/spec-1-4-remember-me.md"]
    claims = {c["path"]: c["reason"] for c in story["second_claims"]}
    assert set(claims) == {f"{art}/spec-1-4-cookie-flags.md", f"{art}/spec-1-4-token-rotation.md"}
    unreadable = {u["path"]: u["reason"] for u in doctor["unreadable"] if u["key"] == "1-4"}
    assert unreadable == claims
    inspected = run(root, "inspect", "1-4")
    rows = story_rows(inspected)
    assert rows[f"{art}/spec-1-4-remember-me.md"][0] == "included"
    for path, reason in claims.items():
        assert rows[path] == ("excluded", reason)
    assert inspected["secrets"] == []


def test_doctor_shows_a_built_plan_as_review_with_the_word_and_its_source(
    tmp_path: Path,
) -> None:
    doctor = run(copy(tmp_path, "v7-initiative"), "doctor")
    badge = next(s for s in doctor["stories"] if s["id"] == "1-2a")
    assert (badge["status"], badge["status_known"]) == ("review", True)
    plan = "_bmad-output/initiative-checkout/epic-cart/story-cart-badge-plan.md:3"
    assert badge["status_source"] == plan
    assert (
        badge["status_note"]
        == f"plan status 'built' ({plan}) shown as review, as BMAD's board does"
    )
