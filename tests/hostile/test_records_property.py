"""A property: whatever a repository ships under ``.promptdeck/`` — random bytes as run
records, links to ``/dev/zero``, to ``/dev/stdin`` (a FIFO no one writes to) or to a file
outside the project, FIFOs in a record's place or a run folder's — ``runs``, ``show``,
``diff --now`` and ``run --dry-run`` end within their limit, in a bounded address space, with
no traceback and a documented exit code; and the app's preview of the story comes up."""

from __future__ import annotations

import os
import resource
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from _read_helpers import CANARY
from _run_helpers import STORY, STORY_REL, cli, cloned_workspace, finish, start_cli
from app_helpers import make_app, run_async, wait_for_preview
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MEMORY = 768 * 1024**2
"""Address space allowed to each command: a read of /dev/zero would pass it at once."""
APP_GROWTH = 400 * 1024**2
"""How much more resident memory the app's process may reach while showing the preview."""
RECORD_NAMES = (
    "meta.json",
    "result.json",
    "signals.jsonl",
    "session.json",
    "system.md",
    "user.md",
    "stream.jsonl",
    "stream.log",
    "status.json",
    "rules-health.json",
    "rules.md",
)
WHERE = ("", "runs/", "runs/{good}/", "runs/planted/", "templates/")
DOCUMENTED = {0, 2}

kinds = st.sampled_from(["bytes", "json", "zero", "stdin", "outside", "fifo", "folder"])
names = st.one_of(
    st.sampled_from(RECORD_NAMES),
    st.text(st.characters(blacklist_characters="/\0", codec="utf-8"), min_size=1, max_size=12),
)
json_like = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
entries = st.lists(
    st.tuples(st.sampled_from(WHERE), names, kinds, st.binary(max_size=300), json_like),
    min_size=1,
    max_size=10,
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A clone with one real (replay) run: the history the random records are put into."""
    base = tmp_path_factory.mktemp("records-property")
    root = cloned_workspace(
        base,
        {
            STORY_REL: STORY,
            ".promptdeck/config.toml": '[agent]\ndefault = "replay"\nreplay_delay = 0.0\n',
        },
    )
    assert cli(root, "run", "1-1", "--phase", "dev").code == 0
    runs = root / ".promptdeck" / "runs"
    (good,) = [p.name for p in runs.iterdir() if p.is_dir() and p.name != "dry-run"]
    yield root, good


def _plant(root: Path, good: str, planted: list[tuple[str, str, str, bytes, object]]) -> None:
    import json

    outside = root.parent / "outside.json"
    outside.write_text(json.dumps({"story": CANARY, "run_id": CANARY, "phase": "dev"}))
    for where, name, kind, data, value in planted:
        if name in (".", ".."):
            continue
        folder = root / ".promptdeck" / where.format(good=good)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            if path.is_symlink() or path.is_file() or path.exists():
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
            if kind == "bytes":
                path.write_bytes(data)
            elif kind == "json":
                path.write_text(json.dumps(value), encoding="utf-8")
            elif kind == "zero":
                path.symlink_to("/dev/zero")
            elif kind == "stdin":
                path.symlink_to("/dev/stdin")
            elif kind == "outside":
                path.symlink_to(outside)
            elif kind == "fifo":
                os.mkfifo(path)
            else:
                path.mkdir()
        except (OSError, UnicodeEncodeError, ValueError):
            continue  # a name the file system refuses: not something a repository can ship


def _commands(root: Path, good: str, stdin_fd: int) -> None:
    for args in (
        ("runs",),
        ("runs", "--json"),
        ("show", good),
        ("diff", good, "--now"),
        ("run", "1-1", "--phase", "dev", "--dry-run"),
    ):
        done = finish(start_cli(root, *args, memory=MEMORY, stdin_fd=stdin_fd))
        assert done.code in DOCUMENTED, (args, done.stderr)
        assert CANARY not in done.stdout + done.stderr, args
        if done.code != 0:
            assert len(done.lines) == 1 and done.lines[0].startswith("promptdeck: "), done.stderr


async def _preview(root: Path) -> None:
    app = make_app(root)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for_preview(pilot, "1-1")
        await pilot.press("q")


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(planted=entries)
def test_a_hostile_promptdeck_folder_never_hangs_or_crashes(
    template: tuple[Path, str],
    planted: list[tuple[str, str, str, bytes, object]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source, good = template
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "home").mkdir()
        root = work / "clone"
        shutil.copytree(source, root, symlinks=True)
        _plant(root, good, planted)
        # The same FIFO as every command's stdin: held open for writing, never written to, so
        # a read of /dev/stdin would wait for ever.
        fifo = work / "stdin"
        os.mkfifo(fifo)
        stdin_fd = os.open(fifo, os.O_RDWR)
        try:
            _commands(root, good, stdin_fd)
        finally:
            os.close(stdin_fd)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(work / "xdg"))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        run_async(_preview)(root)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        assert after - before < APP_GROWTH
