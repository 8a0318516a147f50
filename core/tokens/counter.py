"""Exact token and byte meters, with no network.

The encoders are tiktoken's, built offline from bundled ranks (:mod:`.encoding`); on a first
run a command may build one in a second process (:mod:`.encoder_process`). Counts are labelled
with the encoding's name: Anthropic's tokenizer is not public, so an ``o200k_base`` count is
never called a "Claude token" count.

If the encoder cannot be built, counts fall back to a marked estimate (bytes / 4) with a
warning, never a crash.

Exact counts are remembered across processes (:mod:`.cache`): when every count a command
needs is known, the encoder — most of a cold start — is never built. Totals are counted from
their parts (:meth:`TokenCounter.count_joined`), so each byte is encoded about once.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..lean_dataclass import dataclass
from .encoding import build_encoding

if TYPE_CHECKING:
    from .cache import TokenCache

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


_SPLITTABLE = frozenset(("o200k_base", "cl100k_base", "p50k_base", "r50k_base"))
"""Encodings whose pre-tokenizer pattern :meth:`TokenCounter.count_joined` may split (see
there); any other encoding's joined text is counted whole."""
_SYNC = re.compile(r"[A-Za-z0-9] ")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_MIN_SPLIT_CHARS = 512
"""Shorter parts are counted with their neighbours rather than on their own."""


def _first_sync(text: str) -> int | None:
    match = _SYNC.search(text)
    return None if match is None else match.start() + 1


def _last_sync(text: str) -> int | None:
    end = len(text)
    while True:
        space = text.rfind(" ", 0, end)
        if space <= 0:
            return None
        if text[space - 1] in _ALNUM:
            return space
        end = space


_DEFAULT: Any = object()
RECENT_CHARS = 16_000_000
"""The most characters of recently counted texts a counter keeps in memory."""
RECENT_TEXT_CHARS = 12_000_000
"""Longer texts are not kept (their digest is still remembered)."""
_ENCODE_CHUNK_CHARS = 256 * 1024


class TokenCounter:
    """Counts tokens of one encoding, remembering counts by the sha256 of the bytes counted.

    Counts are looked up first in memory, then in the persistent
    :class:`~promptdeck.core.tokens.cache.TokenCache` (shared by every promptdeck process);
    the encoder is built once, lazily, only when a count is not known (or by :meth:`warm`).
    Thread-safe: the app warms it from a worker while the UI shows byte meters.
    """

    def __init__(
        self,
        encoding: str,
        builder: Callable[[str], Any] = build_encoding,
        *,
        cache: TokenCache | None = _DEFAULT,
    ) -> None:
        """Args:
        encoding: the tiktoken encoding's name.
        builder: builds the encoder (tests pass a failing one).
        cache: the persistent cache; by default the user's one when ``builder`` is the real
            encoder (a test's stand-in encoder must never write counts under a real name).
        """
        self.encoding = encoding
        self._builder = builder
        self._encoder: Any = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        self._cache: dict[bytes, int] = {}
        # Recently counted texts themselves: a file read again at the next build is found by
        # Python's own string hash (about ten times faster than sha256 here), without a digest.
        self._recent: OrderedDict[str, int] = OrderedDict()
        self._recent_chars = 0
        self._store_arg = cache
        self._store: TokenCache | None = None
        self._store_ready = False
        self._flushed_at = 0.0
        self.encoded_bytes = 0
        """Bytes given to the encoder so far (what the persistent cache did not answer)."""

    @property
    def ready(self) -> bool:
        """True once the encoder is built (or has failed, so counts are estimates)."""
        return self._encoder is not None or self._failed is not None

    @property
    def built(self) -> bool:
        """True once the encoder has been built (False while every count came from a cache)."""
        return self._encoder is not None

    @property
    def estimated(self) -> bool:
        """True when counts are bytes/4 estimates because the encoder failed to build.

        Never builds the encoder: counts that all came from the cache are exact.
        """
        return self._failed is not None

    @property
    def warning(self) -> str | None:
        """Why counts are estimates, or None when they are exact (never builds the encoder)."""
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
            if self._builder is build_encoding:
                # Built in a child process while this one got ready, when a command started
                # one (see encoder_process); otherwise, or if it failed, built here.
                from .encoder_process import take_encoder_process

                self._encoder = take_encoder_process(self.encoding)
                if self._encoder is not None:
                    return
            try:
                self._encoder = self._builder(self.encoding)
            except Exception as exc:  # any failure degrades to estimates, never a crash
                self._failed = str(exc) or type(exc).__name__

    def _persistent(self) -> TokenCache | None:
        if not self._store_ready:
            store = self._store_arg
            if store is _DEFAULT:
                from .cache import shared_cache

                store = shared_cache() if self._builder is build_encoding else None
            self._store = store
            self._store_ready = True
        return self._store

    def _known(self, digest: bytes, size: int) -> int | None:
        cached = self._cache.get(digest)
        if cached is not None:
            return cached
        store = self._persistent()
        if store is None:
            return None
        value = store.get(self.encoding, digest, size)
        if value is not None:
            self._cache[digest] = value
        return value

    def _remember(self, digest: bytes, value: int) -> None:
        self._cache[digest] = value
        store = self._persistent()
        if store is not None and self._failed is None:
            store.put(self.encoding, digest, value)

    def _recall(self, text: str) -> int | None:
        with self._lock:
            return self._recent.get(text)

    def _note(self, text: str, value: int) -> None:
        if len(text) > RECENT_TEXT_CHARS:
            return
        with self._lock:
            if text in self._recent:
                return
            self._recent[text] = value
            self._recent_chars += len(text)
            while self._recent_chars > RECENT_CHARS and self._recent:
                old, _ = self._recent.popitem(last=False)
                self._recent_chars -= len(old)

    def count(self, text: str) -> int:
        """Exact tokens of ``text`` (special-token strings count as plain text)."""
        recalled = self._recall(text)
        if recalled is not None:
            return recalled
        data = text.encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(data).digest()
        known = self._known(digest, len(data))
        if known is not None:
            self._note(text, known)
            return known
        self.warm()
        if self._encoder is None:
            value = -(-len(data) // ESTIMATE_BYTES_PER_TOKEN)
            self._cache[digest] = value
            return value
        value = self._encode_count(text)
        self.encoded_bytes += len(data)
        self._remember(digest, value)
        self._note(text, value)
        return value

    def _encode_count(self, text: str) -> int:
        """Tokens of ``text`` from the encoder, a long text in pieces cut at sync points (see
        :meth:`count_joined`): the encoder returns one Python int per token, so a 10 MiB text
        whole would hold some 90 MB of them at once."""
        if len(text) <= _ENCODE_CHUNK_CHARS or self.encoding not in _SPLITTABLE:
            return self._ordinary(text)
        total = 0
        start = 0
        while start < len(text):
            cut = _SYNC.search(text, start + _ENCODE_CHUNK_CHARS)
            end = len(text) if cut is None else cut.start() + 1
            total += self._ordinary(text[start:end])
            start = end
        return total

    def _ordinary(self, piece: str) -> int:
        """Tokens of ``piece`` from the encoder here, or from the encoder process."""
        encoder = self._encoder
        if not hasattr(encoder, "encode_ordinary"):  # an EncoderProcess
            try:
                return int(encoder.count(piece))
            except OSError:
                # The child is gone (killed from outside): build the encoder here after all.
                with self._lock:
                    if self._encoder is encoder:
                        self._encoder = None
                self.warm()
                if self._encoder is None:
                    size = len(piece.encode("utf-8", "surrogatepass"))
                    return -(-size // ESTIMATE_BYTES_PER_TOKEN)
                return self._ordinary(piece)
        return len(encoder.encode_ordinary(piece))

    def count_joined(self, parts: Sequence[str], whole: str | None = None) -> int:
        """Exact tokens of ``"".join(parts)``, encoding each byte about once.

        Each long part is counted on its own (so its count is shared with the rows that show
        it), and only the short stretches around the seams are encoded again. This is exact
        because of how the encodings' pre-tokenizers split text: no piece ever spans an ASCII
        letter or digit followed by a space, and the split after that letter never looks
        further than the space. So a text cut at such a point (a *sync point*) has exactly
        the tokens of its two halves. A long part is cut at its first and last sync points:
        its middle keeps the tokens it has alone, and the stretch from its last sync point to
        the next part's first (tail, joiners, short parts, head) is counted as one string.
        Tests compare the result with a whole count on random text.

        ``whole``, when the caller already holds ``"".join(parts)``, saves joining it again.
        """
        joined = "".join(parts) if whole is None else whole
        recalled = self._recall(joined)
        if recalled is not None:
            return recalled
        if self.encoding not in _SPLITTABLE:
            return self.count(joined)
        # The whole is not looked up by digest (hashing it costs as much as hashing its
        # parts again): its parts' counts, remembered on their own, give it exactly.
        total = 0
        glue: list[str] = []
        for part in parts:
            first = _first_sync(part) if len(part) >= _MIN_SPLIT_CHARS else None
            last = _last_sync(part) if first is not None else None
            if first is None or last is None:
                glue.append(part)
                continue
            head, tail = part[:first], part[last:]
            glue.append(head)
            total += self.count("".join(glue))
            total += self.count(part) - self.count(head) - self.count(tail)
            glue = [tail]
        total += self.count("".join(glue))
        if self._failed is not None:
            return -(-len(joined.encode("utf-8", "surrogatepass")) // ESTIMATE_BYTES_PER_TOKEN)
        self._note(joined, total)
        return total

    def flush(self, *, at_most_every: float = 0.0) -> None:
        """Write new counts to the persistent cache (they are also written at exit).

        ``at_most_every`` seconds: skip the write when the last one was more recent.
        """
        store = self._persistent()
        if store is None:
            return
        now = time.monotonic()
        if now - self._flushed_at >= at_most_every:
            self._flushed_at = now
            store.flush()

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
