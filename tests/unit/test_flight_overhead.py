"""The flight report's client overhead: from the capture kept for the run's client version
where there is one (its measured client text, tools, rules files and envelope), else the first
request's rest beside promptdeck's prompt, labelled as such."""

from __future__ import annotations

from pathlib import Path

import pytest
from flight_runs import claude_stream, write_run
from promptdeck.core.capture import Capture, CapturedRequest, RequestPart, remember_capture
from promptdeck.core.flight import flight_report
from promptdeck.core.flight.attribution import LAYERS, OVERHEAD
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.records.reader import list_runs

RUN = "20250101-000000-000000-dev-1-2-run000"
FIRST_CONTEXT = 5010
"""The first request of :func:`claude_stream`: 10 plain + 5,000 written."""


def _capture(version: str, client_tokens: int = 3000, window: int = 180_000) -> Capture:
    body = b'{"model":"claude-sonnet-4-6"}'
    return Capture(
        client="claude",
        client_version=version,
        story_id="1-2",
        phase="dev",
        model="claude-sonnet-4-6",
        window=window,
        request=CapturedRequest("POST", "/v1/messages", body, len(body)),
        parts=(
            RequestPart("client system", "client", "You are a client.", 17, client_tokens - 500),
            RequestPart("CLAUDE.md", "rules", "Rules.", 6, 500),
            RequestPart("Layer-0A Instructions", "promptdeck", "Go", 2, 1),
            RequestPart("envelope", "envelope", "", 4, 0),
        ),
        captured_at=1.0e9,
    )


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = (tmp_path / "project").resolve()
    (root / ".promptdeck").mkdir(parents=True)
    write_run(root, RUN, claude_stream(str(root)))
    environ = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}
    return root, environ


def _shares(root: Path, environ: dict[str, str]) -> tuple[dict[str, int], str, int]:
    workspace = open_workspace(root)
    [run] = [r for r in list_runs(root) if r.id == RUN]
    report = flight_report(workspace, run, environ)
    return (
        {share.name: share.tokens for share in report.spend.categories},
        report.spend.overhead_from,
        report.spend.total_tokens,
    )


def test_with_no_capture_kept_the_overhead_is_the_first_requests_rest_labelled(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, environ = project
    shares, said, _ = _shares(root, environ)
    assert said.startswith("client overhead: whatever of the first request is not promptdeck's")
    assert "no capture of this client version kept" in said
    assert "promptdeck capture keeps one for claude 2.1.197" in said
    # promptdeck's prompt is a few dozen bytes: nearly all of the first request is overhead.
    assert shares[LAYERS] < 500


def test_the_capture_kept_for_the_runs_client_version_measures_the_overhead(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, environ = project
    assert remember_capture(_capture("2.1.197"), environ) is None
    shares, said, total = _shares(root, environ)
    assert said.startswith("client overhead 3,000 tokens from the kept capture of claude 2.1.197")
    # The capture's 3,000 tokens are the overhead; the rest of the first request is the
    # layers, and it stays with them as the conversation grows.
    assert shares[LAYERS] >= FIRST_CONTEXT - 3000 - 1
    assert sum(shares.values()) == total


def test_a_capture_of_another_client_version_is_not_used(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, environ = project
    remember_capture(_capture("2.0.5", client_tokens=4000), environ)
    shares, said, _ = _shares(root, environ)
    assert "no capture of this client version kept" in said
    assert shares[LAYERS] < 500
    assert shares[OVERHEAD] > 4000
