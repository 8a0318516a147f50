"""What a run's ``status.json`` says about the story's status: written back, or left as it was.

:func:`~promptdeck.core.plans.writeback.write_back` records what it did in the run folder. A
run that succeeded but changed no status line (no sprint-status entry, no ``Status:`` line, an
unreadable file) leaves the story showing its old status; the app marks that story so the
user is not left believing the tracking moved.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..plans.writeback import RECORD_NAME
from ..project.textfiles import read_text_file


def unwritten_status(run_dir: Path, root: Path) -> str | None:
    """Why the status of ``run_dir``'s run was not written back, or None when it was (or when
    the run wrote no record: nothing applied).

    Args:
        run_dir: the run folder.
        root: the project root (the record is read with the guarded reader inside it).
    """
    text = read_text_file(run_dir / RECORD_NAME, root=root)
    if not isinstance(text, str):
        return None
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        return f"{RECORD_NAME}: not JSON"
    if not isinstance(record, dict) or record.get("status") is None or record.get("edits"):
        return None
    notes = record.get("notes") or []
    first = str(notes[0]) if isinstance(notes, list) and notes else "nothing to change"
    return f"status {record['status']} not written back: {first}"
