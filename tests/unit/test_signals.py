"""The signal parser: every seed signal, the line-of-its-own rule, chunking, the last decides."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from promptdeck.core.phases.signals import SignalParser, deciding_signal, match_line, parse_text
from promptdeck.core.phases.table import SIGNAL_SPECS

SEED_LINES = [
    ("KICKOFF COMPLETE: 1-2", "kickoff-complete", "success", None),
    ("IMPLEMENTATION COMPLETE: story-42-1", "implementation-complete", "success", None),
    (
        "IMPLEMENTATION BLOCKED: 1-2 - Cannot resolve circular dependency",
        "implementation-blocked",
        "failure",
        "Cannot resolve circular dependency",
    ),
    ("REVIEW PASSED: 1-2", "review-passed", "success", None),
    (
        "REVIEW PASSED WITH FIXES: 1-2 - Fixed 3 issues",
        "review-passed-with-fixes",
        "success",
        "Fixed 3 issues",
    ),
    ("REVIEW FAILED: 1-2 - no tests for the error path", "review-failed", "failure", None),
    ("ANALYSIS COMPLETE: 1-2 - Escalate", "analysis-complete", "info", "Escalate"),
    ("UAT COMPLETE: Epic 42", "uat-complete", "success", None),
    ("RETRO COMPLETE: Epic 42", "retro-complete", "success", None),
    ("<promise>COMPLETE</promise>", "promise-complete", "success", None),
    ("<promise>FAILED: verification fails</promise>", "promise-failed", "failure", None),
]


@pytest.mark.parametrize(("line", "kind", "outcome", "reason"), SEED_LINES)
def test_every_seed_signal_is_recognised(
    line: str, kind: str, outcome: str, reason: str | None
) -> None:
    signal = match_line(line)
    assert signal is not None
    assert signal.kind == kind
    assert signal.outcome == outcome
    if reason is not None:
        assert signal.reason == reason


def test_every_phase_contract_signal_parses_from_its_example() -> None:
    for spec in SIGNAL_SPECS:
        signal = match_line(spec.example("1-2"))
        assert signal is not None, spec.kind
        assert signal.kind == spec.kind


def test_reason_and_ids_are_captured() -> None:
    blocked = match_line("IMPLEMENTATION BLOCKED: 1-2 - fixture missing")
    assert blocked is not None and (blocked.story, blocked.reason) == ("1-2", "fixture missing")
    retro = match_line("RETRO COMPLETE: Epic 7")
    assert retro is not None and retro.epic == "7" and retro.story is None
    failed = match_line("<promise>FAILED: tests red</promise>")
    assert failed is not None and failed.reason == "tests red"


@pytest.mark.parametrize(
    "line",
    [
        "I will print IMPLEMENTATION COMPLETE: 1-2 when done.",
        "Output: REVIEW PASSED: 1-2",
        "`IMPLEMENTATION COMPLETE: 1-2`",
        '"IMPLEMENTATION COMPLETE: 1-2"',
        "IMPLEMENTATION COMPLETE: {id}",
        "IMPLEMENTATION BLOCKED: {id} - {reason}",
        "IMPLEMENTATION BLOCKED: 1-2 - {reason}",
        "<promise>FAILED: {reason}</promise>",
        "ANALYSIS COMPLETE: 1-2 - Retry|Skip|Escalate",
        "REVIEW PASSED WITH FIXES: {id} - Fixed N issues",
        "- IMPLEMENTATION COMPLETE: 1-2",
        "IMPLEMENTATION COMPLETE: story-id",
    ],
)
def test_quoted_echoed_or_template_signals_never_count(line: str) -> None:
    assert match_line(line) is None


def test_whitespace_and_bold_around_a_signal_line_still_count() -> None:
    assert match_line("   REVIEW PASSED: 1-2  ") is not None
    assert match_line("**REVIEW PASSED: 1-2**") is not None


def test_signals_inside_a_code_fence_do_not_count() -> None:
    text = "The contract says:\n```\nIMPLEMENTATION COMPLETE: 1-2\n```\nStill working."
    assert parse_text(text) == []


def test_all_signals_are_recorded_and_the_last_decides() -> None:
    text = "IMPLEMENTATION BLOCKED: 1-2 - flaky\nretrying\nIMPLEMENTATION COMPLETE: 1-2\n"
    signals = parse_text(text)
    assert [s.kind for s in signals] == ["implementation-blocked", "implementation-complete"]
    decided = deciding_signal(signals, "dev")
    assert decided is not None and decided.kind == "implementation-complete"


def test_deciding_signal_ignores_other_phases_signals() -> None:
    signals = parse_text("REVIEW PASSED: 1-2\n")
    assert deciding_signal(signals, "dev") is None
    assert deciding_signal(signals, "review") is not None
    assert deciding_signal([], "dev") is None


def test_a_signal_split_across_chunks_parses() -> None:
    parser = SignalParser()
    assert parser.feed("IMPLEMENTATION COM") == []
    assert parser.feed("PLETE: 1") == []
    found = parser.feed("-2\nmore")
    assert [s.line for s in found] == ["IMPLEMENTATION COMPLETE: 1-2"]
    assert parser.flush() == []


def test_flush_judges_a_last_line_without_newline() -> None:
    parser = SignalParser()
    parser.feed("done\nREVIEW PASSED: 1-2")
    assert parser.last is None
    assert [s.kind for s in parser.flush()] == ["review-passed"]


STREAM = (
    "Reading the story.\n"
    "I will print IMPLEMENTATION COMPLETE: 1-2 at the end.\n"
    "```\nREVIEW PASSED: 1-2\n```\n"
    "IMPLEMENTATION BLOCKED: 1-2 - missing fixture\n"
    "**IMPLEMENTATION COMPLETE: 1-2**\n"
    "<promise>FAILED: {reason}</promise>\n"
    "<promise>COMPLETE</promise>"
)


def _chunked(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(text[start:point])
        start = point
    pieces.append(text[start:])
    return pieces


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=40))
def test_any_chunking_yields_the_same_signals(cuts: list[int]) -> None:
    expected = parse_text(STREAM)
    parser = SignalParser()
    for piece in _chunked(STREAM, cuts):
        parser.feed(piece)
    parser.flush()
    assert parser.signals == expected
    assert [s.kind for s in expected] == [
        "implementation-blocked",
        "implementation-complete",
        "promise-complete",
    ]


_words = st.sampled_from(
    ["I", "will", "print", "then", "say", "done", "the", "signal", "is", ":", "-", "Output"]
)
_signal_lines = st.sampled_from([line for line, *_ in SEED_LINES])


@settings(max_examples=300, deadline=None)
@given(
    before=st.lists(_words, min_size=1, max_size=5),
    signal=_signal_lines,
    after=st.lists(_words, max_size=5),
    quote=st.sampled_from(['"', "'", "`", "“"]),
)
def test_signals_quoted_inside_sentences_never_count(
    before: list[str], signal: str, after: list[str], quote: str
) -> None:
    in_sentence = " ".join([*before, signal, *after])
    assert parse_text(in_sentence) == []
    assert parse_text(f"{quote}{signal}{quote}") == []
