"""The cache as the client caches: a model built from the request a capture recorded.

**Anthropic** (Claude Code) caches at the request's breakpoints (``cache_control``), in the
order tools → system → messages. A later request reads a cache entry only at a breakpoint or
an earlier block boundary (looking back at most :data:`LOOKBACK_BLOCKS` blocks) where an
earlier request wrote one, and only when every block before it is byte for byte the same: a
prefix inside a block is never served. Claude Code 2.1.197 sends ``system`` as three blocks —
a billing header, a short identity block (breakpoint) and one large block (breakpoint) holding
its own text, promptdeck's whole system prompt and then its ``gitStatus`` — so the prefix two
phases share ends at the last breakpoint before the first block that differs.

**OpenAI** (Codex) caches by itself: an exact prefix of at least 1,024 tokens, in steps of
128 tokens (:func:`openai_cached`).

:func:`cache_layout` lays the captured request out as blocks, each with its owner (the
client's stable text, promptdeck's, a dynamic part) and its breakpoint; :func:`shared_prefix`
predicts what a second phase reads of the first one's cache by rebuilding both requests from
the captured one with each phase's own prompt, and the client's dynamic parts as the first
phase leaves them (its ``gitStatus`` changes once a phase changed a file or wrote a status
back). A read is predicted only where the provider serves one.

Claude Code's billing header changes with the first user message (a fingerprint of it); it is
billing metadata, which Anthropic's own API does not count in the cached prefix (the client's
turns read their cache with it changing), so it is left out of the comparison and said to be.
A third-party endpoint that caches plain prefixes would miss on it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

from ..errors import PromptdeckError
from ..layers.delivery import STATUS_FILES, written_paths
from ..lean_dataclass import dataclass
from ..project.workspace import Workspace
from ..prompt.compose import compose_prompt
from ..prompt.request import ComposedPrompt, PromptRequest
from ..tokens.counter import TokenCounter
from ..tokens.pricing import load_prices
from .model import Capture, compact_json
from .parts import request_streams

LOOKBACK_BLOCKS = 20
"""How many blocks before a breakpoint Anthropic looks back for an entry it wrote."""
OPENAI_MIN_TOKENS = 1024
OPENAI_STEP_TOKENS = 128
BILLING = "x-anthropic-billing-header:"
GIT_STATUS = re.compile(r"(?:^|\n)(?:# )?gitStatus(?::|\n)")
"""Claude Code's git status: a ``gitStatus:`` section closing its system prompt, or a
``# gitStatus`` section of its first user message's context (with
``--exclude-dynamic-system-prompt-sections``)."""
_NEXT_SECTION = re.compile(r"\n# ")
DATE_MARK = "Today's date is "
ENVIRONMENT = "<environment_context>"
_FILE_PATH = re.compile(r'<file path="([^"\n]*)">\n')


@dataclass(frozen=True)
class DynamicPart:
    """A part of the client's request that changes between requests.

    Attributes:
        name: ``gitStatus``, ``date``, ``billing header``.
        block: where it is (``system[2]``).
        bytes: its size.
        changed_by: what changes it, for a person.
        in_cache_key: False for what the provider leaves out of the cached prefix.
    """

    name: str
    block: str
    bytes: int
    changed_by: str
    in_cache_key: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "name": self.name,
            "block": self.block,
            "bytes": self.bytes,
            "changed_by": self.changed_by,
            "in_cache_key": self.in_cache_key,
        }


@dataclass(frozen=True)
class CacheBlock:
    """One block of the request, as the provider's cache sees it.

    Attributes:
        where: ``tools``, ``system[1]``, ``messages[0][1]``.
        text: what the block holds (a tool list: its compact JSON).
        bytes: its size.
        tokens: its tokens with promptdeck's encoding (an estimate of the provider's).
        breakpoint: the request asks for a cache entry here.
        holds: whose text it holds (``client``, ``promptdeck``, a dynamic part's name).
        in_cache_key: False for a block the provider leaves out of the prefix it compares.
    """

    where: str
    text: str
    bytes: int
    tokens: int
    breakpoint: bool
    holds: tuple[str, ...]
    in_cache_key: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (without the text)."""
        return {
            "where": self.where,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "breakpoint": self.breakpoint,
            "holds": list(self.holds),
            "in_cache_key": self.in_cache_key,
        }


@dataclass(frozen=True)
class CacheLayout:
    """A captured request laid out as the provider caches it.

    Attributes:
        provider: ``anthropic`` or ``openai``.
        client: the client and version captured (``claude 2.1.197``).
        blocks: the request's blocks in cache order.
        dynamic: the client's parts that change between requests.
        ours: promptdeck's system text as the capture found it (to swap per phase).
    """

    provider: str
    client: str
    blocks: tuple[CacheBlock, ...]
    dynamic: tuple[DynamicPart, ...]
    ours: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "provider": self.provider,
            "client": self.client,
            "blocks": [block.to_dict() for block in self.blocks],
            "dynamic": [part.to_dict() for part in self.dynamic],
        }


@dataclass(frozen=True)
class SharedPrefix:
    """What a phase reads of the previous phase's cache, predicted.

    Attributes:
        before: the phase that wrote the cache.
        after: the phase that reads it.
        bytes: the prefix read, up to the block boundary where it is served.
        tokens: that prefix in tokens (promptdeck's encoding).
        parts_at: the first block that differs (``system[2]``; ``""`` when none does).
        why: what makes it differ (``promptdeck's system prompt``, ``gitStatus``).
    """

    before: str
    after: str
    bytes: int
    tokens: int
    parts_at: str
    why: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "before": self.before,
            "after": self.after,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "parts_at": self.parts_at,
            "why": self.why,
        }


def _texts(content: Any) -> list[tuple[dict[str, Any] | None, str]]:
    if isinstance(content, str):
        return [(None, content)]
    found: list[tuple[dict[str, Any] | None, str]] = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict):
            text = block.get("text")
            found.append((block, text if isinstance(text, str) else compact_json(block)))
    return found


def _raw_blocks(body: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """``(where, text, breakpoint)`` for each block, in cache order."""
    raw: list[tuple[str, str, bool]] = []
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        marked = any(isinstance(t, dict) and t.get("cache_control") for t in tools)
        raw.append(("tools", compact_json(tools), marked))
    if isinstance(body.get("instructions"), str):
        raw.append(("instructions", body["instructions"], False))
    for index, (block, text) in enumerate(_texts(body.get("system"))):
        raw.append((f"system[{index}]", text, bool(block and block.get("cache_control"))))
    name = "messages" if "messages" in body else "input"
    messages = body.get("messages") or body.get("input") or []
    for m_index, message in enumerate(messages if isinstance(messages, list) else ()):
        if not isinstance(message, dict):
            continue
        if message.get("type") == "additional_tools" and message.get("tools"):
            raw.append((f"{name}[{m_index}] tools", compact_json(message["tools"]), False))
            continue
        for b_index, (block, text) in enumerate(_texts(message.get("content"))):
            where = f"{name}[{m_index}][{b_index}]"
            raw.append((where, text, bool(block and block.get("cache_control"))))
    return raw


def _dynamic(where: str, text: str) -> list[DynamicPart]:
    found = []
    if text.startswith(BILLING):
        found.append(
            DynamicPart(
                "billing header",
                where,
                len(text.encode("utf-8")),
                "each phase (a fingerprint of its first user message); Anthropic's API "
                "leaves it out of the cached prefix",
                in_cache_key=False,
            )
        )
    git = GIT_STATUS.search(text)
    if git is not None:
        after = _NEXT_SECTION.search(text, git.end())
        size = len(text[git.start() : after.start() if after else len(text)].encode("utf-8"))
        found.append(
            DynamicPart(
                "gitStatus",
                where,
                size,
                "every phase that changes a file or writes a status back (git status), and "
                "every commit",
            )
        )
    if ENVIRONMENT in text:
        found.append(
            DynamicPart(
                "environment",
                where,
                len(text.encode("utf-8")),
                "the working folder and the day (Codex's <environment_context>)",
            )
        )
        return found
    at = text.find(DATE_MARK)
    if at >= 0:
        end = text.find("\n", at)
        line = text[at : end if end >= 0 else len(text)]
        found.append(DynamicPart("date", where, len(line.encode("utf-8")), "each day"))
    return found


def _ours_in(text: str, ours: str) -> bool:
    return bool(ours) and ours in text


def cache_layout(capture: Capture, ours: str, counter: TokenCounter) -> CacheLayout | None:
    """The captured request as blocks (see the module's description); ``ours`` is
    promptdeck's system prompt as sent in the capture. None when the capture kept no body."""
    body = capture.request.json()
    if not isinstance(body, dict):
        return None
    provider = "openai" if capture.client == "codex" else "anthropic"
    blocks: list[CacheBlock] = []
    dynamic: list[DynamicPart] = []
    for where, text, marked in _raw_blocks(body):
        parts = _dynamic(where, text)
        dynamic.extend(parts)
        holds = (["promptdeck"] if _ours_in(text, ours) else []) + [p.name for p in parts]
        own = text.replace(ours, "") if _ours_in(text, ours) else text
        if own.strip() and not text.startswith(BILLING):
            holds.insert(0, "client")
        in_key = provider != "anthropic" or not text.startswith(BILLING)
        tokens = counter.count(text)
        blocks.append(
            CacheBlock(where, text, len(text.encode("utf-8")), tokens, marked, tuple(holds), in_key)
        )
    client = f"{capture.client} {capture.client_version}"
    return CacheLayout(provider, client, tuple(blocks), tuple(dynamic), ours)


def rebuilt(layout: CacheLayout, ours: str, user: str, old_user: str, git_mark: str) -> list[str]:
    """The layout's block texts with promptdeck's system prompt ``ours``, its user turn
    ``user`` (for ``old_user``) and ``git_mark`` added to the ``gitStatus`` (a changed tree)."""
    texts = []
    for block in layout.blocks:
        text = block.text
        if layout.ours and layout.ours in text:
            text = text.replace(layout.ours, ours)
        if old_user and old_user in text:
            text = text.replace(old_user, user)
        if git_mark and GIT_STATUS.search(text):
            text = text + git_mark
        texts.append(text)
    return texts


def openai_cached(tokens: int) -> int:
    """What OpenAI serves of a shared prefix of ``tokens``: nothing under 1,024, else the
    prefix rounded down to a 128-token step."""
    if tokens < OPENAI_MIN_TOKENS:
        return 0
    return tokens - (tokens - OPENAI_MIN_TOKENS) % OPENAI_STEP_TOKENS


def shared_prefix(
    layout: CacheLayout,
    counter: TokenCounter,
    phases: tuple[str, str],
    first: tuple[str, str],
    second: tuple[str, str],
    captured_user: str,
    *,
    tree_changes: bool,
) -> SharedPrefix:
    """What ``phases[1]`` reads of ``phases[0]``'s cache: each phase's ``(system, user)`` put
    in the captured request, the ``gitStatus`` changed when ``tree_changes`` (the first phase
    changed a file or wrote its status back)."""
    a = rebuilt(layout, first[0], first[1], captured_user, "")
    mark = "\n M (written by the phase)" if tree_changes else ""
    b = rebuilt(layout, second[0], second[1], captured_user, mark)
    differ = next(
        (
            index
            for index, block in enumerate(layout.blocks)
            if block.in_cache_key and a[index] != b[index]
        ),
        len(a),
    )
    parts_at, why = "", ""
    if differ < len(a):
        block = layout.blocks[differ]
        parts_at = block.where
        why = _why(a[differ], b[differ], layout.ours)
    if layout.provider == "openai":
        tokens = sum(counter.count(text) for text in b[:differ])
        if differ < len(a):
            tokens += counter.count(_common(a[differ], b[differ]))
        cached = openai_cached(tokens)
        size = _bytes_for_tokens(b, counter, cached)
        return SharedPrefix(*phases, size, cached, parts_at, why)
    served = _served_until(layout.blocks, differ)
    shown = [b[i] for i in range(served) if layout.blocks[i].in_cache_key]
    size = sum(len(text.encode("utf-8")) for text in shown)
    tokens = sum(counter.count(text) for text in shown)
    return SharedPrefix(*phases, size, tokens, parts_at, why)


def measured_shared(
    first: dict[str, Any], second: dict[str, Any], counter: TokenCounter, provider: str
) -> tuple[int, int, str]:
    """What ``second`` (a request body as sent) reads of ``first``'s cache, measured the way
    :func:`shared_prefix` predicts it: bytes, tokens and the first block that differs."""
    a, b = _raw_blocks(first), _raw_blocks(second)
    keyed = [provider != "anthropic" or not text.startswith(BILLING) for _, text, _ in b]
    differ = next(
        (
            i
            for i in range(min(len(a), len(b)))
            if keyed[i] and (a[i][0], a[i][1]) != (b[i][0], b[i][1])
        ),
        min(len(a), len(b)),
    )
    parts_at = b[differ][0] if differ < len(b) else ""
    if provider == "openai":
        tokens = sum(counter.count(text) for _, text, _ in b[:differ])
        if differ < min(len(a), len(b)):
            tokens += counter.count(_common(a[differ][1], b[differ][1]))
        cached = openai_cached(tokens)
        return _bytes_for_tokens([t for _, t, _ in b], counter, cached), cached, parts_at
    marks = [i for i, (_, _, marked) in enumerate(b) if marked and i < differ]
    served = marks[-1] + 1 if marks else 0
    shown = [text for i, (_, text, _) in enumerate(b[:served]) if keyed[i]]
    return (
        sum(len(text.encode("utf-8")) for text in shown),
        sum(counter.count(text) for text in shown),
        parts_at,
    )


def _served_until(blocks: Sequence[CacheBlock], differ: int) -> int:
    """How many leading blocks a read covers: up to the last breakpoint before ``differ``
    (a boundary within the lookback of a later breakpoint counts only where an entry was
    written, and entries are written at breakpoints)."""
    marks = [index for index, block in enumerate(blocks) if block.breakpoint and index < differ]
    return marks[-1] + 1 if marks else 0


def _common(a: str, b: str) -> str:
    size = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        size += 1
    return a[:size]


def _bytes_for_tokens(texts: Sequence[str], counter: TokenCounter, tokens: int) -> int:
    """The bytes of the leading ``tokens`` of ``texts``: whole blocks while they fit, then
    the share of the next block (token boundaries inside a block are estimated)."""
    size, left = 0, tokens
    for text in texts:
        count = counter.count(text)
        data = len(text.encode("utf-8"))
        if count <= left:
            size, left = size + data, left - count
            continue
        return size + (int(data * left / count) if count else 0)
    return size


def _why(a: str, b: str, ours: str) -> str:
    at = len(_common(a, b))
    start = a.find(ours) if ours else -1
    if start >= 0 and start <= at < start + len(ours):
        return "promptdeck's system prompt"
    git = GIT_STATUS.search(a)
    if git is not None and at >= git.start():
        return "gitStatus"
    return "the client's text"


def layout_lines(layout: CacheLayout) -> list[str]:
    """The layout for a person, one line per block and per dynamic part."""
    lines = [f"{layout.client} · {layout.provider} cache · blocks in cache order:"]
    for block in layout.blocks:
        mark = "breakpoint" if block.breakpoint else ""
        key = "" if block.in_cache_key else " (not in the cache key)"
        lines.append(
            f"  {block.where:<16} {block.bytes:>9,} B {block.tokens:>8,} tok  "
            f"{'+'.join(block.holds) or '-':<30} {mark}{key}"
        )
    for part in layout.dynamic:
        lines.append(
            f"  dynamic: {part.name} in {part.block}, {part.bytes:,} B, changes with "
            f"{part.changed_by}"
        )
    return lines


@dataclass(frozen=True)
class ClientCache:
    """The client's cache across a story's phases, predicted from a capture.

    Attributes:
        layout: the captured request laid out as the provider caches it.
        pairs: what each phase reads of the previous one's cache.
        notes: what the prediction assumed (the capture's own prompt not found, …).
        moved: the injected files cache-aware delivery keeps out of the shared system
            block because a phase writes them.
    """

    layout: CacheLayout
    pairs: tuple[SharedPrefix, ...]
    notes: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            **self.layout.to_dict(),
            "pairs": [pair.to_dict() for pair in self.pairs],
            "moved_out_of_shared_block": list(self.moved),
            "notes": list(self.notes),
        }


def after_writes(prompt: ComposedPrompt) -> tuple[str, str]:
    """``prompt``'s system prompt and user turn as they read once the phase before it wrote
    its files (:func:`~promptdeck.core.layers.delivery.written_paths`, ``sprint-status.yaml``):
    each such file injected is marked changed where its text starts (the status line is near
    the top; the records are appended, which changes the block all the same)."""
    written = set(written_paths(prompt.compose_input)) if prompt.compose_input else set()
    texts = []
    for text in (prompt.system, prompt.user):
        for path in _injected_paths(text):
            name = path.rsplit("/", 1)[-1]
            if path in written or name in STATUS_FILES:
                head = f'<file path="{path}">\n'
                text = text.replace(head, head + "(written by the previous phase)\n", 1)
        texts.append(text)
    return texts[0], texts[1]


def _injected_paths(text: str) -> list[str]:
    return [match.group(1) for match in _FILE_PATH.finditer(text)]


def client_cache(
    workspace: Workspace,
    capture: Capture,
    prompts: Sequence[ComposedPrompt],
    counter: TokenCounter,
) -> ClientCache | None:
    """The client's cache across ``prompts`` (a story's phases in order, composed as they
    will run), from ``capture``; None when the capture kept no request body. Below the
    captured model's smallest cacheable prefix (the price table's, Anthropic) nothing is
    read."""
    price = load_prices(workspace).find(capture.model)
    minimum = price.min_cacheable_tokens if price is not None else None
    notes: list[str] = []
    captured = _captured_prompt(workspace, capture, prompts)
    if captured is None:
        notes.append(
            "the capture's own prompt is not in its request any more (the plan changed since): "
            "capture again for an exact layout"
        )
        ours, user = "", ""
    else:
        ours, user = captured.system, captured.user
    layout = cache_layout(capture, ours, counter)
    if layout is None:
        return None
    pairs = []
    for before, after in itertools.pairwise(prompts):
        pairs.append(
            shared_prefix(
                layout,
                counter,
                (before.request.phase, after.request.phase),
                (before.system, before.user),
                after_writes(after),
                user,
                tree_changes=True,
            )
        )
    if minimum and layout.provider == "anthropic":
        for index, pair in enumerate(pairs):
            if 0 < pair.tokens < minimum:
                pairs[index] = SharedPrefix(
                    pair.before,
                    pair.after,
                    0,
                    0,
                    pair.parts_at,
                    f"{pair.why}; the {pair.tokens:,} tokens before it are under the model's "
                    f"{minimum:,}-token minimum",
                )
    body = capture.request.json()
    if layout.provider == "openai" and isinstance(body, dict) and body.get("prompt_cache_key"):
        notes.append(
            "Codex sends a prompt_cache_key of its own per run: OpenAI routes requests by "
            "it, so a read across phases is likely, not assured"
        )
    moved = sorted({path for p in prompts if p.delivered for path in p.delivered.moved})
    return ClientCache(layout, tuple(pairs), tuple(notes), tuple(moved))


def _captured_prompt(
    workspace: Workspace, capture: Capture, prompts: Sequence[ComposedPrompt]
) -> ComposedPrompt | None:
    """The prompt the capture sent, composed again (either delivery), when its system prompt
    is in the captured request."""
    system = request_streams(capture.request.json())[0]
    known = [p for p in prompts if p.request.phase == capture.phase]
    for delivery in ("layered", "cache-aware"):
        request = PromptRequest(capture.story_id, capture.phase, delivery=delivery)
        try:
            known.append(compose_prompt(workspace, None, request, count_tokens=False))
        except PromptdeckError:
            break
    for prompt in known:
        if prompt.system and prompt.system in system:
            return prompt
    return None
