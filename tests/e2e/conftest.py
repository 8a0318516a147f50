"""The end-to-end tests' switch: ``PROMPTDECK_SKIP_E2E=1`` (what ``make test E2E=0`` sets).

When it is on, every test module in this folder is reported as skipped, with the reason, before
it is imported — so the skip shows in pytest's summary (``-ra``) and no module looks for an
agent CLI that ``make`` did not fetch.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

SKIP_E2E_VARIABLE = "PROMPTDECK_SKIP_E2E"
SKIP_REASON = (
    f"end-to-end tests switched off ({SKIP_E2E_VARIABLE}=1, as `make test E2E=0` sets): "
    "the agent CLIs were not fetched"
)


def e2e_switched_off(environ: dict[str, str] | None = None) -> bool:
    """Whether the environment asks to skip the end-to-end tests (any value but ``0`` or empty)."""
    value = (os.environ if environ is None else environ).get(SKIP_E2E_VARIABLE, "").strip()
    return value not in ("", "0")


class _SwitchedOffModule(pytest.Module):
    """A test module that is not imported: it stands as one skipped item under its own name."""

    def collect(self) -> Iterable[pytest.Item]:
        item = _SwitchedOffTests.from_parent(self, name=self.path.name)
        item.add_marker(pytest.mark.skip(reason=SKIP_REASON))
        return [item]


class _SwitchedOffTests(pytest.Item):
    """The tests of a switched-off module, as one item (never run: it carries a skip mark)."""

    def runtest(self) -> None:
        raise AssertionError("a switched-off end-to-end module was run")

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.name


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> Any:
    if e2e_switched_off():
        return _SwitchedOffModule.from_parent(parent, path=module_path)
    return None
