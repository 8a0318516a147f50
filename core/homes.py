"""Homes: each public name of a room's face and the module that defines it, imported on first use.

A room's ``__init__.py`` lists its public names with their modules and asks :func:`lazy_names`
for the module's ``__getattr__`` and ``__dir__`` (PEP 562). Importing a room, or one module
behind it, then imports none of the room's other modules: a command pays only for the modules it
uses (a remembered ``inspect`` never imports the run machinery its rooms also hold).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose names live in ``homes``.

    ``homes`` maps each public name to its module, relative to ``package`` (``".config"``). The
    first lookup of a name imports its module and keeps the value in the package's namespace, so
    later lookups are plain attribute reads.
    """
    namespace = sys.modules[package].__dict__

    def find(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *homes})

    return find, names
