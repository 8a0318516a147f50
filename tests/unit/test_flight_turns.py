"""The flight recorder's turn list: every request of a phase from its recorded stream, joined
with the client's transcript only when that is whole and the session's own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from flight_runs import SESSION, assistant, claude_stream, usage, write_run
from promptdeck.core.flight import build_turns, read_turns, turns_of, write_turns
from promptdeck.core.flight.claude import transcript_path
from promptdeck.core.project.state_folder import StateLinkRefused

RUN = "20250101-000000-000000-dev-1-2-abcdef"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder.resolve()


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home")}


def _transcript(root: Path, tmp_path: Path) -> Path:
    folder, path = transcript_path(str(root), SESSION, _env(tmp_path))
    folder.mkdir(parents=True)
    return path


def _transcript_lines(session: str = SESSION) -> str:
    lines = [
        {
            "type": "assistant",
            "sessionId": session,
            "timestamp": f"2026-01-01T10:0{n}:00Z",
            "message": {"id": f"msg_{n}"},
        }
        for n in (1, 2, 3)
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_every_request_in_order_with_its_usage_and_subagents_nested(
    root: Path, tmp_path: Path
) -> None:
    run = write_run(root, RUN, claude_stream(str(root)))
    turns = build_turns(run, root, "claude", str(root), _env(tmp_path))
    assert [r.id for r in turns.requests] == ["msg_1", "msg_2", "msg_3"]
    first = turns.requests[0]
    assert (first.input_tokens, first.cache_read_tokens, first.cache_write_tokens) == (10, 0, 5000)
    # The second answer came as two lines: its last usage is the whole answer's.
    assert turns.requests[1].output_tokens == 60
    assert [a.tool for a in turns.requests[1].added] == ["Read"]
    (sub,) = turns.requests[1].subagents
    assert sub.prompt_bytes == len(b"Run the tests and report.")
    assert [r.id for r in sub.requests] == ["msg_s1", "msg_s2"]
    assert sub.requests[1].added[0].source == "pytest -q"
    assert turns.request_count == 5
    assert turns.format == "claude-code stream-json 2.1.197"
    assert turns.sources == ("stream",)
    assert any("transcript missing" in note for note in turns.notes)


def test_usage_missing_or_not_a_number_is_unknown(root: Path, tmp_path: Path) -> None:
    bad = {"input_tokens": "12", "cache_read_input_tokens": 0, "output_tokens": 3}
    events = [assistant("msg_1", bad, [{"type": "text", "text": "hi"}])]
    turns = build_turns(write_run(root, RUN, events), root, "claude", str(root), _env(tmp_path))
    (request,) = turns.requests
    data = request.to_dict()
    assert data["usage"]["input_tokens"] == "unknown"
    assert data["usage"]["cache_write_tokens"] == "unknown"
    assert data["context_tokens"] == "unknown"
    assert request.output_tokens == 3
    assert turns.peak_context is None


def test_a_subagent_whose_call_matches_nothing_is_listed_at_the_top(
    root: Path, tmp_path: Path
) -> None:
    events = [
        assistant("msg_1", usage(1, 0, 0, 1), [{"type": "text", "text": "a"}]),
        assistant(
            "msg_x", usage(2, 0, 0, 1), [{"type": "text", "text": "b"}], parent="toolu_ghost"
        ),
    ]
    turns = build_turns(write_run(root, RUN, events), root, "claude", str(root), _env(tmp_path))
    assert [r.id for r in turns.requests] == ["msg_1", "msg_x"]
    assert "matches nothing" in turns.requests[1].notes[0]
    assert any("toolu_ghost" in note for note in turns.notes)


def test_a_whole_transcript_of_the_session_adds_each_answers_time(
    root: Path, tmp_path: Path
) -> None:
    _transcript(root, tmp_path).write_text(_transcript_lines(), encoding="utf-8")
    run = write_run(root, RUN, claude_stream(str(root)))
    turns = build_turns(run, root, "claude", str(root), _env(tmp_path))
    assert turns.sources == ("stream", "transcript")
    assert turns.requests[2].at is not None and turns.requests[0].at is not None
    assert turns.requests[2].at - turns.requests[0].at == 120


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (_transcript_lines("another-session"), "another session's"),
        (_transcript_lines()[:-20], "cut or malformed"),
        ("not json\n" + _transcript_lines(), "cut or malformed"),
    ],
)
def test_a_transcript_of_another_session_cut_or_malformed_is_left_out(
    root: Path, tmp_path: Path, content: str, said: str
) -> None:
    _transcript(root, tmp_path).write_text(content, encoding="utf-8")
    run = write_run(root, RUN, claude_stream(str(root)))
    turns = build_turns(run, root, "claude", str(root), _env(tmp_path))
    assert turns.sources == ("stream",)
    assert all(r.at is None for r in turns.requests)
    assert any(said in note and "from the stream alone" in note for note in turns.notes)
    assert turns.request_count == 5


def test_a_fifo_or_a_link_out_of_the_client_folder_is_not_read(root: Path, tmp_path: Path) -> None:
    path = _transcript(root, tmp_path)
    os.mkfifo(path)
    run = write_run(root, RUN, claude_stream(str(root)))
    turns = build_turns(run, root, "claude", str(root), _env(tmp_path))
    assert any("transcript unreadable" in note for note in turns.notes)
    path.unlink()
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(_transcript_lines(), encoding="utf-8")
    path.symlink_to(outside)
    turns = build_turns(run, root, "claude", str(root), _env(tmp_path))
    assert turns.sources == ("stream",)
    assert any("outside-project" in note for note in turns.notes)


def test_a_gigabyte_transcript_is_read_only_up_to_the_cap(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import promptdeck.core.flight.claude as claude

    monkeypatch.setattr(claude, "TRANSCRIPT_CAP", 1024 * 1024)
    path = _transcript(root, tmp_path)
    with path.open("wb") as handle:
        handle.write(_transcript_lines().encode())
        handle.truncate(1024**3)  # sparse: a gigabyte on paper
    run = write_run(root, RUN, claude_stream(str(root)))
    turns = build_turns(run, root, "claude", str(root), _env(tmp_path))
    assert turns.sources == ("stream",)
    assert any("cut or malformed" in note for note in turns.notes)


def test_a_line_over_the_line_cap_is_skipped_whole(tmp_path: Path) -> None:
    from promptdeck.core.flight.lines import JsonLines, json_lines

    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b"x" * 3_000_000 + b'\n{"b": 2}\n')
    seen = JsonLines()
    got = list(json_lines(path, tmp_path, seen, line_cap=1024 * 1024))
    assert got == [{"a": 1}, {"b": 2}]
    assert seen.long_lines == 1 and any("over 1 MB skipped" in n for n in seen.notes)


CODEX_EVENTS = [
    {"type": "thread.started", "thread_id": "th-1"},
    {"type": "turn.started"},
    {
        "type": "item.completed",
        "item": {
            "id": "i1",
            "type": "command_execution",
            "command": "cat README.md",
            "aggregated_output": "hello\n",
            "exit_code": 0,
        },
    },
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 5000, "cached_input_tokens": 3000, "output_tokens": 200},
    },
]


def _rollout(home: Path, thread: str, meta_id: str) -> None:
    day = home / "sessions" / "2026" / "01" / "02"
    day.mkdir(parents=True)
    rows = [
        {"type": "session_meta", "payload": {"id": meta_id, "cli_version": "0.171.0"}},
        # As Codex writes them: the call and its output, then the usage of the answer
        # that made the call.
        {
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell",
                "call_id": "c1",
                "arguments": json.dumps({"command": ["cat", "README.md"]}),
            },
        },
        {
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c1", "output": "hello\n"},
        },
        {
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {
                    "last_token_usage": {
                        "input_tokens": 2000,
                        "cached_input_tokens": 1000,
                        "output_tokens": 50,
                    },
                    "total_token_usage": {"input_tokens": 2000},
                },
            },
        },
        {
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {
                    "last_token_usage": {
                        "input_tokens": 3000,
                        "cached_input_tokens": 2000,
                        "output_tokens": 150,
                    },
                    "total_token_usage": {"input_tokens": 5000},
                },
            },
        },
    ]
    path = day / f"rollout-2026-01-02T10-00-00-{thread}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_codex_stream_alone_is_one_entry_per_turn_and_says_so(root: Path, tmp_path: Path) -> None:
    run = write_run(root, RUN, CODEX_EVENTS, agent="codex")
    turns = build_turns(run, root, "codex", str(root), {"CODEX_HOME": str(tmp_path / "codex")})
    (turn,) = turns.requests
    assert (turn.input_tokens, turn.cache_read_tokens, turn.output_tokens) == (2000, 3000, 200)
    assert turn.added[0].source == "cat README.md" and turn.added[0].bytes == 6
    assert any("one entry per turn" in note for note in turns.notes)


def test_codex_rollout_gives_each_model_call(root: Path, tmp_path: Path) -> None:
    home = tmp_path / "codex"
    _rollout(home, "th-1", "th-1")
    run = write_run(root, RUN, CODEX_EVENTS, agent="codex")
    turns = build_turns(run, root, "codex", str(root), {"CODEX_HOME": str(home)})
    assert turns.sources == ("stream", "transcript")
    assert turns.format == "codex exec --json 0.171.0"
    first, second = turns.requests
    assert (first.input_tokens, first.cache_read_tokens) == (1000, 1000)
    assert [c.tool for c in first.tool_calls] == ["shell"]
    assert first.tool_calls[0].target == "cat README.md"
    assert second.added[0].bytes == 6 and second.added[0].tool == "shell"


def test_codex_rollout_of_another_session_is_left_out(root: Path, tmp_path: Path) -> None:
    home = tmp_path / "codex"
    _rollout(home, "th-1", "th-other")
    run = write_run(root, RUN, CODEX_EVENTS, agent="codex")
    turns = build_turns(run, root, "codex", str(root), {"CODEX_HOME": str(home)})
    assert turns.sources == ("stream",) and len(turns.requests) == 1
    assert any("another session's" in note for note in turns.notes)


def test_the_turn_list_is_kept_and_read_back(root: Path, tmp_path: Path) -> None:
    run = write_run(root, RUN, claude_stream(str(root)))
    turns = turns_of(run, root, "claude", str(root), environ=_env(tmp_path))
    kept = read_turns(run, root)
    assert kept is not None and kept.to_dict() == turns.to_dict()


def test_a_symlinked_run_folder_is_refused(root: Path, tmp_path: Path) -> None:
    real = write_run(tmp_path / "other", RUN, claude_stream(str(root)))
    runs = root / ".promptdeck" / "runs"
    runs.mkdir(parents=True)
    (runs / RUN).symlink_to(real)
    turns = build_turns(real, real.parent.parent.parent, "claude", None, _env(tmp_path))
    with pytest.raises(StateLinkRefused):
        write_turns(runs / RUN, root, turns)
    assert not (real / "turns.json").exists()


def test_a_stream_that_leads_out_of_the_project_is_not_read(root: Path, tmp_path: Path) -> None:
    run = write_run(root, RUN, claude_stream(str(root)))
    outside = tmp_path / "outside.jsonl"
    outside.write_text((run / "stream.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    (run / "stream.jsonl").unlink()
    (run / "stream.jsonl").symlink_to(outside)
    turns = build_turns(run, root, "claude", str(root), _env(tmp_path))
    assert turns.requests == ()
    assert turns.notes[0].startswith("stream.jsonl: outside-project")
