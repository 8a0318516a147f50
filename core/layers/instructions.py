"""promptdeck's own instructions (Layer-0A), a bundled package asset (seed 004, Req 1).

The text comes only from the installed package, never from a same-named file in the user's
project. A missing asset is a broken install: :class:`~promptdeck.core.errors.AssetMissing`
(exit 2), never a prompt composed without it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import AssetMissing
from ..lean_dataclass import dataclass

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

INSTRUCTIONS_NAME = "instructions.md"
INSTRUCTIONS_SOURCE = f"asset:{INSTRUCTIONS_NAME}"
"""How Layer-0A names its source (no absolute path, so signatures match across installs)."""


@dataclass(frozen=True)
class InstructionsFile:
    """The instructions as read for one compose.

    Attributes:
        source: ``asset:instructions.md``.
        text: the file's text.
        sha256: hex sha256 of the file's UTF-8 bytes (the app header shows a prefix).
        mtime: modification time when the asset is a real file, else None.
    """

    source: str
    text: str
    sha256: str
    mtime: float | None

    @property
    def short_hash(self) -> str:
        """The first 8 hex digits of :attr:`sha256`."""
        return self.sha256[:8]


def instructions_asset() -> Traversable:
    """Where the bundled instructions live inside the installed package."""
    # The package is installed as plain files (importlib.resources would only add imports).
    return Path(__file__).resolve().parents[1] / "assets" / INSTRUCTIONS_NAME


def load_instructions(asset: Traversable | None = None) -> InstructionsFile:
    """Read the bundled instructions, fresh.

    Args:
        asset: the file to read; the bundled asset when None (tests pass another).

    Raises:
        AssetMissing: the asset is missing, unreadable, not UTF-8 or empty.
    """
    target = asset if asset is not None else instructions_asset()
    problem = (
        f"promptdeck's bundled {INSTRUCTIONS_NAME} (Layer-0A) is {{}}: the installation is "
        "broken; reinstall promptdeck"
    )
    try:
        data = target.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        raise AssetMissing(problem.format("missing")) from None
    except OSError as exc:
        raise AssetMissing(problem.format(f"unreadable ({exc.strerror})")) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AssetMissing(problem.format("not UTF-8 text")) from None
    if not text.strip():
        raise AssetMissing(problem.format("empty"))
    mtime: float | None = None
    if isinstance(target, Path):
        try:
            mtime = target.stat().st_mtime
        except OSError:
            mtime = None
    return InstructionsFile(
        source=INSTRUCTIONS_SOURCE,
        text=text,
        sha256=hashlib.sha256(data).hexdigest(),
        mtime=mtime,
    )
