"""The cache as the client caches it, from a captured request: Anthropic reads only at a
breakpoint whose whole prefix is unchanged (never inside a block), the client's gitStatus ends
the shared prefix when it shares a block with promptdeck's text, and OpenAI serves 1,024 tokens
and up in 128-token steps."""

from __future__ import annotations

import json

from promptdeck.core.capture import Capture, CapturedRequest
from promptdeck.core.capture.cache import cache_layout, openai_cached, shared_prefix
from promptdeck.core.tokens import get_counter

OURS = "# promptdeck instructions\n\n" + "Shared layer text. " * 200
CLIENT = "You are an interactive agent. " * 300
TOOLS = [{"name": "Read", "description": "Reads a file. " * 100, "input_schema": {}}]


def _capture(system: list[dict[str, object]], client: str = "claude") -> Capture:
    body = {
        "model": "claude-opus-4-8",
        "tools": TOOLS,
        "system": system,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Today's date is 2026-11-28."},
                    {"type": "text", "text": "TASK", "cache_control": {}},
                ],
            }
        ],
    }
    data = json.dumps(body).encode()
    request = CapturedRequest("POST", "/v1/messages", data, len(data))
    return Capture(
        client, "2.1.197", "1-3", "dev", "claude-opus-4-8", 1_000_000, request, (), (), 1, 0.0
    )


def _system(git: bool) -> list[dict[str, object]]:
    tail = "\ngitStatus: Current branch: main\nStatus:\n(clean)" if git else ""
    return [
        {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197.04a;"},
        {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": CLIENT + OURS + tail, "cache_control": {"type": "ephemeral"}},
    ]


def test_the_git_status_in_promptdecks_block_ends_the_shared_prefix_at_the_breakpoint_before() -> (
    None
):
    counter = get_counter()
    layout = cache_layout(_capture(_system(git=True)), OURS, counter)
    assert layout is not None
    assert [b.where for b in layout.blocks][:4] == ["tools", "system[0]", "system[1]", "system[2]"]
    assert layout.blocks[3].holds == ("client", "promptdeck", "gitStatus")
    assert not layout.blocks[1].in_cache_key
    names = {part.name for part in layout.dynamic}
    assert names == {"billing header", "gitStatus", "date"}
    shared = shared_prefix(
        layout,
        counter,
        ("dev", "review"),
        (OURS, "TASK"),
        (OURS, "TASK 2"),
        "TASK",
        tree_changes=True,
    )
    # Same promptdeck text, but the tree changed: the big block differs, the read stops at
    # system[1]'s breakpoint (tools + identity block; the billing header is not compared).
    assert shared.parts_at == "system[2]" and shared.why == "gitStatus"
    expected = [layout.blocks[0], layout.blocks[2]]
    assert shared.bytes == sum(b.bytes for b in expected)


def test_without_the_dynamic_sections_the_whole_system_block_is_read() -> None:
    counter = get_counter()
    layout = cache_layout(_capture(_system(git=False)), OURS, counter)
    assert layout is not None
    shared = shared_prefix(
        layout,
        counter,
        ("dev", "review"),
        (OURS, "TASK"),
        (OURS, "TASK 2"),
        "TASK",
        tree_changes=True,
    )
    assert shared.parts_at == "messages[0][1]"
    assert shared.bytes == sum(b.bytes for b in layout.blocks[:4] if b.in_cache_key)


def test_a_change_inside_a_block_is_never_a_partial_read() -> None:
    counter = get_counter()
    layout = cache_layout(_capture(_system(git=False)), OURS, counter)
    assert layout is not None
    changed = OURS[:-10] + "different!"
    shared = shared_prefix(
        layout,
        counter,
        ("dev", "review"),
        (OURS, "TASK"),
        (changed, "TASK"),
        "TASK",
        tree_changes=False,
    )
    assert shared.parts_at == "system[2]" and shared.why == "promptdeck's system prompt"
    assert shared.bytes == layout.blocks[0].bytes + layout.blocks[2].bytes


def test_openai_serves_1024_tokens_and_up_in_128_token_steps() -> None:
    assert openai_cached(1023) == 0
    assert openai_cached(1024) == 1024
    assert openai_cached(1151) == 1024
    assert openai_cached(1152) == 1152
