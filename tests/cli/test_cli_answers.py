"""``inspect`` and ``compose`` into a pipe answer from a remembered copy only when it is proven
current: every path the first run read is stat-ed again, and any change — an edited file, a new
file in a listed folder, a file that was missing and now exists, a changed config — composes
afresh. A copy whose inputs changed in the same second as the recording is never kept."""

from __future__ import annotations

import os
from pathlib import Path

import promptdeck.cli as cli
import pytest
from builders import write_files
from promptdeck.core.tokens import answers as answer_cache

ARTIFACTS = "_bmad-output/implementation-artifacts"


def _workspace(root: Path) -> None:
    write_files(
        root,
        {
            f"{ARTIFACTS}/sprint-status.yaml": (
                "development_status:\n  1-1-sign-in: ready-for-dev\n"
            ),
            f"{ARTIFACTS}/1-1-sign-in.md": (
                "# Story 1.1: Sign in\n\nStatus: ready-for-dev\n\n- [ ] Task 1: form\n"
            ),
        },
    )


class Runs:
    """Runs the CLI in this process and says whether each run composed or was answered."""

    def __init__(self, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
        self.capfd = capfd
        self.composed = 0
        original = cli._parsed_and_run

        def counting(args: list[str]) -> int:
            self.composed += 1
            return original(args)

        monkeypatch.setattr(cli, "_parsed_and_run", counting)

    def __call__(self, *argv: str) -> tuple[int, str, str, bool]:
        before = self.composed
        code = cli.main(list(argv))
        out, err = self.capfd.readouterr()
        return code, out, err, self.composed > before


@pytest.fixture
def settled(runs: Runs, monkeypatch: pytest.MonkeyPatch) -> Runs:
    """:func:`runs`, with files written by the test (seconds old at most) counting as settled
    (the racy rule itself is the subject of the same-second test below)."""
    monkeypatch.setattr(answer_cache, "SETTLE_SECONDS", 0.0)
    return runs


@pytest.fixture
def runs(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Runs:
    monkeypatch.delenv("PROMPTDECK_ANSWER_CACHE", raising=False)
    return Runs(capfd, monkeypatch)


def test_an_unchanged_inspect_is_answered_and_every_change_composes_again(
    tmp_path: Path, settled: Runs
) -> None:
    runs = settled
    root = tmp_path / "ws"
    _workspace(root)
    argv = ("inspect", "1-1", "--json", "--root", str(root))
    first = runs(*argv)
    assert first[0] == 0 and first[3], first[2]
    second = runs(*argv)
    assert second == (first[0], first[1], first[2], False)  # answered, byte for byte

    changes = [
        lambda: (root / ARTIFACTS / "1-1-sign-in.md").write_text(
            "# Story 1.1: Sign in\n\nStatus: ready-for-dev\n\n- [ ] Task 1: form and errors\n"
        ),
        lambda: (root / ARTIFACTS / "1-1-notes.md").write_text("New notes for the story.\n"),
        lambda: write_files(root, {".promptdeck/rules.md": "Rules now exist.\n"}),
        lambda: write_files(root, {".promptdeck/config.toml": "[injection]\nwarn_bytes = 50\n"}),
        lambda: (root / ARTIFACTS / "1-1-notes.md").unlink(),
    ]
    previous = second[1]
    for number, change in enumerate(changes):
        change()
        fresh = runs(*argv)
        assert fresh[3], f"change {number} was answered from the old copy"
        assert fresh[1] != previous, f"change {number} did not change the output"
        previous = fresh[1]
        again = runs(*argv)
        assert again[1] == fresh[1] and not again[3]


def test_inputs_changed_within_the_same_second_are_never_remembered(
    tmp_path: Path, runs: Runs
) -> None:
    root = tmp_path / "ws"
    _workspace(root)  # just written: inside the settle window
    argv = ("compose", "1-1", "--root", str(root))
    first = runs(*argv)
    assert first[0] == 0 and first[3]
    assert runs(*argv)[3]  # composed again: nothing was remembered


def test_compose_parts_are_answered_exactly(tmp_path: Path, settled: Runs) -> None:
    runs = settled
    root = tmp_path / "ws"
    _workspace(root)
    for part in ("system", "user", "messages", "injection"):
        argv = ("compose", "1-1", "--part", part, "--root", str(root))
        first = runs(*argv)
        again = runs(*argv)
        assert again == (first[0], first[1], first[2], False), part


def test_stories_is_answered_until_a_story_file_appears(tmp_path: Path, settled: Runs) -> None:
    runs = settled
    root = tmp_path / "ws"
    _workspace(root)
    argv = ("stories", "--json", "--root", str(root))
    first = runs(*argv)
    assert first[3] and runs(*argv) == (first[0], first[1], first[2], False)
    write_files(root, {f"{ARTIFACTS}/1-2-sign-out.md": "# Story 1.2: Sign out\n\nStatus: draft\n"})
    fresh = runs(*argv)
    assert fresh[3] and "Sign out" in fresh[1] and "Sign out" not in first[1]


def test_the_cache_can_be_turned_off(
    tmp_path: Path, settled: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = settled
    monkeypatch.setenv("PROMPTDECK_ANSWER_CACHE", "off")
    root = tmp_path / "ws"
    _workspace(root)
    argv = ("inspect", "1-1", "--json", "--root", str(root))
    assert runs(*argv)[3] and runs(*argv)[3]


def test_tampered_evidence_is_never_trusted(tmp_path: Path) -> None:
    target = tmp_path / "f.md"
    target.write_text("x")
    recorder = answer_cache.ReadRecorder()
    recorder.started += 10  # as if recorded later: the file counts as settled
    with recorder.recording():
        target.read_text()
    evidence = recorder.evidence()
    assert evidence is not None and answer_cache.is_current(evidence)
    for wrong in (None, {}, [["a"]], [[str(target), "yes", None]], [[1, True, None]]):
        assert not answer_cache.is_current(wrong)
    target.write_text("y")
    assert not answer_cache.is_current(evidence)


def test_an_answer_that_asked_about_a_process_is_never_remembered(tmp_path: Path) -> None:
    # A run with no result is "running" while its process lives: no file says when it dies.
    target = tmp_path / "f.md"
    target.write_text("x")
    recorder = answer_cache.ReadRecorder()
    recorder.started += 10
    with recorder.recording():
        target.read_text()
    assert recorder.evidence() is not None
    real_kill = os.kill
    with recorder.recording():
        os.kill(os.getpid(), 0)
    assert recorder.asked_processes and recorder.evidence() is None
    assert os.kill is real_kill  # put back


@pytest.mark.parametrize(
    ("name", "value"),
    [("PATH", "/nowhere"), ("ANTHROPIC_MODEL", "claude-opus-4-8"), ("CODEX_HOME", "/elsewhere")],
)
def test_a_changed_client_setting_is_never_answered_from_the_old_copy(
    tmp_path: Path, settled: Runs, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    """Which client is found and its own model setting decide the model a forecast prices:
    a copy made under another PATH (no ``claude`` then, one now) would price another model."""
    root = tmp_path / "ws"
    _workspace(root)
    # Without --cost: a first forecast may ask the installed client its version (a process,
    # which is never remembered); the key is what is under test.
    argv = ("inspect", "1-1", "--json", "--root", str(root))
    assert settled(*argv)[3]
    assert not settled(*argv)[3]  # answered
    monkeypatch.setenv(name, value)
    assert settled(*argv)[3], f"a changed {name} was answered from the old copy"
