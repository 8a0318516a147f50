"""The secret gates hold against a cloned repository that shapes its files to slip past them:
a page break or another Unicode line break before a key, a locale that cannot decode the file,
a key far along a long line, past the first megabytes or after a NUL byte, and a prompt sent for
an exact count before any gate has looked at it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hostile._read_helpers import ARTIFACTS, assert_clean, make_cloned, run_cli
from promptdeck.core.secrets.paths import secret_content_reason
from promptdeck.core.secrets.scan import scan_text

AWS_KEY = "AKIAZ3MQ7RJ4LTXW2P5N"
AGENT = 'import sys\nprint("IMPLEMENTATION COMPLETE: 1-1")\n'
BREAKS = ("\f", "\v", "\x85", "\u2028", "\u2029", "\x1c")


@pytest.mark.parametrize("brk", BREAKS, ids=[f"U+{ord(b):04X}" for b in BREAKS])
def test_a_line_break_python_splits_on_does_not_shift_a_key_out_of_the_scan(brk: str) -> None:
    # detect-secrets numbers lines by "\n" alone; the line before the key reads as an indirect
    # reference, so a one-line shift in promptdeck's own numbering would drop the key.
    text = f"intro{brk}more\npassword = get_password()\nkey {AWS_KEY} here\n"
    found = [(f.line, f.kind) for f in scan_text("notes.md", text)]
    assert (3, "AWS Access Key") in found


def _agent_project(tmp_path: Path, notes: str):  # type: ignore[no-untyped-def]
    hostile = make_cloned(
        tmp_path,
        {
            f"{ARTIFACTS}/1-1-ops-notes.md": notes,
            "agent.py": AGENT,
            ".promptdeck/config.toml": (
                f'[agent]\ncommand_argv = ["{sys.executable}", "agent.py"]\n'
            ),
        },
    )
    assert run_cli(hostile, ["trust"]).code == 0
    return hostile


def test_run_refuses_a_key_behind_a_page_break(tmp_path: Path) -> None:
    notes = f"# Ops\f notes\n\nsecret = read_secret()\naws: {AWS_KEY}\n"
    hostile = _agent_project(tmp_path, notes)
    done = run_cli(hostile, ["run", "1-1", "--phase", "dev", "--agent", "command", "--no-git"])
    assert_clean(done, hostile, (8,))
    assert "1-1-ops-notes.md:4: AWS Access Key" in done.stderr
    assert AWS_KEY not in done.stdout + done.stderr


_LOCALE_SCAN = """
import json, sys
from promptdeck.core.secrets.scan import scan_text
from promptdeck.core.tokens.results import shared_results
text = "# Caf\\u00e9 notes \\u2014 d\\u00e9j\\u00e0 vu\\n\\nkey {key} here\\n"
print(json.dumps([[f.line, f.kind] for f in scan_text(sys.argv[1], text, shared_results())]))
"""


def _scan_in(tmp_path: Path, locale: str, utf8_mode: str, name: str) -> list[list[object]]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "LC_ALL": locale,
        "LANG": locale,
        "PYTHONUTF8": utf8_mode,
        "PYTHONCOERCECLOCALE": "0",
    }
    done = subprocess.run(
        [sys.executable, "-c", _LOCALE_SCAN.format(key=AWS_KEY), name],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", ["notes.md", "notes.yaml", "notes.txt"])
def test_a_non_utf8_locale_neither_skips_the_file_nor_poisons_the_cache(
    tmp_path: Path, name: str
) -> None:
    (tmp_path / "home").mkdir()
    assert _scan_in(tmp_path, "C", "0", name) == [[3, "AWS Access Key"]]
    # The next run, in a UTF-8 locale, shares the cache: it must not inherit a clean verdict.
    assert _scan_in(tmp_path, "C.UTF-8", "1", name) == [[3, "AWS Access Key"]]


def _staged(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "written.txt"
    path.write_bytes(data)
    return path


def test_the_staging_check_sees_a_key_past_column_ten_thousand(tmp_path: Path) -> None:
    line = b"x" * 12_000 + f" {AWS_KEY} ".encode() + b"y" * 20_000 + b"\n"
    reason = secret_content_reason(_staged(tmp_path, b"intro\n" + line))
    assert reason is not None and "AWS Access Key" in reason and "line 2" in reason


def test_the_staging_check_sees_a_key_past_two_mebibytes(tmp_path: Path) -> None:
    filler = b"just some ordinary prose for a long log file, nothing to see\n" * 55_000
    assert len(filler) > 3 * 1024 * 1024
    reason = secret_content_reason(_staged(tmp_path, filler + f"aws {AWS_KEY}\n".encode()))
    assert reason is not None and "AWS Access Key" in reason
    lines = filler.count(b"\n") + 1
    assert f"line {lines}" in reason


def test_the_staging_check_sees_a_key_on_a_single_five_mebibyte_line(tmp_path: Path) -> None:
    data = b"z" * (5 * 1024 * 1024 - 100) + f" {AWS_KEY}".encode()
    reason = secret_content_reason(_staged(tmp_path, data))
    assert reason is not None and "AWS Access Key" in reason


def test_the_staging_check_sees_a_key_in_a_file_with_a_nul_byte(tmp_path: Path) -> None:
    data = b"\x00\x01binary header\x00" * 10 + f"\naws_key = {AWS_KEY}\n".encode()
    reason = secret_content_reason(_staged(tmp_path, data))
    assert reason is not None and "AWS Access Key" in reason


def test_the_staging_check_sees_a_key_in_utf16_text(tmp_path: Path) -> None:
    data = f"\ufeffnotes\r\nkey = {AWS_KEY}\r\n".encode("utf-16-le")
    reason = secret_content_reason(_staged(tmp_path, data))
    assert reason is not None and "AWS Access Key" in reason and "line 2" in reason


def test_the_staging_check_still_passes_a_clean_long_file(tmp_path: Path) -> None:
    data = b"ordinary text " * 400_000 + b"\x00" + b"more " * 10_000
    assert secret_content_reason(_staged(tmp_path, data)) is None


class _CountTokens(BaseHTTPRequestHandler):
    seen: list[bytes]

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        self.seen.append(self.rfile.read(size))
        data = b'{"input_tokens": 1234}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def count_api() -> Iterator[tuple[str, list[bytes]]]:
    seen: list[bytes] = []
    handler = type("Handler", (_CountTokens,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_exact_claude_refuses_flagged_secrets_before_anything_is_sent(
    tmp_path: Path, count_api: tuple[str, list[bytes]]
) -> None:
    url, seen = count_api
    hostile = _agent_project(tmp_path, f"# Ops notes\n\naws: {AWS_KEY}\n")
    hostile.env.update(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=url)
    for extra in ([], ["--json"]):
        refused = run_cli(hostile, ["inspect", "1-1", "--exact-claude", *extra])
        assert_clean(refused, hostile, (8,))
        assert "1-1-ops-notes.md:3: AWS Access Key" in refused.stderr
        assert "--allow-secrets" in refused.stderr
        assert refused.stdout == ""
    assert seen == []
    # The exact count names the model it counts for: no client is installed here to say it.
    model = ["--model", "claude-sonnet-4-6"]
    allowed = run_cli(
        hostile, ["inspect", "1-1", "--exact-claude", "--json", "--allow-secrets", *model]
    )
    assert_clean(allowed, hostile, (0,))
    assert json.loads(allowed.stdout)["claude_estimate"]["exact_tokens"] == 1234
    assert len(seen) == 1
