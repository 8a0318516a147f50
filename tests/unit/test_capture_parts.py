"""A captured request taken apart (core/capture/parts.py): the parts sum to the body's bytes in
both APIs' shapes, promptdeck's text is split at compose's own layer boundaries, the rules files
the client loaded are parts named by their paths (a cut one says how much was sent), and text
that arrives twice is flagged with its parts and bytes."""

from __future__ import annotations

import json

from promptdeck.core.capture import (
    CapturedRequest,
    RulesText,
    duplicated_text,
    split_request,
)
from promptdeck.core.layers.delivery import Delivered, Segment
from promptdeck.core.tokens import get_counter

COUNTER = get_counter("o200k_base")
RULES = "# Rules\n\nKeep every function small and name it after what it does, never how.\n"
LAYERED = Delivered(
    "layered",
    (
        Segment("Layer-0A", "# Instructions\nÜberprüfe alles."),
        Segment("joiner", "\n\n"),
        Segment("Layer-0B", "<rules>\n" + RULES + "</rules>"),
        Segment("joiner", "\n\n"),
        Segment("Layer-5", "## Story\nParse lines.\n\n"),
        Segment("Layer-5:files", "<file_injections>x</file_injections>"),
    ),
    (Segment("task", "Implement story 1.2"),),
)


def _request(body: object, path: str = "/v1/messages?beta=true") -> CapturedRequest:
    data = json.dumps(body).encode("utf-8")
    return CapturedRequest("POST", path, data, len(data))


def _claude_body(system: str) -> dict[str, object]:
    reminder = f"<system-reminder>\nContents of /p/CLAUDE.md:\n\n{RULES}</system-reminder>"
    return {
        "model": "claude-x",
        "system": [
            {"type": "text", "text": "You are a client."},
            {"type": "text", "text": "Client rules.\n\n" + system},
        ],
        "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": reminder},
                    {"type": "text", "text": "Implement story 1.2"},
                ],
            }
        ],
        "stream": True,
    }


def test_the_parts_sum_to_the_request_and_ours_is_split_at_the_layers() -> None:
    request = _request(_claude_body(LAYERED.system_text))
    parts = split_request(request, LAYERED, [RulesText("CLAUDE.md", RULES)], COUNTER)
    named = {part.name: part for part in parts}
    assert sum(part.bytes for part in parts) == request.size
    assert named["Layer-0A Instructions"].text == "# Instructions\nÜberprüfe alles."
    assert named["Layer-0A Instructions"].bytes == len("# Instructions\nÜberprüfe alles.".encode())
    # The files are Layer-5's own: one part per layer, eight at most.
    assert named["Layer-5 Context"].text.endswith("</file_injections>")
    assert named["layer joiners"].bytes == 4
    assert named["user turn"].text == "Implement story 1.2" and named["user turn"].kind == "user"
    assert named["client system"].text == "You are a client.Client rules.\n\n"
    assert named["CLAUDE.md"].kind == "rules" and named["CLAUDE.md"].text == RULES
    assert "Contents of /p/CLAUDE.md" in named["client context"].text
    assert RULES not in named["client context"].text
    assert named["tools"].bytes > 0 and named["envelope"].bytes > 0
    layer_parts = [part for part in parts if part.kind == "promptdeck"]
    assert "".join(p.text for p in layer_parts if p.name != "layer joiners")
    assert sum(p.bytes for p in layer_parts) == len(LAYERED.system_text.encode("utf-8"))


def test_a_responses_request_from_codex_is_split_the_same_way() -> None:
    agents = f"# AGENTS.md instructions for /p\n\n<INSTRUCTIONS>\n{RULES[:70]}\n</INSTRUCTIONS>"
    body = {
        "model": "gpt-5.5",
        "input": [
            {"type": "additional_tools", "role": "developer", "tools": [{"name": "shell"}]},
            {"type": "message", "role": "developer", "content": [{"text": "Codex base prompt."}]},
            {
                "type": "message",
                "role": "developer",
                "content": [{"text": LAYERED.system_text}, {"text": "<permissions/>"}],
            },
            {"type": "message", "role": "user", "content": [{"text": agents}]},
            {"type": "message", "role": "user", "content": [{"text": "Implement story 1.2"}]},
        ],
    }
    request = _request(body, "/v1/responses")
    parts = split_request(request, LAYERED, [RulesText("AGENTS.md", RULES)], COUNTER)
    named = {part.name: part for part in parts}
    assert sum(part.bytes for part in parts) == request.size
    assert named["client system"].text == "Codex base prompt.<permissions/>"
    assert named["tools"].text == '[{"name":"shell"}]'
    # Codex sent only the start of the file: the part is what was sent, and says so.
    assert named["AGENTS.md"].text == RULES[:70]
    assert named["AGENTS.md"].note == f"70 of its {len(RULES)} bytes sent"
    assert named["Layer-0B Workspace rules"].text.startswith("<rules>")


def test_text_that_is_not_ours_is_all_the_clients() -> None:
    request = _request(
        {"system": "only the client", "messages": [{"role": "user", "content": "hi"}]}
    )
    parts = split_request(request, LAYERED, [], COUNTER)
    named = {part.name: part for part in parts}
    assert not any(part.kind == "promptdeck" for part in parts)
    assert named["client system"].text == "only the client"
    assert named["client context"].text == "hi"
    assert sum(part.bytes for part in parts) == request.size


def test_a_cut_request_is_one_part_said_to_be_cut() -> None:
    request = CapturedRequest("POST", "/v1/messages", b'{"system": "x', 99_000_000, cut=True)
    (part,) = split_request(request, LAYERED, [], COUNTER)
    assert part.bytes == 99_000_000 and part.kind == "envelope"
    assert part.note == "cut at the memory bound: not taken apart"


def test_the_same_rules_in_a_rules_file_and_layer_0b_arrive_twice() -> None:
    request = _request(_claude_body(LAYERED.system_text))
    parts = split_request(request, LAYERED, [RulesText("CLAUDE.md", RULES)], COUNTER)
    (duplicate,) = duplicated_text(parts)
    assert {duplicate.first, duplicate.second} == {"CLAUDE.md", "Layer-0B Workspace rules"}
    repeated = "Keep every function small and name it after what it does, never how."
    assert duplicate.paragraphs == 1 and duplicate.bytes == len(repeated)
    assert duplicate.line() == (
        f"1 paragraph arrives twice ({len(repeated)} bytes): in CLAUDE.md and again in "
        "Layer-0B Workspace rules"
    )


def test_short_and_whitespace_only_differences() -> None:
    # Whitespace is normalised; a short line (a heading) is never counted as a repeat.
    text_a = "# Rules\n\nAlways   run the tests before saying a story is done, all of them.\n"
    text_b = "# Rules\n\nAlways run the tests before saying\na story is done, all of them."
    request = _request(
        {
            "system": text_a,
            "messages": [{"role": "user", "content": "unrelated words of the user"}],
        }
    )
    parts = split_request(request, LAYERED, [], COUNTER)
    base = {part.name: part for part in parts}["client system"]
    other = type(base)("AGENTS.md", "rules", text_b, len(text_b), 0)
    (duplicate,) = duplicated_text([base, other])
    assert duplicate.paragraphs == 1
    assert duplicated_text([base]) == ()


def test_cache_aware_layers_are_found_in_the_user_turn() -> None:
    delivered = Delivered(
        "cache-aware",
        (Segment("Layer-0A", "# Instructions"), Segment("joiner", "\n\n"), Segment("Layer-1", "G")),
        (
            Segment("Layer-2", "## Contract"),
            Segment("joiner", "\n\n"),
            Segment("task", "Implement story 1.2"),
        ),
    )
    body = {
        "system": [{"type": "text", "text": "Client.\n\n" + delivered.system_text}],
        "messages": [{"role": "user", "content": delivered.user_text}],
    }
    request = _request(body)
    parts = {part.name: part for part in split_request(request, delivered, [], COUNTER)}
    assert parts["Layer-2 Contract"].text == "## Contract"
    assert parts["user turn"].text == "Implement story 1.2"
    assert parts["layer joiners"].bytes == 4
    assert parts["client context"].bytes == 0 and parts["client system"].text == "Client.\n\n"
    assert sum(part.bytes for part in parts.values()) == request.size
