"""Facts about other processes, asked without disturbing them."""

from __future__ import annotations

import os


def pid_alive(pid: object) -> bool:
    """True while a process ``pid`` exists: signal 0 asks without sending anything, and a
    process of another user (``PermissionError``) counts as alive."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
