"""Every writer under ``.promptdeck/`` refuses a link on its way, not only the run records:
the story locks, the prompt exports and the learnings file. A cloned repository's
``.promptdeck/locks -> ../src`` stays inside the project, yet would leave promptdeck's files
where a phase's commit stages them."""

from __future__ import annotations

from pathlib import Path

import pytest
from promptdeck.core.errors import UsageError
from promptdeck.core.project import load_config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.prompt.export import write_export
from promptdeck.core.prompt.learnings import start_learnings
from promptdeck.core.run.locks import acquire
from promptdeck.core.stories.model import Story


def _project(tmp_path: Path, link: str) -> tuple[Path, Path]:
    root = tmp_path / "project"
    target = root / "src"
    target.mkdir(parents=True)
    (target / "app.py").write_text("print('mine')\n", encoding="utf-8")
    place = root / ".promptdeck" / link
    place.parent.mkdir(parents=True, exist_ok=True)
    place.symlink_to(Path("../" * (len(Path(link).parts))) / "src")
    return root, target


def test_a_linked_locks_folder_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    root, target = _project(tmp_path, "locks")
    with pytest.raises(UsageError, match=r"\.promptdeck/locks is a symbolic link"):
        acquire(root, "1-1")
    assert sorted(p.name for p in target.iterdir()) == ["app.py"]


def test_a_linked_lock_file_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".promptdeck" / "locks").mkdir(parents=True)
    (root / "notes.txt").write_text("mine\n", encoding="utf-8")
    (root / ".promptdeck" / "locks" / "1-1.lock").symlink_to("../../notes.txt")
    with pytest.raises(UsageError, match=r"1-1\.lock is a symbolic link"):
        acquire(root, "1-1")
    assert (root / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_a_linked_exports_folder_is_refused(tmp_path: Path) -> None:
    root, target = _project(tmp_path, "exports")
    with pytest.raises(UsageError, match=r"\.promptdeck/exports is a symbolic link"):
        write_export(root / ".promptdeck" / "exports" / "1-1-dev", {"system.md": "x"}, root=root)
    assert sorted(p.name for p in target.iterdir()) == ["app.py"]


def test_a_linked_learnings_folder_gets_no_file_and_never_stops_a_run(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "docs" / "state").mkdir(parents=True)
    (root / ".promptdeck").symlink_to("docs/state")
    workspace = Workspace(root=root.resolve(), config=load_config(root))
    story = Story(id="1-1", key="1-1", title="T", status="backlog", source="bmad", group="1")
    assert start_learnings(workspace, story) is None
    assert list((root / "docs" / "state").iterdir()) == []


def test_real_folders_are_written_as_always(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    lock = acquire(root, "1-1")
    lock.release()
    assert (root / ".promptdeck" / "locks" / "1-1.lock").is_file()
    written = write_export(root / ".promptdeck" / "exports" / "a", {"s.md": "x"}, root=root)
    assert [p.name for p in written] == ["s.md"]


def test_the_file_choices_never_go_through_a_linked_state_folder(tmp_path: Path) -> None:
    from promptdeck.core.injection.choices import toggle_remembered

    root = tmp_path / "project"
    (root / "docs" / "state").mkdir(parents=True)
    (root / ".promptdeck").symlink_to("docs/state")
    with pytest.raises(OSError, match=r"\.promptdeck is a symbolic link"):
        toggle_remembered(root, "1-1", "docs/notes.md", True)
    assert list((root / "docs" / "state").iterdir()) == []


def test_the_rules_health_count_is_not_written_through_a_linked_runs_folder(
    tmp_path: Path,
) -> None:
    from promptdeck.core.layers.rules import note_rules_read, read_rules

    root = tmp_path / "project"
    (root / "docs" / "records").mkdir(parents=True)
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "runs").symlink_to("../docs/records")
    workspace = Workspace(root=root.resolve(), config=load_config(root))
    note_rules_read(workspace, read_rules(workspace))
    assert list((root / "docs" / "records").iterdir()) == []
