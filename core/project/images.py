"""Images sent with a run's user message (seed 004, Req 2: multimodal input).

``run --image PATH`` and ``chat --image PATH`` (repeatable) attach images to the user message;
the system prompt keeps its own channel and stays ahead of them (claude: the appended system
prompt; codex: developer instructions), and the user's text stays the first item of the message.
An image must lie inside the project (symlinks resolved) and be a PNG, JPEG, GIF or WebP *by
its content*: the name's extension decides nothing. Anything else is a
:class:`~promptdeck.core.errors.UsageError` (exit 2) naming the file and why.

The four signatures are checked here rather than through a library: they are the only types
both agents accept, and each is a fixed byte prefix.
"""

from __future__ import annotations

import base64
import builtins
import hashlib
from collections.abc import Iterable
from pathlib import Path

from ..errors import UsageError
from ..lean_dataclass import dataclass
from ..terminal import printable_line
from .textfiles import TextProblem, read_file_bytes
from .workspace import Workspace

MAX_IMAGE_BYTES = 20 * 1024 * 1024
"""The largest image accepted (both APIs refuse larger ones)."""


def sniff(head: bytes) -> str | None:
    """The media type the first bytes of a file announce, or None for none of ours."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass(frozen=True)
class ImageFile:
    """One checked image.

    Attributes:
        path: the path as given, root-relative with forward slashes.
        absolute: the resolved file.
        media_type: ``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``.
        bytes: its size.
        sha256: the SHA-256 of the bytes confirmed; every phase that sends the image reads it
            again and sends it only when it is still these bytes (:meth:`confirmed_bytes`).
    """

    path: str
    absolute: Path
    media_type: str
    bytes: int
    sha256: str = ""

    def to_dict(self) -> dict[str, object]:
        """``meta.json``'s record of the image."""
        return {"path": self.path, "type": self.media_type, "bytes": self.bytes}

    def confirmed_bytes(self, root: Path) -> builtins.bytes:
        """The image's bytes, read again through the guarded reader, when they are still the
        ones confirmed (same size, same SHA-256): a file swapped since — for a link out of
        the project, a FIFO, other bytes — is refused, never sent.

        Raises:
            UsageError: the file is no longer what was confirmed.
        """
        where = f"--image {printable_line(self.path)}"
        data = read_file_bytes(self.absolute, root.resolve(), limit=MAX_IMAGE_BYTES)
        if isinstance(data, TextProblem):
            raise UsageError(f"{where}: {data} (it was an image when confirmed); not sent")
        if len(data) != self.bytes or hashlib.sha256(data).hexdigest() != self.sha256:
            raise UsageError(f"{where}: changed since it was confirmed; not sent")
        return data

    def base64(self, root: Path) -> str:
        """The confirmed bytes, base64-encoded (claude's stream-json image block)."""
        return base64.b64encode(self.confirmed_bytes(root)).decode("ascii")


def check_image(workspace: Workspace, given: str) -> ImageFile:
    """Check one ``--image`` path.

    Raises:
        UsageError: empty, missing, not a file, outside the project, too large, unreadable or
            not an image by content.
    """
    if not given.strip():
        raise UsageError("--image: an empty path names no file")
    path = Path(given)
    if not path.is_absolute():
        path = workspace.root / path
    where = f"--image {given}"
    if not workspace.contains(path):
        raise UsageError(f"{where}: outside the project root {workspace.root}")
    where = f"--image {printable_line(given)}"
    resolved = path.resolve()
    data = read_file_bytes(resolved, workspace.root.resolve(), limit=MAX_IMAGE_BYTES)
    if isinstance(data, TextProblem):
        if data.reason == "missing":
            raise UsageError(f"{where}: no such file")
        if data.reason == "too-large":
            raise UsageError(f"{where}: over the {MAX_IMAGE_BYTES:,}-byte limit ({data.detail})")
        if data.detail in ("is a folder", "not a regular file") or "not a regular" in data.detail:
            raise UsageError(f"{where}: not a file ({data.detail})")
        raise UsageError(f"{where}: {data}")
    media_type = sniff(data[:16])
    if media_type is None:
        raise UsageError(f"{where}: not a PNG, JPEG, GIF or WebP image (judged by its content)")
    shown = resolved.relative_to(workspace.root.resolve()).as_posix()
    return ImageFile(shown, resolved, media_type, len(data), hashlib.sha256(data).hexdigest())


def check_images(workspace: Workspace, given: Iterable[str]) -> tuple[ImageFile, ...]:
    """Check every ``--image`` path, in order; the first problem raises :class:`UsageError`."""
    return tuple(check_image(workspace, path) for path in given)
