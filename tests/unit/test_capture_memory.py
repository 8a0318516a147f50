"""The last capture per client and client version (core/capture/memory.py), the summary the
app's meters show, and the table of context windows.

Kept in the user's cache folder only; read back exactly; the installed version's capture is
preferred, else the newest of any version, and the capture says which; a corrupt or foreign
file is ignored with one line and never replaced."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from promptdeck.core import Config
from promptdeck.core.capture import (
    Capture,
    CapturedRequest,
    DuplicateText,
    RequestPart,
    capture_path,
    capture_summary,
    installed_version,
    model_window,
    remember_capture,
    remembered_capture,
)


def _capture(client: str = "claude", version: str = "2.1.197", at: float = 1.0e9) -> Capture:
    body = '{"model":"claude-sonnet-4-5","system":"Ü"}'.encode()
    parts = (
        RequestPart("client system", "client", "You are a client.", 17, 5),
        RequestPart("tools", "client", "[]", 2, 1),
        RequestPart("CLAUDE.md", "rules", "Rules.", 6, 2, "6 of its 9 bytes sent"),
        RequestPart("Layer-0A Instructions", "promptdeck", "Ü", 2, 1),
        RequestPart("user turn", "user", "Go.", 3, 2),
        RequestPart("envelope", "envelope", "", len(body) - 30, 0),
    )
    return Capture(
        client=client,
        client_version=version,
        story_id="1-2",
        phase="dev",
        model="claude-sonnet-4-5",
        window=200_000,
        request=CapturedRequest("POST", "/v1/messages", body, len(body)),
        parts=parts,
        duplicates=(DuplicateText("CLAUDE.md", "Layer-0B Workspace rules", 2, 154),),
        requests=3,
        captured_at=at,
    )


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


def test_a_kept_capture_reads_back_exactly(environ: dict[str, str], tmp_path: Path) -> None:
    capture = _capture()
    assert remember_capture(capture, environ) is None
    path = capture_path("claude", "2.1.197", environ)
    assert path.parent == tmp_path / "cache" / "promptdeck" / "captures"
    assert remembered_capture("claude", "2.1.197", environ=environ) == capture
    assert remembered_capture("codex", environ=environ) is None


def test_the_installed_version_wins_else_the_newest_and_it_says_which(
    environ: dict[str, str],
) -> None:
    old, new = _capture(version="2.0.5", at=1.0e9), _capture(version="2.1.197", at=1.1e9)
    remember_capture(old, environ)
    remember_capture(new, environ)
    os.utime(capture_path("claude", "2.0.5", environ), (1.0e9, 1.0e9))
    os.utime(capture_path("claude", "2.1.197", environ), (1.1e9, 1.1e9))
    assert remembered_capture("claude", "2.0.5", environ=environ) == old
    latest = remembered_capture("claude", "3.0.0", environ=environ)
    assert latest == new
    assert latest is not None and "the installed claude is 3.0.0" in latest.origin("3.0.0")
    assert "installed" not in new.origin("2.1.197")
    assert remembered_capture("claude", environ=environ) == new


def test_a_corrupt_record_is_ignored_with_one_line(environ: dict[str, str]) -> None:
    path = capture_path("claude", "2.1.197", environ)
    path.parent.mkdir(parents=True)
    path.write_text('{"format":"promptdeck-capture","version":1,"parts":[{"kind":"x"}]}')
    notes: list[str] = []
    assert remembered_capture("claude", "2.1.197", environ=environ, notes=notes) is None
    assert len(notes) == 1 and "not a capture record" in notes[0] and "\n" not in notes[0]
    # A newer capture replaces our own damaged record.
    assert remember_capture(_capture(), environ) is None
    assert remembered_capture("claude", "2.1.197", environ=environ) == _capture()


def test_a_foreign_file_is_ignored_and_never_replaced(
    environ: dict[str, str], tmp_path: Path
) -> None:
    path = capture_path("claude", "2.1.197", environ)
    path.parent.mkdir(parents=True)
    path.write_text('{"someone": "else"}')
    notes: list[str] = []
    assert remembered_capture("claude", "2.1.197", environ=environ, notes=notes) is None
    assert notes == [
        f"remembered capture ignored: {path}: an existing file that is not promptdeck's own; "
        "not used, left as it is"
    ]
    line = remember_capture(_capture(), environ)
    assert line is not None and line.startswith("capture not kept:")
    assert path.read_text() == '{"someone": "else"}'


def test_a_link_in_the_folder_is_not_followed(environ: dict[str, str], tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("keep me")
    path = capture_path("codex", "0.169.0", environ)
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    notes: list[str] = []
    assert remembered_capture("codex", "0.169.0", environ=environ, notes=notes) is None
    assert len(notes) == 1 and "symlink" in notes[0]
    assert remember_capture(_capture("codex", "0.169.0"), environ) is not None
    assert target.read_text() == "keep me"


def test_the_summary_is_the_clients_overhead_and_ours() -> None:
    summary = capture_summary(_capture())
    assert summary.request_tokens == 11
    # The client's system text, tools, rules file and envelope are its overhead.
    assert summary.overhead_tokens == 5 + 1 + 2
    assert summary.overhead_bytes == 17 + 2 + 6 + (len(_capture().request.body) - 30)
    assert summary.duplicate_bytes == 154
    kinds = {total.kind: total for total in summary.kinds}
    assert kinds["promptdeck"].bytes == 2 and kinds["user"].tokens == 2
    assert summary.share == pytest.approx(11 / 200_000)
    assert sum(total.bytes for total in summary.kinds) == summary.request_bytes


def test_windows_come_from_the_table_else_the_clients_default() -> None:
    # Claude Code runs claude-opus-4-8 with the 1M-context beta (its capture says 1000000).
    assert model_window("claude", "claude-opus-4-8") == 1_000_000
    assert model_window("claude", "claude-sonnet-4-5") == 200_000
    assert model_window("codex", "gpt-6.2-sol") == 500_000
    assert model_window("codex", "gpt-6.2-sol", captured=272_000) == 272_000
    assert model_window("claude", "claude-sonnet-4-5[1m]") == 1_000_000
    assert model_window("codex", "gpt-6.1-terra") == 500_000
    assert model_window("codex", "gpt-6.1-sol") == 272_000
    assert model_window("codex", "some-local-model") == 272_000
    assert model_window("claude", "") == 200_000


def test_the_installed_version_is_asked_of_the_program_a_run_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "fake-codex"
    script.write_text(f"#!{sys.executable}\nprint('codex-cli 0.170.2')\n")
    script.chmod(0o755)
    monkeypatch.setenv("PROMPTDECK_CODEX_BIN", str(script))
    assert installed_version(Config(), "codex") == "0.170.2"
    monkeypatch.setenv("PROMPTDECK_CODEX_BIN", str(tmp_path / "missing"))
    assert installed_version(Config(), "codex") is None
