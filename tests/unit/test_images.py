"""``--image``: images checked by content, inside the project, and how each agent gets them."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.agents.base import LaunchRequest
from promptdeck.core.agents.claude import ClaudeAgent
from promptdeck.core.errors import UsageError
from promptdeck.core.project.config import Config
from promptdeck.core.project.images import check_image, check_images, sniff

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
JPEG_HEAD = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01"


def test_types_are_judged_by_content_not_by_name(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "p",
        {
            "shot.txt": PNG,  # a PNG whatever its name says
            "photo.png": JPEG_HEAD + b"\x00" * 20,
            "anim.gif": b"GIF89a" + b"\x00" * 10,
            "pic.webp": b"RIFF\x10\x00\x00\x00WEBPVP8 ",
            "fake.png": b"not an image at all",
            "empty.png": b"",
        },
    )
    found = check_images(ws, ["shot.txt", "photo.png", "anim.gif", "pic.webp"])
    assert [(i.path, i.media_type) for i in found] == [
        ("shot.txt", "image/png"),
        ("photo.png", "image/jpeg"),
        ("anim.gif", "image/gif"),
        ("pic.webp", "image/webp"),
    ]
    assert found[0].to_dict() == {"path": "shot.txt", "type": "image/png", "bytes": len(PNG)}
    for name in ("fake.png", "empty.png"):
        with pytest.raises(UsageError, match=f"--image {name}: not a PNG, JPEG, GIF or WebP"):
            check_image(ws, name)
    assert sniff(b"RIFF\x00\x00\x00\x00WAVE") is None


def test_paths_outside_the_project_or_missing_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.png"
    outside.write_bytes(PNG)
    ws = make_workspace(tmp_path / "p", {"docs/a.png": PNG})
    (ws.root / "link.png").symlink_to(outside)
    for given, why in (
        (str(outside), "outside the project root"),
        ("../outside.png", "outside the project root"),
        ("link.png", "outside the project root"),
        ("docs/none.png", "no such file"),
        ("docs", "not a file"),
        ("  ", "an empty path names no file"),
    ):
        with pytest.raises(UsageError, match=why):
            check_image(ws, given)
    assert check_image(ws, str(ws.root / "docs" / "a.png")).path == "docs/a.png"


def test_claude_gets_the_text_first_then_the_images_as_stream_json(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "system.md").write_text("SYSTEM")
    (run_dir / "user.md").write_text("Implement story 1-2 — ü.")
    image = tmp_path / "a.png"
    image.write_bytes(PNG)
    request = LaunchRequest(run_dir, tmp_path, "1-2", "dev", images=(image,))
    spec = ClaudeAgent(Config()).launch(request)
    assert spec.argv[-2:] == ("--input-format", "stream-json")
    assert spec.stdin is not None and spec.stdin.endswith(b"\n")
    line = json.loads(spec.stdin)
    assert line["type"] == "user"
    content = line["message"]["content"]
    assert content[0] == {"type": "text", "text": "Implement story 1-2 — ü."}
    assert content[1]["source"]["media_type"] == "image/png"
    assert base64.b64decode(content[1]["source"]["data"]) == PNG
    plain = ClaudeAgent(Config()).launch(LaunchRequest(run_dir, tmp_path, "1-2", "dev"))
    assert "--input-format" not in plain.argv


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from promptdeck.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=root, capture_output=True, text=True, timeout=120
    )


def test_the_cli_records_images_and_refuses_bad_ones(tmp_path: Path) -> None:
    story = "_bmad-output/implementation-artifacts/1-2-parse-lines.md"
    root = make_workspace(
        tmp_path / "p",
        {
            story: "# Story 1.2: Parse lines\n\nStatus: ready-for-dev\n",
            ".promptdeck/config.toml": '[agent]\ndefault = "replay"\nreplay_delay = 0.0\n',
            "docs/a.png": PNG,
            "docs/b.png": b"text",
        },
    ).root
    done = _cli(root, "run", "1.2", "--phase", "dev", "--no-git", "--image", "docs/b.png")
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "--image docs/b.png: not a PNG, JPEG, GIF or WebP image (judged by its content)"
    )
    done = _cli(
        root,
        "run",
        "1.2",
        "--phase",
        "dev",
        "--no-git",
        "--agent",
        "codex",
        "--dry-run",
        "--image",
        "docs/a.png",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    # Codex reads the run folder's copy of the confirmed bytes, never the project's file.
    planned = json.loads(done.stdout)
    copy = Path(planned["run_folder"]) / "image-1.png"
    assert f"--image={copy}" in planned["argv"]
    assert copy.read_bytes() == PNG
    done = _cli(root, "run", "1.2", "--phase", "dev", "--no-git", "--image", "docs/a.png")
    assert done.returncode == 0, done.stderr
    meta = json.loads(next((root / ".promptdeck" / "runs").glob("*/meta.json")).read_text())
    assert meta["images"] == [{"path": "docs/a.png", "type": "image/png", "bytes": len(PNG)}]
