"""A captured request taken apart (core/capture/session.py): the parts sum to the body's bytes,
promptdeck's system text is found inside the client's system blocks, and a cut or non-JSON body
is one clear error."""

from __future__ import annotations

import json

import pytest
from promptdeck.core.capture import CapturedRequest, CaptureError, request_parts
from promptdeck.core.tokens import get_counter


def _request(body: object) -> CapturedRequest:
    data = json.dumps(body).encode("utf-8")
    return CapturedRequest("POST", "/v1/messages?beta=true", data, len(data))


def test_the_parts_sum_to_the_request_and_ours_is_split_out() -> None:
    ours = "# Layer 0A\nÜberprüfe alles.\n"
    body = {
        "model": "claude-x",
        "system": [
            {"type": "text", "text": "You are a client."},
            {"type": "text", "text": "Client rules.\n\n" + ours},
        ],
        "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Implement story 1.2"}]},
            {"role": "assistant", "content": "ok"},
        ],
        "stream": True,
    }
    request = _request(body)
    parts = {part.name: part for part in request_parts(request, ours, get_counter("o200k_base"))}
    assert sum(part.bytes for part in parts.values()) == request.size
    assert parts["promptdeck system"].text == ours
    assert parts["promptdeck system"].bytes == len(ours.encode("utf-8"))
    assert parts["client system"].text == "You are a client.Client rules.\n\n"
    assert parts["user turn"].text == "Implement story 1.2"
    assert parts["tools"].bytes > 0 and parts["envelope"].bytes > 0
    assert parts["promptdeck system"].tokens > 0


def test_text_that_is_not_ours_is_all_the_clients() -> None:
    request = _request(
        {"system": "only the client", "messages": [{"role": "user", "content": "hi"}]}
    )
    parts = {p.name: p for p in request_parts(request, "absent text", get_counter("o200k_base"))}
    assert parts["promptdeck system"].bytes == 0
    assert parts["client system"].text == "only the client"
    assert parts["user turn"].text == "hi"
    assert sum(p.bytes for p in parts.values()) == request.size


def test_a_cut_request_is_refused_in_one_line() -> None:
    request = CapturedRequest("POST", "/v1/messages", b'{"system": "x', 99_000_000, cut=True)
    with pytest.raises(CaptureError, match="not a JSON object"):
        request_parts(request, "x", get_counter("o200k_base"))
