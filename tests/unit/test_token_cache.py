"""Remembered token counts: exact, shared by processes, bounded, and never fatal."""

from __future__ import annotations

import hashlib
import random
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from promptdeck.core.demo.bundle import prepare_demo
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest
from promptdeck.core.tokens.cache import APPLICATION_ID, TokenCache, default_path
from promptdeck.core.tokens.counter import TokenCounter
from promptdeck.core.tokens.encoding import build_encoding

_ENCODERS = {name: build_encoding(name) for name in ("o200k_base", "cl100k_base")}


def real(name: str) -> object:
    """A builder handing out the encoder built once for the module (building takes 0.3 s)."""
    return _ENCODERS[name]


def no_encoder(name: str) -> object:
    raise AssertionError(f"the {name} encoder was built although every count was known")


def counter(cache: TokenCache | None, builder: object = real) -> TokenCounter:
    return TokenCounter("o200k_base", builder, cache=cache)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return open_workspace(prepare_demo(tmp_path_factory.mktemp("demo") / "ledgerline"))


def meters(prompt: ComposedPrompt) -> list[object]:
    """Every count a prompt shows: files, envelope, total, layers, joiner, system, user."""
    injection = prompt.injection
    return [
        [(f.path, f.bytes, f.tokens) for f in injection.files],
        injection.envelope,
        injection.total,
        [(layer.layer_id, layer.bytes, layer.tokens) for layer in prompt.layers],
        prompt.joiner,
        prompt.system_meter,
        prompt.user_meter,
    ]


def test_remembered_counts_equal_a_cold_run_on_the_demo_without_building_the_encoder(
    demo: Workspace, tmp_path: Path
) -> None:
    catalog = load_catalog(demo)
    store = TokenCache(tmp_path / "counts.sqlite3")
    requests = [
        PromptRequest(story.id, phase=phase)
        for story in catalog.stories
        for phase in ("dev", "review")
    ]
    # Cold: nothing remembered, every count made by the encoder; a whole count as reference.
    cold = counter(store)
    first = [compose_prompt(demo, catalog, request, counter=cold) for request in requests]
    reference = counter(None)
    for prompt in first:
        assert prompt.system_meter.tokens == reference.count(prompt.system)
        assert prompt.injection.total.tokens == reference.count(prompt.injection.text)
        assert sum(layer.tokens or 0 for layer in prompt.layers) + (prompt.joiner.tokens or 0) == (
            prompt.system_meter.tokens
        )
    store.close()

    # Warm, in a "new process": a new cache object on the same file and an encoder that must
    # not be built. Same numbers, no estimate, no warning.
    warm = counter(TokenCache(tmp_path / "counts.sqlite3"), no_encoder)
    second = [compose_prompt(demo, catalog, request, counter=warm) for request in requests]
    assert [meters(p) for p in second] == [meters(p) for p in first]
    assert not warm.built and not warm.estimated and warm.warning is None
    assert warm.encoded_bytes == 0
    assert all(not p.system_meter.estimated for p in second)


def test_each_byte_is_encoded_about_once_on_a_cold_compose(demo: Workspace) -> None:
    catalog = load_catalog(demo)
    for story in catalog.stories:
        fresh = counter(None)
        prompt = compose_prompt(demo, catalog, PromptRequest(story.id), counter=fresh)
        system_bytes = prompt.system_meter.bytes
        # Files, Layer-5 and the system prompt once each would be over 2x; seams add little.
        assert fresh.encoded_bytes <= 1.15 * system_bytes, (story.id, fresh.encoded_bytes)


_CHUNKS = [*"ab Z9 '\n\t.,!?<>/\"-_", "é", "日本", "😀", "\r\n", "'ll", "\u0301", "١٢", "\x1c"]
_CHUNKS += ["\u00a0", "word ", "Word", "HTML", "123 ", "4567", "  ", "\n\n", "</file>", "x "]
_TEXT = st.lists(st.one_of(st.sampled_from(_CHUNKS), st.text(max_size=3)), max_size=500).map(
    "".join
)


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(_TEXT, min_size=1, max_size=6),
    encoding=st.sampled_from(["o200k_base", "cl100k_base"]),
)
def test_joined_counts_equal_whole_counts_on_random_text(parts: list[str], encoding: str) -> None:
    joined = TokenCounter(encoding, lambda name: _ENCODERS[name], cache=None)
    whole = TokenCounter(encoding, lambda name: _ENCODERS[name], cache=None)
    assert joined.count_joined(parts) == whole.count("".join(parts))


def test_a_long_text_is_encoded_in_pieces_with_the_same_count() -> None:
    rng = random.Random(13)
    words = ["word", "Word", "12", "3.5", "é", "日本", "'ll", "\n", "  ", "-", "</file>"]
    text = " ".join(rng.choice(words) for _ in range(400_000))
    assert len(text) > 4 * 256 * 1024
    whole = len(_ENCODERS["o200k_base"].encode_ordinary(text))
    assert counter(None).count(text) == whole


def test_joined_counts_split_long_parts_at_the_seams() -> None:
    rng_words = [f"word{i} and some more text, line {i}.\n" for i in range(400)]
    parts = ["<open>\n", "".join(rng_words), "\n</close>\n<open>\n", "".join(rng_words[::-1]), "\n"]
    joined = counter(None)
    assert joined.count_joined(parts) == counter(None).count("".join(parts))
    total = sum(len(p.encode()) for p in parts)
    assert joined.encoded_bytes < 1.05 * total


@settings(max_examples=60, deadline=None)
@given(text=_TEXT)
def test_a_remembered_count_is_the_encoders_count(
    text: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("rand") / "counts.sqlite3"
    first = counter(TokenCache(path))
    value = first.count(text)
    first.flush()
    again = counter(TokenCache(path), no_encoder if text else real)
    assert again.count(text) == value == counter(None).count(text)


def _foreign(path: Path, _original: bytes) -> None:
    path.unlink()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE counts (x)")
    db.commit()
    db.close()


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p, _: p.write_bytes(b"this is not a database\n" * 100), id="garbage"),
        pytest.param(lambda p, _: p.write_bytes(b""), id="empty-file"),
        pytest.param(lambda p, o: p.write_bytes(o[:100] + b"\xff" * (len(o) - 100)), id="torn"),
        pytest.param(lambda p, o: p.write_bytes(o[: len(o) // 2]), id="truncated"),
        pytest.param(_foreign, id="foreign-sqlite"),
    ],
)
def test_a_damaged_or_foreign_cache_file_is_rebuilt(tmp_path: Path, damage: object) -> None:
    path = tmp_path / "counts.sqlite3"
    seeded = TokenCache(path)
    seeding = counter(seeded)
    for number in range(300):
        seeding.count(f"seed the file with count {number}")
    seeded.close()
    checkpoint = sqlite3.connect(path)
    checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    checkpoint.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    damage(path, path.read_bytes())  # type: ignore[operator]

    store = TokenCache(path)
    counted = counter(store)
    texts = ["A story file. " * 50, *(f"seed the file with count {n}" for n in range(300))]
    assert [counted.count(t) for t in texts] == [counter(None).count(t) for t in texts]
    store.close()
    # Rebuilt (at once, or on the next start after a damaged page was met): a valid cache
    # file that remembers counts again.
    again = TokenCache(path)
    assert counter(again).count("after the repair") == counter(None).count("after the repair")
    again.close()
    assert again.disabled is None
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    assert counter(TokenCache(path), no_encoder).count("after the repair") > 0


def test_an_impossible_stored_count_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "counts.sqlite3"
    store = TokenCache(path)
    counter(store).count("hello there")
    store.close()
    digest = hashlib.sha256(b"hello there").digest()
    db = sqlite3.connect(path)
    db.execute("UPDATE counts SET tokens = 999 WHERE digest = ?", (digest,))
    db.commit()
    db.close()
    assert counter(TokenCache(path)).count("hello there") == 2


def test_an_unwritable_cache_folder_turns_the_cache_off(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    store = TokenCache(blocker / "promptdeck" / "counts.sqlite3")
    counted = counter(store)
    assert counted.count("still counted") == counter(None).count("still counted")
    counted.flush()
    assert store.disabled is not None and not counted.estimated


def test_the_cache_stays_within_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "counts.sqlite3"
    store = TokenCache(path, max_entries=100)
    counted = counter(store)
    for number in range(700):
        counted.count(f"text number {number}")
    store.close()
    db = sqlite3.connect(path)
    rows = db.execute("SELECT count(*) FROM counts").fetchone()[0]
    db.close()
    assert 0 < rows <= 100
    # The newest counts are the ones kept.
    last = "text number 699"
    assert counter(TokenCache(path), no_encoder).count(last) == counter(None).count(last)


_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from promptdeck.core.tokens.cache import TokenCache
    store = TokenCache(Path(sys.argv[1]))
    tag = sys.argv[2]
    for number in range(3000):
        store.put("o200k_base", f"{tag}-{number}".encode().ljust(32, b"."), number % 50 + 1)
        if number % 97 == 0:
            store.flush()
    store.close()
    print(store.disabled)
    """
)


def test_two_processes_writing_at_once_leave_a_usable_cache(tmp_path: Path) -> None:
    path = tmp_path / "counts.sqlite3"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), tag], stdout=subprocess.PIPE, text=True
        )
        for tag in ("a", "b")
    ]
    outputs = [writer.communicate(timeout=120)[0].strip() for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0]
    assert outputs == ["None", "None"]  # neither had to turn its cache off
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT count(*) FROM counts").fetchone()[0] == 6000
    db.close()
    reader = TokenCache(path)
    for tag in ("a", "b"):
        digest = f"{tag}-2999".encode().ljust(32, b".")
        assert reader.get("o200k_base", digest, 1000) == 2999 % 50 + 1


def test_the_cache_lives_under_xdg_cache_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PROMPTDECK_TOKEN_CACHE", raising=False)
    assert default_path() == tmp_path / "promptdeck" / "token-counts.sqlite3"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".cache" / "promptdeck" / "token-counts.sqlite3"
    monkeypatch.setenv("PROMPTDECK_TOKEN_CACHE", "off")
    assert default_path() is None


def test_the_test_suite_never_uses_the_real_user_cache() -> None:
    path = default_path()
    assert path is not None
    assert not str(path).startswith(str(Path.home() / ".cache"))


def test_a_write_lock_held_elsewhere_keeps_the_counts_and_the_cache_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("promptdeck.core.tokens.store.BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "counts.sqlite3"
    store = TokenCache(path)
    store.put("o200k_base", b"a".ljust(32, b"."), 3)
    store.flush()  # the file exists, with this cache's schema
    other = sqlite3.connect(path, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # another process writing, longer than the busy timeout
    store.put("o200k_base", b"b".ljust(32, b"."), 4)
    store.flush()
    assert store.disabled is None  # busy is a passing state, not a broken cache
    other.execute("ROLLBACK")
    other.close()
    store.close()  # the kept count is written now
    assert TokenCache(path).get("o200k_base", b"b".ljust(32, b"."), 10) == 4
