"""The one door to the ``detect-secrets`` library's process-wide settings.

detect-secrets keeps the detectors and filters it runs in one global object. promptdeck scans
with two sets — every detector for the files it would inject (:mod:`.scan`), the quiet
credential detectors for the files a phase wrote (:mod:`.paths`) — and may do both at
once (the app composes in a worker while a run settles in another thread). Each scan therefore
runs inside :func:`detectors`, which holds one lock and switches the settings only when the
set asked for differs from the one in place: a scan never runs with the other's detectors.

It is also the one place detect-secrets is imported (:func:`load_library`), without the HTTP
client its plugins import for a feature promptdeck never uses.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

_LOCK = threading.RLock()
_current: tuple[frozenset[str], frozenset[str]] | None = None

_HTTP_CLIENT = "requests"
_IMPORTING_REQUESTS = (
    "detect_secrets.core.scan",
    "detect_secrets.settings",
    "detect_secrets.filters.common",
    "detect_secrets.filters.heuristic",
    "detect_secrets.core.plugins.util",
)
"""detect-secrets' modules a scan uses; importing them imports every module of the library that
imports ``requests`` at the top (its plugins, through their base class, and its common filters)."""


class _DeferredRequests(types.ModuleType):
    """Stands in for ``requests`` while detect-secrets is imported, and in its modules after.

    Each detect-secrets plugin, and its common filters, import ``requests`` at the top for one
    optional feature: checking a found secret against its vendor's API (``verify``), which
    promptdeck never asks for (verification is off unless a baseline turns it on). Importing
    ``requests`` pulls in urllib3, charset_normalizer, idna, certifi, http.client and email —
    more than the whole library costs. So the library's modules are imported with this module
    in its place; the real ``requests`` is imported the first time any of its names is read,
    and the name handed over is the real one (so an ``except requests.RequestException`` or a
    call to ``requests.get`` behaves exactly as without the stand-in). The one exception is
    ``requests.Response`` read *during* the import: two plugins name it in a return annotation,
    evaluated as the module is executed, and get a bare class for it.

    It cannot leak into other code: it sits in ``sys.modules`` only for the duration of
    :func:`load_library` (under its lock, and only when the real ``requests`` is not already
    imported); afterwards ``import requests`` anywhere imports the real library.
    """

    def __init__(self) -> None:
        super().__init__(_HTTP_CLIENT, "promptdeck's stand-in until requests is needed")
        self.importing = True

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self.importing and name == "Response":
            return type("Response", (), {"__module__": _HTTP_CLIENT})
        if sys.modules.get(_HTTP_CLIENT) is self:
            del sys.modules[_HTTP_CLIENT]
        real = importlib.import_module(_HTTP_CLIENT)
        return getattr(real, name)


@lru_cache(maxsize=1)
def load_library() -> None:
    """Import the detect-secrets modules a scan uses, ``requests`` deferred (see
    :class:`_DeferredRequests`). Every function here that touches the library calls it first."""
    with _LOCK:
        if _HTTP_CLIENT in sys.modules:  # already paid for by someone else: nothing to save
            _import_scan_modules()
            return
        stand_in = _DeferredRequests()
        sys.modules[_HTTP_CLIENT] = stand_in
        try:
            _import_scan_modules()
        except ImportError:
            # A detect-secrets that imports a submodule of requests: let it have the real one.
            if sys.modules.get(_HTTP_CLIENT) is stand_in:
                del sys.modules[_HTTP_CLIENT]
            _import_scan_modules()
        finally:
            stand_in.importing = False
            if sys.modules.get(_HTTP_CLIENT) is stand_in:
                del sys.modules[_HTTP_CLIENT]


def _import_scan_modules() -> None:
    for name in _IMPORTING_REQUESTS:
        importlib.import_module(name)
    _plugin_classes()  # imports every plugin module


def _plugin_classes() -> Any:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    return get_mapping_from_secret_type_to_class().values()


@lru_cache(maxsize=1)
def all_detectors() -> frozenset[str]:
    """The names of every detector plugin detect-secrets ships."""
    load_library()
    plugins: Any = _plugin_classes()
    return frozenset(plugin.__name__ for plugin in plugins)


@contextmanager
def detectors(
    plugins: frozenset[str], disabled_filters: frozenset[str] = frozenset()
) -> Iterator[None]:
    """Run the body with exactly ``plugins`` on and ``disabled_filters`` off (the library's
    default filters otherwise), and no other scan in between.

    The lock is re-entrant, so a scan may call another scan of the same set.
    """
    global _current
    load_library()
    from detect_secrets.settings import cache_bust, configure_settings_from_baseline

    wanted = (plugins, disabled_filters)
    with _LOCK:
        if _current != wanted:
            _current = None  # a failure half-way leaves the settings unknown, not "as wanted"
            # cache_bust() starts from fresh settings (the default filters, no plugin): the
            # library's configure_plugins only ever adds, so a switch must start from there.
            cache_bust()
            settings = configure_settings_from_baseline(
                {"plugins_used": [{"name": name} for name in sorted(plugins)]}
            )
            if disabled_filters:
                settings.disable_filters(*sorted(disabled_filters))
            _current = wanted
        yield
