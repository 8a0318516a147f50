"""The app's opening read beside its start: a forked helper reads the catalog, the first
story's flow and its prompt, and the screen shows them in its first frame — the same prompt the
screen composes itself, or, when the helper fails, what the screen reads on its own."""

from __future__ import annotations

import base64
import os
import pickle
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.forked import Forked, receive_message, send_message
from promptdeck.core.project import open_workspace
from promptdeck.core.prompt import compose_prompt
from promptdeck.core.records.writer import RunRecord
from promptdeck.core.tokens import answers as answer_cache
from promptdeck.core.tokens import shared_results
from promptdeck.tui.screens import main as main_screen
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.session import opening
from promptdeck.tui.session.opening import OpeningHelper, read_opening


def _helper(root: Path) -> OpeningHelper:
    workspace = open_workspace(root)
    config = workspace.config
    helper = OpeningHelper.start(workspace, config.tokens_encoding, None, config.delivery)
    assert helper is not None, "this platform forks"
    return helper


def test_the_helper_answers_what_reading_in_process_gives(demo_root: Path) -> None:
    workspace = open_workspace(demo_root)
    config = workspace.config
    here = read_opening(workspace, config.tokens_encoding, None, config.delivery)
    helper = _helper(demo_root)
    opening = helper.take_catalog()
    assert opening is not None and opening.prompt is None  # the catalog comes first
    prompt = helper.take_prompt(None)
    assert opening.catalog == here.catalog
    assert opening.plan == here.plan
    assert opening.reading == here.reading
    assert here.prompt is not None and prompt is not None
    assert prompt.request == here.prompt.request
    assert (prompt.system, prompt.user) == (here.prompt.system, here.prompt.user)
    assert prompt.system_meter == here.prompt.system_meter  # counted, the same counts
    assert prompt.story is opening.catalog.stories[0]
    # Composed as the screen composes it.
    again = compose_prompt(workspace, opening.catalog, prompt.request)
    assert again.system == prompt.system
    assert helper.pid is None  # stopped and reaped once its answer was taken


def test_a_stylesheet_part_sent_late_never_holds_the_screens_bounded_wait() -> None:
    # The app takes the stylesheet part as it is made, without waiting: when it came later,
    # the screen's wait for the catalog passes over it and stays bounded.
    read, write = os.pipe()
    helper = OpeningHelper(Forked(None, None, read))
    try:
        assert helper.take_styles(0.0) is None  # not sent yet
        send_message(write, pickle.dumps("styles"))
        started = time.monotonic()
        assert not helper.wait(0.2)  # the stylesheet came, the catalog has not
        assert time.monotonic() - started < 2.0
        assert helper.take_styles(0.0) == "styles"
        send_message(write, pickle.dumps("catalog"))
        assert helper.wait(1.0)
        assert pickle.loads(receive_message(read) or b"") == "catalog"
    finally:
        os.close(write)
        os.close(read)


def _killed(helper: OpeningHelper) -> OpeningHelper:
    assert helper.pid is not None
    os.kill(helper.pid, signal.SIGKILL)
    return helper


def test_a_helper_that_dies_answers_nothing(demo_root: Path) -> None:
    helper = _killed(_helper(demo_root))
    assert helper.take_catalog() is None
    assert helper.take_prompt(0.1) is None


@run_async
async def test_the_first_frame_has_the_helpers_tree_and_counted_prompt(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # However slow the machine running the test, the screen waits for the helper.
    monkeypatch.setattr(main_screen, "OPENING_WAIT_SECONDS", 60.0)
    monkeypatch.setattr(main_screen, "PROMPT_WAIT_SECONDS", 60.0)
    app = make_app(demo_root, opening=_helper(demo_root))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(
            pilot,
            lambda: any(isinstance(s, MainScreen) and s.is_mounted for s in app.screen_stack),
            "the main screen",
        )
        screen = next(s for s in app.screen_stack if isinstance(s, MainScreen))
        # Mounted with them: nothing was read or composed after the screen was built.
        assert screen.catalog is not None and screen.prompt is not None
        assert screen.prompt_counted and screen.prompt.request == screen.current_request()
        assert not [w for w in app.workers if w.group in ("catalog", "compose")]
        shown = screen.prompt
        workspace = open_workspace(demo_root)
        composed = compose_prompt(workspace, screen.catalog, shown.request)
        assert composed.system == shown.system
        # The flow's change does not compose it again; a change of inclusion does.
        await pilot.pause()
        assert screen.prompt is shown
        await pilot.press("p")

        def left_out() -> bool:
            return screen.prompt is not None and not screen.prompt.request.selection.project_context

        await wait_for(pilot, left_out, "the project context left out")


@run_async
async def test_without_the_helpers_answer_the_screen_reads_the_catalog_itself(
    demo_root: Path,
) -> None:
    app = make_app(demo_root, opening=_killed(_helper(demo_root)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.catalog is not None and screen.catalog.stories[0].id == "1-1"


# ---------------------------------------------------------------- the remembered opening


def _answered(root: Path) -> list[bytes]:
    """What the helper sends for ``root``, its work run here (not forked), part by part."""
    workspace = open_workspace(root)
    config = workspace.config
    read, write = os.pipe()
    parts: list[bytes] = []

    def drain() -> None:
        while (body := receive_message(read)) is not None:
            parts.append(body)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        opening._answer(write, workspace, config.tokens_encoding, None, config.delivery)
    finally:
        os.close(write)
        reader.join()
        os.close(read)
    return parts


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The workspaces the helper read (rather than sent from memory), in order; files the test
    just wrote count as settled (the racy rule is the CLI answers' and tested there)."""
    monkeypatch.setattr(answer_cache, "SETTLE_SECONDS", 0.0)
    seen: list[Path] = []
    real = opening.read_opening

    def counted(workspace: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(workspace.root)
        return real(workspace, *args, **kwargs)

    monkeypatch.setattr(opening, "read_opening", counted)
    return seen


def test_an_unchanged_opening_is_sent_from_memory_and_a_change_reads_it_again(
    demo_root: Path, reads: list[Path]
) -> None:
    first = _answered(demo_root)
    assert len(reads) == 1 and len(first) == 2
    again = _answered(demo_root)
    assert len(reads) == 1 and again == first  # sent as pickled then, nothing read
    catalog, prompt = (pickle.loads(part) for part in again)
    workspace = open_workspace(demo_root)
    config = workspace.config
    here = read_opening(workspace, config.tokens_encoding, None, config.delivery)
    assert catalog.catalog == here.catalog and catalog.reading == here.reading
    assert here.prompt is not None and prompt.system == here.prompt.system

    story = next(demo_root.rglob(f"{here.catalog.stories[0].id}-*.md"))
    story.write_text(story.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    changed = _answered(demo_root)
    assert len(reads) == 2 and changed[1] != first[1]
    assert "One more line." in pickle.loads(changed[1]).system
    assert _answered(demo_root) == changed and len(reads) == 2


def test_a_remembered_opening_without_this_users_seal_is_never_sent(
    demo_root: Path, reads: list[Path]
) -> None:
    first = _answered(demo_root)
    workspace = open_workspace(demo_root)
    config = workspace.config
    key = opening.opening_key(workspace, config.tokens_encoding, None, config.delivery)
    store = shared_results()
    entry = store.get(opening.MEMORY_KIND, key)
    # A planted pickle (it would run code when loaded) under the entry's own evidence: with a
    # seal made without the user's key, and with the seal of the parts it replaced.
    marker = demo_root / "planted"
    planted = base64.b64encode(pickle.dumps(_Planted(marker))).decode("ascii")
    for seal_made in ("0" * 64, entry["seal"]):
        store.put(opening.MEMORY_KIND, key, {**entry, "parts": [planted], "seal": seal_made})
        sent = _answered(demo_root)
        assert sent == first
        for part in sent:  # loaded as the screen loads them
            pickle.loads(part)
        assert not marker.exists()
    assert len(reads) == 3
    # The sealed parts of the real entry with evidence of one's own (none: "nothing changed"),
    # or a seal that is not text of the kind a seal is: read again, never a failure.
    entry = store.get(opening.MEMORY_KIND, key)
    story = next(demo_root.rglob("1-1-*.md"))
    story.write_text(story.read_text(encoding="utf-8") + "\nChanged.\n", encoding="utf-8")
    for forged in ({**entry, "evidence": []}, {**entry, "seal": "é" * 64}):
        store.put(opening.MEMORY_KIND, key, forged)
        assert "Changed." in pickle.loads(_answered(demo_root)[1]).system
    assert len(reads) == 5


def test_a_changed_config_reads_the_opening_again(demo_root: Path, reads: list[Path]) -> None:
    # The config is read before the helper starts: its settings are part of the memory's key.
    first = _answered(demo_root)
    config = demo_root / ".promptdeck" / "config.toml"
    before = config.read_text(encoding="utf-8") if config.exists() else ""
    config.parent.mkdir(exist_ok=True)
    config.write_text(before + "\n[injection]\nwarn_bytes = 50\n", encoding="utf-8")
    again = _answered(demo_root)
    assert len(reads) == 2 and again != first


class _Planted:
    """Unpickled, it writes a file: a stand-in for code a planted pickle would run."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.write_text, (self.marker, "code ran"))


def test_an_opening_with_a_run_in_progress_is_read_at_every_start(
    demo_root: Path, reads: list[Path]
) -> None:
    # A run with no result whose process is alive is "running": nothing in a file says when
    # it stops, so what the opening says of it is never remembered.
    story = read_opening(open_workspace(demo_root), "o200k_base", None, "layered")
    record = RunRecord.create(demo_root, story.catalog.stories[0].id, "dev")
    record.write_meta(
        {
            "story": story.catalog.stories[0].id,
            "phase": "dev",
            "mode": "create",
            "started_ts": time.time() - 60,
            "pid": os.getpid(),
        }
    )
    first = _answered(demo_root)
    assert _answered(demo_root) == first and len(reads) == 2


@run_async
async def test_the_helper_opens_where_the_app_was_left(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from promptdeck.tui.session.last_place import LastPlace, remember_last_place

    remember_last_place(demo_root, LastPlace("2-1", "review"))
    monkeypatch.setattr(main_screen, "OPENING_WAIT_SECONDS", 60.0)
    monkeypatch.setattr(main_screen, "PROMPT_WAIT_SECONDS", 60.0)
    helper = _helper(demo_root)
    app = make_app(demo_root, opening=helper)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(
            pilot,
            lambda: any(isinstance(s, MainScreen) and s.is_mounted for s in app.screen_stack),
            "the main screen",
        )
        screen = next(s for s in app.screen_stack if isinstance(s, MainScreen))
        # The helper's prompt is the place's, shown in the first frame, not composed again.
        assert screen.prompt is not None and screen.prompt_counted
        assert (screen.prompt.story.id, screen.prompt.request.phase) == ("2-1", "review")
        assert screen.story is not None and screen.story.id == "2-1"
        assert not [w for w in app.workers if w.group in ("catalog", "compose")]
