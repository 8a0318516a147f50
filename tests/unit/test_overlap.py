"""The predicted-overlap matrix: footprints from the plan's words, the pairs that may not run
together, v7 ``after`` as prerequisites, and the waves."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from builders import make_workspace
from promptdeck.core.fleet.overlap import (
    Footprint,
    clean_path,
    epic_overlap,
    overlaps,
    paths_in,
    waves,
)
from promptdeck.core.project.workspace import Workspace, open_workspace

LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
ART = "_bmad-output/implementation-artifacts"
SPRINT = """development_status:
  epic-1: in-progress
  1-1-login: ready-for-dev
  1-2-logout: ready-for-dev
  1-3-profile: ready-for-dev
  1-4-settings: ready-for-dev
"""


def story(number: int, title: str, body: str) -> str:
    return f"# Story 1.{number}: {title}\n\nStatus: ready-for-dev\n\n{body}"


def four_stories(root: Path) -> Workspace:
    """Four stories of epic 1; 1.1 and 1.3 both name ``src/session.py``."""
    return make_workspace(
        root,
        {
            f"{ART}/sprint-status.yaml": SPRINT,
            f"{ART}/1-1-login.md": story(
                1,
                "Login",
                "## Tasks / Subtasks\n\n- [ ] Add the form in `src/login.py`\n"
                "- [ ] Keep the session in src/session.py\n",
            ),
            f"{ART}/1-2-logout.md": story(
                2,
                "Logout",
                "## Dev Notes\n\n### File List\n\n- src/logout.py\n- tests/test_logout.py\n",
            ),
            f"{ART}/1-3-profile.md": story(
                3,
                "Profile",
                "## Code Map\n\n| file | why |\n|---|---|\n| `src/session.py` | reads the user |\n"
                "| `src/profile.py` | the page |\n",
            ),
            f"{ART}/1-4-settings.md": story(
                4, "Settings", "## Tasks / Subtasks\n\n- [ ] Add `src/settings.py`\n"
            ),
        },
    )


def test_paths_are_read_from_prose_and_nothing_outside_is_kept() -> None:
    assert paths_in("Add the form in `src/login.py` and docs/ notes, v1.2 and e.g. or") == [
        "src/login.py",
        "docs/",
    ]
    assert paths_in("see https://example.com/a.py") == []
    for bad in ("../etc/passwd", "/etc/passwd", "~/x.py", "a/../../b.py", "--flag/x.py"):
        assert clean_path(bad) is None, bad
    assert clean_path("./src//a.py") == "src/a.py"


def test_four_stories_two_naming_one_file_make_two_waves(tmp_path: Path) -> None:
    ws = four_stories(tmp_path)
    plan = epic_overlap(ws, "1")
    feet = {f.story: f for f in plan.footprints}
    assert feet["1-1"].paths == {"src/login.py", "src/session.py"}
    assert feet["1-2"].sources == ("file list",)
    assert feet["1-3"].paths == {"src/session.py", "src/profile.py"}
    assert [(o.first, o.second, o.shared) for o in plan.overlaps] == [
        ("1-1", "1-3", ("src/session.py",))
    ]
    assert plan.waves == (("1-1", "1-2", "1-4"), ("1-3",))


def test_a_story_with_no_known_footprint_runs_alone() -> None:
    feet = [
        Footprint("a", frozenset({"x.py"})),
        Footprint("b", frozenset()),
        Footprint("c", frozenset({"y.py"})),
    ]
    shaped, problems = waves(feet, overlaps(feet))
    assert shaped == (("a", "c"), ("b",)) and problems == ()


def test_a_folder_meets_the_files_inside_it() -> None:
    feet = [Footprint("a", frozenset({"src/"})), Footprint("b", frozenset({"src/x/y.py"}))]
    [pair] = overlaps(feet)
    assert pair.shared == ("src/x/y.py",)


def test_prerequisites_come_in_earlier_waves_and_a_cycle_is_named() -> None:
    feet = [
        Footprint("1-1", frozenset({"a.py"}), after=("1-2",)),
        Footprint("1-2", frozenset({"b.py"}), after=("1-1",)),
        Footprint("1-3", frozenset({"c.py"}), after=("9-9",)),
    ]
    shaped, problems = waves(feet, overlaps(feet))
    assert shaped == (("1-2", "1-3"), ("1-1",))
    assert any("cycle" in p for p in problems) and any("9-9" in p for p in problems)


def test_v7_after_orders_two_stories(tmp_path: Path) -> None:
    shutil.copytree(LAYOUTS / "v7-initiative", tmp_path / "v7")
    ws = open_workspace(tmp_path / "v7")
    plan = epic_overlap(ws, "1")
    feet = {f.story: f for f in plan.footprints}
    assert feet["1-2"].after == ("1-1",)
    assert plan.wave_of("1-2") > plan.wave_of("1-1")


def test_plan_overlap_on_the_command_line(tmp_path: Path) -> None:
    from in_process import cli_in_process

    four_stories(tmp_path)
    shown = cli_in_process(tmp_path, "plan", "--epic", "1", "--overlap")
    assert shown.returncode == 0, shown.stderr
    assert "overlap\t1-1 × 1-3\tsrc/session.py" in shown.stdout
    assert "wave 2\t1-3" in shown.stdout
    data = json.loads(cli_in_process(tmp_path, "plan", "--epic", "1", "--overlap", "--json").stdout)
    assert data["waves"] == [["1-1", "1-2", "1-4"], ["1-3"]]
    missing = cli_in_process(tmp_path, "plan", "--epic", "7", "--overlap")
    assert missing.returncode == 2 and "no stories in epic '7'" in missing.stderr
