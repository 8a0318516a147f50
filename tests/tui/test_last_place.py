"""The app reopens on the story and phase the user left, per project, kept in the user's state
folder (never the project); a place it cannot use opens the first story with one note."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.plans import load_catalog
from promptdeck.core.project import open_workspace
from promptdeck.tui.session.last_place import (
    FORMAT,
    NOTICE_SOURCE,
    LastPlace,
    PlaceKeeper,
    last_place_path,
    load_last_place,
    place_in,
    remember_last_place,
)


def test_a_place_kept_is_read_back_from_the_state_folder(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    assert load_last_place(root) == (None, "")  # a first start says nothing
    assert remember_last_place(root, LastPlace("1-2", "review", "optimize")) is None
    assert load_last_place(root) == (LastPlace("1-2", "review", "optimize"), "")
    path = last_place_path(root)
    assert path.is_relative_to(Path(os.environ["XDG_STATE_HOME"]))
    assert not any(p.name.endswith(".json") for p in root.rglob("*"))  # nothing in the project


def test_the_keeper_writes_only_when_the_place_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from promptdeck.tui.session import last_place

    writes: list[LastPlace] = []
    real = last_place.remember_last_place

    def counted(root: Path, place: LastPlace, environ: object = None) -> str | None:
        writes.append(place)
        return real(root, place)

    monkeypatch.setattr(last_place, "remember_last_place", counted)
    keeper = PlaceKeeper(tmp_path, kept=LastPlace("1-1", "dev"))
    assert keeper.moved(LastPlace("1-1", "dev")) is None
    keeper.moved(LastPlace("1-2", "dev"))
    keeper.moved(LastPlace("1-2", "dev"))
    keeper.moved(LastPlace("1-2", "review"))
    assert writes == [LastPlace("1-2", "dev"), LastPlace("1-2", "review")]


def _plant(root: Path, how: str) -> Path:
    path = last_place_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    if how == "malformed":
        path.write_text("{not json", encoding="utf-8")
    elif how == "foreign":
        path.write_text(json.dumps({"story": "1-2", "phase": "dev"}), encoding="utf-8")
    elif how == "huge":
        body = {"format": FORMAT, "story": "1-2", "phase": "dev", "pad": "x" * 100_000}
        path.write_text(json.dumps(body), encoding="utf-8")
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "symlink":
        target = root / "elsewhere.json"
        target.write_text(json.dumps({"format": FORMAT, "story": "1-2", "phase": "dev"}))
        path.symlink_to(target)
    return path


@pytest.mark.parametrize("how", ["malformed", "foreign", "huge", "fifo", "symlink"])
def test_an_unusable_place_file_is_one_note_and_no_place(tmp_path: Path, how: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    path = _plant(root, how)
    place, note = load_last_place(root)
    assert place is None
    assert note.startswith(str(path)) and note.endswith("opening on the first story")
    assert "\n" not in note


@pytest.mark.parametrize("how", ["fifo", "symlink"])
def test_writing_over_a_planted_entry_never_follows_it(tmp_path: Path, how: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    path = _plant(root, how)
    assert remember_last_place(root, LastPlace("1-1", "dev")) is None
    assert path.is_file() and not path.is_symlink()
    if how == "symlink":
        assert "1-2" in (root / "elsewhere.json").read_text()  # the target is untouched
    assert load_last_place(root)[0] == LastPlace("1-1", "dev")


def test_a_place_naming_a_phase_that_is_not_one_is_a_note(demo_root: Path) -> None:
    catalog = load_catalog(open_workspace(demo_root))
    story, note = place_in(catalog, LastPlace(catalog.stories[1].id, "nap"))
    assert story is None and "'nap'" in note
    assert place_in(catalog, LastPlace(catalog.stories[1].id, "review")) == (
        catalog.stories[1],
        "",
    )


@run_async
async def test_the_app_reopens_on_the_story_and_phase_left(demo_root: Path) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.catalog is not None
        screen.select_story(screen.catalog.stories[2])
        second = screen.catalog.stories[2].id
        await wait_for(pilot, lambda: screen.phases.choice.reading is not None, "the flow")
        screen = await wait_for_preview(pilot, second)
        await pilot.press("right_square_bracket")
        phase = screen.phase
        await wait_for(
            pilot,
            lambda: screen.prompt is not None and screen.prompt.request.phase == phase,
            "the phase's prompt",
        )
    assert load_last_place(demo_root)[0] == LastPlace(second, phase, screen.mode)
    again = make_app(demo_root, stable=True)
    async with again.run_test(size=(120, 40)) as pilot:
        screen = await wait_for_preview(pilot, second)
        assert screen.story is not None and screen.story.id == second
        assert screen.phase == phase
        assert not [n for n in again.notices if n.source == NOTICE_SOURCE]


@run_async
async def test_a_place_gone_opens_the_first_story_with_one_note(demo_root: Path) -> None:
    remember_last_place(demo_root, LastPlace("9-9", "dev"))
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.story is not None and screen.story.id == "1-1"
        notes = [n for n in app.notices if n.source == NOTICE_SOURCE]
        assert len(notes) == 1 and "9-9" in notes[0].text


def test_a_state_folder_that_cannot_be_written_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    keeper = PlaceKeeper(tmp_path)
    problem = keeper.moved(LastPlace("1-1", "dev"))
    assert problem is not None and "cannot write" in problem and "\n" not in problem
    assert keeper.moved(LastPlace("1-2", "dev")) is None  # one note, not one per move
