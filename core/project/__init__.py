"""The project: the workspace root, its config, the user's own folders, the guarded reader,
listings, trust in the project's program settings, and images.

Everything that reads the project's files goes through :mod:`.textfiles` (regular files only,
under the size line, never outside the root); :mod:`.trust` decides whether a run may start the
programs the project's config names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .acknowledged_notes import AcknowledgedNotes, acknowledge, load_acknowledged
    from .config import AGENTS, ENCODINGS, Config, load_config
    from .editor import editor_argv
    from .images import ImageFile, check_image, check_images
    from .listing import one_scan
    from .textfiles import TextProblem, read_file_bytes, read_text_file
    from .trust import (
        check_trusted,
        forget_config,
        program_files,
        program_settings,
        trust_config,
        trust_store_path,
    )
    from .user_dirs import config_folder, user_state_folder
    from .workspace import Workspace, find_root, open_workspace

_HOMES = {
    "acknowledge": ".acknowledged_notes",
    "AcknowledgedNotes": ".acknowledged_notes",
    "load_acknowledged": ".acknowledged_notes",
    "AGENTS": ".config",
    "Config": ".config",
    "ENCODINGS": ".config",
    "load_config": ".config",
    "editor_argv": ".editor",
    "check_image": ".images",
    "check_images": ".images",
    "ImageFile": ".images",
    "one_scan": ".listing",
    "read_file_bytes": ".textfiles",
    "read_text_file": ".textfiles",
    "TextProblem": ".textfiles",
    "check_trusted": ".trust",
    "forget_config": ".trust",
    "program_files": ".trust",
    "program_settings": ".trust",
    "trust_config": ".trust",
    "trust_store_path": ".trust",
    "config_folder": ".user_dirs",
    "user_state_folder": ".user_dirs",
    "find_root": ".workspace",
    "open_workspace": ".workspace",
    "Workspace": ".workspace",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "AGENTS",
    "ENCODINGS",
    "AcknowledgedNotes",
    "Config",
    "ImageFile",
    "TextProblem",
    "Workspace",
    "acknowledge",
    "check_image",
    "check_images",
    "check_trusted",
    "config_folder",
    "editor_argv",
    "find_root",
    "forget_config",
    "load_acknowledged",
    "load_config",
    "one_scan",
    "open_workspace",
    "program_files",
    "program_settings",
    "read_file_bytes",
    "read_text_file",
    "trust_config",
    "trust_store_path",
    "user_state_folder",
]
