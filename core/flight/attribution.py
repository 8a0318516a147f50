"""Where a phase's spend went, and what in it looks wasted.

Each request's prompt is what the one before it carried plus what it added. The first
request's prompt is promptdeck's layers and the client's own overhead: where a capture of the
run's client version is kept, the overhead is what that capture measured (the client's system
text, tools, rules files and envelope) and the layers the rest; with none kept, the layers are
``system.md`` and ``user.md`` (their tokens estimated from bytes) and the overhead whatever of
the first request is left, and :attr:`Spend.overhead_from` says which; each later request adds the
previous answer (model output) and its tool results: the files the agent read (per file),
other tool output, subagents' answers; growth with nothing added is the client's overhead. A
request's input dollars are split by those shares, its output is model output, and a subagent's
whole spend is the subagent's. The categories sum, by construction, to the requests' reported
usage; the token split inside a request is an estimate, which :attr:`Spend.basis` says.

Flags: a file read that promptdeck had already injected unchanged (its bytes paid twice, and
the layer that held it), a file read more than once, a cache write mid-phase with its likely
cause, and a request near the window's auto-compact line.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..client_loads import CLIENT_WINDOWS
from ..lean_dataclass import dataclass
from ..tokens.pricing import ModelPrice
from .model import Addition, Request, TurnList

BYTES_PER_TOKEN = 4.0
"""The estimate's ratio of bytes to tokens, for splitting a request's measured prompt."""
COMPACT_SHARE = 0.8
"""A request whose prompt reaches this share of the window is near the auto-compact line."""
WRITE_MARGIN = 1024
"""A cache write this much larger than what the request added is flagged."""
LAYERS = "promptdeck layers"
OVERHEAD = "client overhead"
READS = "agent reads"
TOOLS = "tool output"
SUBAGENTS = "subagents"
OUTPUT = "model output"
CATEGORIES = (LAYERS, OVERHEAD, READS, TOOLS, SUBAGENTS, OUTPUT)
_FILE = re.compile(r'\n  <file path="([^"]*)">\n')
_FILE_READS = ("Read", "read_file", "View")


@dataclass(frozen=True)
class InjectedFile:
    """A file promptdeck put in the prompt: its path, its text's hash, bytes and layer."""

    path: str
    sha256: str
    bytes: int
    layer: str = "Layer-5"


def injected_files(system_text: str) -> dict[str, InjectedFile]:
    """The files of ``system.md``'s ``<file_injections>`` envelope, by path."""
    found: dict[str, InjectedFile] = {}
    matches = list(_FILE.finditer(system_text))
    for match in matches:
        end = system_text.find("\n  </file>", match.end())
        if end < 0:
            continue
        content = system_text[match.end() : end]
        path = (
            match.group(1)
            .replace("&quot;", '"')
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
        )
        data = content.encode("utf-8")
        found[path] = InjectedFile(path, hashlib.sha256(data).hexdigest(), len(data))
    return found


@dataclass(frozen=True)
class Share:
    """One category's (or one file's) part: tokens, and dollars where the price is known."""

    name: str
    tokens: int
    dollars: float | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {"name": self.name, "tokens": self.tokens, "dollars": self.dollars}


@dataclass(frozen=True)
class Spend:
    """Where a run's spend went.

    Attributes:
        categories: each of :data:`CATEGORIES`, in that order.
        reads: the agent's reads, per file (summed over requests).
        total_tokens: the requests' reported usage, summed (what the categories sum to).
        total_dollars: the same priced; None when the model's price is unknown.
        main_tokens: the top-level requests' usage, summed (subagents' left out): what the
            client's own end-of-run usage covers.
        reported_tokens: the run's usage as the client reported it at its end.
        flags: one line per thing that looks wasted.
        basis: how the split inside a request was made.
        unknown: requests whose usage is unknown (not summed in).
        overhead_from: where the client overhead's share of the first request comes from: a
            kept capture of the client's version, or the first request's rest, labelled.
    """

    categories: tuple[Share, ...]
    reads: tuple[Share, ...]
    total_tokens: int
    total_dollars: float | None
    main_tokens: int
    reported_tokens: int | None
    flags: tuple[str, ...]
    basis: str
    unknown: int = 0
    overhead_from: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``show --turns --json``'s ``spend``)."""
        return {
            "categories": [c.to_dict() for c in self.categories],
            "reads": [r.to_dict() for r in self.reads],
            "total_tokens": self.total_tokens,
            "total_dollars": self.total_dollars,
            "main_tokens": self.main_tokens,
            "reported_tokens": self.reported_tokens,
            "flags": list(self.flags),
            "basis": self.basis,
            "unknown_requests": self.unknown,
            "overhead_from": self.overhead_from,
        }


@dataclass(frozen=True)
class SpendInput:
    """What the split needs beyond the turn list.

    Attributes:
        prompt_bytes: ``system.md`` + ``user.md`` in bytes (promptdeck's layers).
        injected: the files promptdeck injected, by project-relative path.
        cwd: the folder the agent ran in (to make its read paths project-relative).
        root: the project root.
        price: the model's prices; None leaves dollars unknown.
        ttl: the cache TTL priced (``5m`` or ``1h``).
        window: the model's context window in tokens.
        overhead_tokens: the client's own overhead as a kept capture of its version measured
            it; None takes the first request's rest.
        overhead_from: where ``overhead_tokens`` comes from (the capture, said for a person).
    """

    prompt_bytes: int
    injected: Mapping[str, InjectedFile]
    cwd: str
    root: Path
    price: ModelPrice | None
    ttl: str = "5m"
    window: int = CLIENT_WINDOWS["claude"]
    overhead_tokens: int | None = None
    overhead_from: str = ""

    @property
    def overhead_basis(self) -> str:
        """Where the client overhead's share of the first request comes from, labelled."""
        if self.overhead_tokens is not None:
            return f"client overhead {self.overhead_tokens:,} tokens from {self.overhead_from}"
        why = f" ({self.overhead_from})" if self.overhead_from else ""
        return (
            "client overhead: whatever of the first request is not promptdeck's prompt, "
            f"no capture of this client version kept{why}"
        )


class _Ledger:
    def __init__(self, given: SpendInput) -> None:
        self.given = given
        self.tokens: dict[str, float] = dict.fromkeys(CATEGORIES, 0.0)
        self.dollars: dict[str, float] = dict.fromkeys(CATEGORIES, 0.0)
        self.reads: dict[str, list[float]] = {}
        self.flags: list[str] = []
        self.unknown = 0

    def rates(self, request: Request) -> tuple[float, float] | None:
        price = self.given.price
        if price is None or not request.known:
            return None
        paid = (
            (request.input_tokens or 0) * price.input
            + (request.cache_read_tokens or 0) * price.cache_read
            + (request.cache_write_tokens or 0) * price.cache_write(self.given.ttl)
        ) / 1e6
        return paid, (request.output_tokens or 0) * price.output / 1e6

    def relative(self, source: str) -> str:
        if not source:
            return source
        path = Path(source) if os.path.isabs(source) else Path(self.given.cwd or ".") / source
        try:
            return Path(os.path.normpath(path)).relative_to(self.given.root).as_posix()
        except ValueError:
            return source

    def key(self, addition: Addition) -> tuple[str, str]:
        if addition.tool in _FILE_READS:
            return READS, self.relative(addition.source)
        if addition.tool in ("Task", "Agent"):
            return SUBAGENTS, ""
        return TOOLS, ""


def _grow(
    ledger: _Ledger, shares: dict[tuple[str, str], float], request: Request, before: Request
) -> None:
    context, previous = request.context_tokens or 0, before.context_tokens or 0
    growth = context - previous
    if growth < 0:  # compacted: what is left keeps its proportions
        scale = context / previous if previous else 0.0
        for key in shares:
            shares[key] *= scale
        return
    carried = min(float(before.output_tokens or 0), float(growth))
    shares[(OUTPUT, "")] = shares.get((OUTPUT, ""), 0.0) + carried
    rest = growth - carried
    weights = [(ledger.key(a), a.bytes) for a in request.added]
    total = sum(w for _, w in weights)
    if not total:
        shares[(OVERHEAD, "")] = shares.get((OVERHEAD, ""), 0.0) + rest
        return
    for key, weight in weights:
        shares[key] = shares.get(key, 0.0) + rest * weight / total


def _first(given: SpendInput, context: float, sub: bool) -> dict[tuple[str, str], float]:
    """The first request's split: a kept capture's measured overhead and the layers the rest,
    else the layers from their bytes and the overhead the rest (a subagent's is all overhead)."""
    if sub:
        return {(LAYERS, ""): 0.0, (OVERHEAD, ""): context}
    if given.overhead_tokens is not None:
        overhead = min(context, float(given.overhead_tokens))
        return {(LAYERS, ""): context - overhead, (OVERHEAD, ""): overhead}
    layers = min(context, given.prompt_bytes / BYTES_PER_TOKEN)
    return {(LAYERS, ""): layers, (OVERHEAD, ""): context - layers}


def _flag_write(ledger: _Ledger, request: Request, before: Request, where: str) -> None:
    written = request.cache_write_tokens or 0
    added = (request.context_tokens or 0) - (before.context_tokens or 0)
    if written <= max(added, 0) + WRITE_MARGIN:
        return
    gap = request.at - before.at if request.at is not None and before.at is not None else None
    ttl_s = 3600 if ledger.given.ttl == "1h" else 300
    if gap is not None and gap > ttl_s:
        cause = f"TTL gap: {gap:.0f} s since the previous request, over the {ledger.given.ttl} TTL"
    elif gap is None:
        cause = "a changed block, or a TTL gap (no times in the record to tell)"
    else:
        cause = "a changed block (more written than the request added, within the TTL)"
    ledger.flags.append(f"cache write mid-phase at {where}: {written:,} tokens written; {cause}")


def _thread(ledger: _Ledger, requests: tuple[Request, ...], path: str, sub: bool) -> None:
    """Split every request of one thread; a subagent's whole spend is the subagent's."""
    shares: dict[tuple[str, str], float] = {}
    before: Request | None = None
    for request in requests:
        where = f"{path}{request.index}"
        for subagent in request.subagents:
            _thread(ledger, subagent.requests, f"{where}.{subagent.tool_use_id[:12]}/", True)
        if not request.known:
            ledger.unknown += 1
            continue
        context = request.context_tokens or 0
        if before is None:
            shares = _first(ledger.given, float(context), sub)
        else:
            _grow(ledger, shares, request, before)
            _flag_write(ledger, request, before, where)
        if context >= COMPACT_SHARE * ledger.given.window:
            ledger.flags.append(
                f"request {where} is near the auto-compact line: {context:,} of "
                f"{ledger.given.window:,} tokens"
            )
        rates = ledger.rates(request)
        whole = sum(shares.values()) or 1.0
        for (category, file), tokens in shares.items():
            name = SUBAGENTS if sub else category
            ledger.tokens[name] += tokens * context / whole
            if rates is not None:
                ledger.dollars[name] += rates[0] * tokens / whole
            if file and not sub:
                entry = ledger.reads.setdefault(file, [0.0, 0.0])
                entry[0] += tokens * context / whole
                entry[1] += rates[0] * tokens / whole if rates is not None else 0.0
        ledger.tokens[SUBAGENTS if sub else OUTPUT] += request.output_tokens or 0
        if rates is not None:
            ledger.dollars[SUBAGENTS if sub else OUTPUT] += rates[1]
        before = request


def _read_flags(ledger: _Ledger, turns: TurnList) -> None:
    reads: dict[str, int] = {}
    twice: set[str] = set()
    for _, request in turns.walk():
        for added in request.added:
            if added.tool not in _FILE_READS:
                continue
            path = ledger.relative(added.source)
            reads[path] = reads.get(path, 0) + 1
            injected = ledger.given.injected.get(path)
            if injected is not None and added.sha256 == injected.sha256 and path not in twice:
                twice.add(path)
                ledger.flags.append(
                    f"read {path}, which promptdeck had already injected unchanged "
                    f"({injected.layer}): {injected.bytes:,} bytes paid twice"
                )
    for path, times in reads.items():
        if times > 1:
            ledger.flags.append(f"read {path} {times} times")


def _rounded(values: dict[str, float], total: int) -> dict[str, int]:
    """Whole tokens that sum to ``total`` (largest remainders take the difference)."""
    floors = {k: int(v) for k, v in values.items()}
    short = total - sum(floors.values())
    for key in sorted(values, key=lambda k: values[k] - floors[k], reverse=True)[: max(short, 0)]:
        floors[key] += 1
    return floors


def spend(turns: TurnList, given: SpendInput) -> Spend:
    """Where the spend of ``turns`` went (see the module's docstring)."""
    ledger = _Ledger(given)
    _thread(ledger, turns.requests, "", False)
    _read_flags(ledger, turns)
    total = sum(
        (r.context_tokens or 0) + (r.output_tokens or 0) for _, r in turns.walk() if r.known
    )
    tokens = _rounded(ledger.tokens, total)
    priced = given.price is not None
    reported = turns.reported
    reported_total = (
        sum(v for v in reported.values() if v is not None)
        if reported and all(v is not None for v in reported.values())
        else None
    )
    return Spend(
        categories=tuple(
            Share(c, tokens[c], ledger.dollars[c] if priced else None) for c in CATEGORIES
        ),
        reads=tuple(
            Share(path, round(t), d if priced else None)
            for path, (t, d) in sorted(ledger.reads.items(), key=lambda kv: -kv[1][0])
        ),
        total_tokens=total,
        total_dollars=sum(ledger.dollars.values()) if priced else None,
        main_tokens=sum(
            (r.context_tokens or 0) + (r.output_tokens or 0) for r in turns.requests if r.known
        ),
        reported_tokens=reported_total,
        flags=tuple(ledger.flags),
        basis=(
            "totals are the requests' reported usage; the split inside a request is estimated "
            f"from bytes (~{BYTES_PER_TOKEN:.0f} bytes a token); {given.overhead_basis}"
        ),
        unknown=ledger.unknown,
        overhead_from=given.overhead_basis,
    )
