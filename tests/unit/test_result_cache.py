"""The remembered-results store: survives processes, never trusts a foreign or damaged file,
and loses nothing when two processes write at once."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

from promptdeck.core.tokens.results import ResultCache

SCAN_CHILD = r"""
import sys
from promptdeck.core.secrets.scan import scan_text
from promptdeck.core.tokens.results import result_cache_notice, shared_results
text = "intro\npassword = 'Xq7pL2mN9rT4vB8z'\nmore prose\n"
print([(f.line, f.kind) for f in scan_text("notes.md", text, shared_results())])
print("detect_secrets" in sys.modules)
print(result_cache_notice())
"""


def _child(code: str, cache_home: Path, *args: str) -> list[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    env.pop("PROMPTDECK_RESULT_CACHE", None)
    out = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True
    )
    assert "Traceback" not in out.stderr
    return out.stdout.splitlines()


def test_a_second_process_answers_from_the_file_without_importing_the_scanner(
    tmp_path: Path,
) -> None:
    first = _child(SCAN_CHILD, tmp_path)
    assert first == ["[(2, 'Secret Keyword')]", "True", "None"]
    second = _child(SCAN_CHILD, tmp_path)
    assert second == ["[(2, 'Secret Keyword')]", "False", "None"]


def test_a_foreign_file_is_set_aside_with_one_line_and_rebuilt(tmp_path: Path) -> None:
    store = tmp_path / "promptdeck" / "results.sqlite3"
    store.parent.mkdir(parents=True)
    foreign = sqlite3.connect(store)
    foreign.execute("CREATE TABLE results (kind TEXT, key BLOB, value TEXT)")
    foreign.commit()
    foreign.close()
    lines = _child(SCAN_CHILD, tmp_path)
    assert lines[0] == "[(2, 'Secret Keyword')]"
    assert lines[2].startswith("the result cache ")
    assert "not a promptdeck result cache file" in lines[2]
    assert _child(SCAN_CHILD, tmp_path)[1:] == ["False", "None"]  # rebuilt, and used


def test_a_damaged_file_is_rebuilt_and_never_raises(tmp_path: Path) -> None:
    store = tmp_path / "promptdeck" / "results.sqlite3"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"SQLite format 3\x00" + os.urandom(3000))
    lines = _child(SCAN_CHILD, tmp_path)
    assert lines[0] == "[(2, 'Secret Keyword')]"
    assert "damaged" in lines[2]
    store.write_bytes(b"not a database at all, just text\n" * 40)
    assert "damaged" in _child(SCAN_CHILD, tmp_path)[2]


def test_a_stored_value_of_the_wrong_shape_is_a_miss(tmp_path: Path) -> None:
    from promptdeck.core.secrets import scan as secret_scan

    assert secret_scan._from_store([[3, "AWS Access Key"]]) == ((3, "AWS Access Key"),)
    for wrong in ({"a": 1}, [[0, "x"]], [[True, "x"]], [["3", "x"]], [[3]], "[]", None):
        assert secret_scan._from_store(wrong) is None
    cache = ResultCache(tmp_path / "r.sqlite3")
    cache.put("secret-scan", b"k", [[1, "x"]])
    db = sqlite3.connect(tmp_path / "r.sqlite3")
    db.execute("UPDATE results SET value = '{not json'")
    db.commit()
    db.close()
    assert cache.get("secret-scan", b"k") is None


WRITER = r"""
import sys
from pathlib import Path
from promptdeck.core.tokens.results import ResultCache
cache = ResultCache(Path(sys.argv[1]))
for number in range(200):
    cache.put("secret-scan", f"{sys.argv[2]}-{number}".encode(), [[number + 1, "kind"]])
print(cache.disabled)
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    env = {**os.environ}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    assert [w.communicate()[0].strip() for w in writers] == ["None", "None"]
    cache = ResultCache(path)
    for name in ("a", "b"):
        for number in range(200):
            assert cache.get("secret-scan", f"{name}-{number}".encode()) == [[number + 1, "kind"]]
    assert cache.notice is None


def test_each_kind_is_bounded_oldest_first(tmp_path: Path, monkeypatch: object) -> None:
    from promptdeck.core.tokens import results as result_cache

    monkeypatch.setitem(result_cache.LIMITS, "composed", 10)  # type: ignore[attr-defined]
    cache = ResultCache(tmp_path / "r.sqlite3")
    for number in range(25):
        cache.put("composed", str(number).encode(), number)
    cache.put("secret-scan", b"other", 1)
    kept = [n for n in range(25) if cache.get("composed", str(n).encode()) is not None]
    assert len(kept) <= 10 and kept[-1] == 24 and 0 not in kept
    assert cache.get("secret-scan", b"other") == 1


def test_turned_off_by_the_environment(monkeypatch: object) -> None:
    from promptdeck.core.tokens import results as result_cache

    monkeypatch.setenv("PROMPTDECK_RESULT_CACHE", "off")  # type: ignore[attr-defined]
    assert result_cache.results_path() is None
    cache = ResultCache(None)
    cache.put("composed", b"k", 1)
    assert cache.get("composed", b"k") is None


def test_a_file_this_store_created_is_read_once_it_has_written(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    mine, other = ResultCache(path), ResultCache(path)
    assert mine.get("composed", b"a") is None  # creates the file: empty, nothing to look up
    other.put("composed", b"b", 2)  # another process adds an entry meanwhile
    assert other.get("composed", b"b") == 2
    assert mine.get("composed", b"b") is None  # a miss: computed again, never wrong
    mine.put("composed", b"a", 1)
    assert (mine.get("composed", b"a"), mine.get("composed", b"b")) == (1, 2)


def test_a_cache_folder_made_here_is_private(tmp_path: Path) -> None:
    # Remembered answers and the app's opening hold the project's text.
    store = ResultCache(tmp_path / "made" / "results.sqlite3")
    store.put("composed", b"key", {"text": "project text"})
    assert stat.S_IMODE((tmp_path / "made").stat().st_mode) == 0o700
    store.close()
