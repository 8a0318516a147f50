"""Generated code, remembered: the same methods as Python compiles, read back only when sealed.

Each test installs the memory on folders of its own and takes it out again, so the test
process's own classes are made as Python makes them.
"""

from __future__ import annotations

import collections
import dataclasses
import marshal
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from promptdeck.core.tokens import generated_code
from promptdeck.core.tokens.generated_code import (
    MARK,
    install_code_memory,
    memory_path,
    save_code_memory,
    uninstall_code_memory,
)
from promptdeck.core.tokens.seal import _make_key, key_path


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The user's cache and config folders for this test, the memory out before and after."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "cache").mkdir()
    _make_key(key_path())  # as the app's first start makes it
    uninstall_code_memory()
    yield tmp_path
    uninstall_code_memory()


def _made(tag: str) -> tuple[type, Any]:
    """A frozen dataclass and a namedtuple, their shapes named by ``tag`` (so each test's
    source text is its own)."""
    point = dataclasses.make_dataclass(
        f"Point{tag}",
        [("x", int), ("y", int, dataclasses.field(default=0))],
        frozen=True,
    )
    pair = collections.namedtuple(f"Pair{tag}", ["left", f"right_{tag}"])
    return point, pair


def _methods(cls: type) -> dict[str, Any]:
    return {name: getattr(cls, name).__code__ for name in ("__init__", "__setattr__")}


def _same_code(a: Any, b: Any) -> bool:
    keys = ("co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_flags")
    return all(getattr(a, key) == getattr(b, key) for key in keys)


def test_classes_get_the_code_python_compiles(folders: Path) -> None:
    plain_point, plain_pair = _made("Same")
    assert install_code_memory()
    point, pair = _made("Same")
    for name, code in _methods(point).items():
        assert _same_code(code, _methods(plain_point)[name]), name
    assert _same_code(pair.__new__.__code__, plain_pair.__new__.__code__)
    # And they behave: a frozen class refuses a write, the tuple takes its fields.
    made = point(1)
    assert (made.x, made.y) == (1, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.x = 2  # type: ignore[misc]
    assert pair(1, 2) == (1, 2)
    # Annotations as Python leaves them: the memory's module's __future__ import is not taken.
    assert point.__init__.__annotations__["x"] is int


def test_a_second_start_compiles_nothing(folders: Path) -> None:
    install_code_memory()
    _made("Again")
    assert save_code_memory()
    path = memory_path()
    assert path.read_bytes().startswith(MARK)
    assert path.stat().st_mode & 0o777 == 0o600
    uninstall_code_memory()

    install_code_memory()
    _made("Again")
    memory = generated_code._memory
    assert memory is not None and not memory.new()
    assert not save_code_memory()  # nothing new: nothing written


def _plant(path: Path, body: bytes, seal: str = "0" * 64) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(MARK + seal.encode() + body)


def test_an_unsealed_memory_is_never_run(folders: Path) -> None:
    # A planted memory whose code for the class's __init__ would announce itself.
    install_code_memory()
    source_seen: list[str] = []
    original = generated_code._Memory.code

    def spy(self: Any, mode: str, source: str) -> Any:
        source_seen.append(source)
        return original(self, mode, source)

    generated_code._Memory.code = spy  # type: ignore[method-assign]
    try:
        _made("Planted")
    finally:
        generated_code._Memory.code = original  # type: ignore[method-assign]
    uninstall_code_memory()
    hostile = compile("import os\nos.environ['PLANTED'] = 'ran'\n", "<string>", "exec")
    body = marshal.dumps({("exec", source): marshal.dumps(hostile) for source in source_seen})
    path = memory_path()
    _plant(path, body)

    install_code_memory()
    point, _ = _made("Planted")
    assert "PLANTED" not in os.environ
    assert point(3).x == 3
    assert save_code_memory()  # compiled anew, and the planted file replaced
    assert path.read_bytes()[len(MARK) : len(MARK) + 64] != b"0" * 64


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder", "huge", "garbage"])
def test_a_memory_that_is_not_a_file_of_its_own_is_not_read(folders: Path, kind: str) -> None:
    path = memory_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    outside = folders / "outside.bin"
    outside.write_bytes(b"the user's own file")
    if kind == "symlink":
        path.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(path)  # never opened for a blocking read: no hang
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        with path.open("wb") as handle:
            handle.truncate(generated_code.MAX_BYTES + 1)
    else:
        path.write_bytes(MARK + b"x" * 64 + b"not marshal")
    install_code_memory()
    point, _ = _made(kind.title())
    assert point(1).x == 1
    memory = generated_code._memory
    assert memory is not None and memory.new()  # compiled, nothing taken from the file
    written = save_code_memory()
    # A file promptdeck did not write is left as it is; only its own damaged one is replaced.
    assert written is (kind == "garbage")
    assert outside.read_bytes() == b"the user's own file"


def test_switched_off_it_is_not_installed(folders: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(generated_code.ENV_VAR, "off")
    assert not install_code_memory()
    assert "exec" not in vars(dataclasses)
    assert "eval" not in vars(collections)


def test_a_forked_child_leaves_the_writing_to_its_parent(folders: Path) -> None:
    install_code_memory()
    _made("Child")
    memory = generated_code._memory
    assert memory is not None
    memory.pid = os.getpid() + 1  # as it looks from a child forked after install
    assert not save_code_memory()
    assert not memory_path().exists()


def test_text_without_a_namespace_runs_in_its_callers(folders: Path) -> None:
    install_code_memory()
    value = 41
    assert collections.eval("value + 1") == 42  # type: ignore[attr-defined]
    assert value == 41


def test_the_cli_reads_what_it_remembered(tmp_path: Path) -> None:
    """Two commands in fresh processes: the first writes the memory, the second compiles
    nothing new, so it leaves the file as it was."""
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    (tmp_path / "cache").mkdir()
    _make_key(str(tmp_path / "config" / "promptdeck" / "seal.key"))
    command = [sys.executable, "-m", "promptdeck.cli", "stories", "--root", str(tmp_path)]
    subprocess.run(command, env=env, capture_output=True, check=False, timeout=120)
    path = memory_path(env)
    first = path.read_bytes()
    assert first.startswith(MARK)
    subprocess.run(command, env=env, capture_output=True, check=False, timeout=120)
    assert path.read_bytes() == first


def test_two_processes_keep_each_others_code(folders: Path) -> None:
    """One process reads the file, another writes to it, then the first writes: both keep."""
    install_code_memory()
    first = generated_code._memory
    assert first is not None
    first.code("exec", "pass")  # the file read now (nothing there yet)
    generated_code._memory = None
    install_code_memory()  # the other process
    _made("Second")
    assert save_code_memory()
    generated_code._memory = first
    _made("First")
    assert save_code_memory()
    kept = [source for _, source in generated_code._read(memory_path())]
    assert any("right_First" in source for source in kept)
    assert any("right_Second" in source for source in kept)


def test_no_key_no_memory(folders: Path) -> None:
    """The memory makes no key: before the app has made one, nothing is written."""
    key = Path(key_path())
    key.unlink()
    install_code_memory()
    _made("Keyless")
    assert not save_code_memory()
    assert not key.exists()
    assert not memory_path().exists()
