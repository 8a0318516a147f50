"""The one door to the ``detect-secrets`` library's process-wide settings.

detect-secrets keeps the detectors and filters it runs in one global object. promptdeck scans
with two sets — every detector for the files it would inject (:mod:`.scan`), the quiet
credential detectors for the files a phase wrote (:mod:`.paths`) — and may do both at
once (the app composes in a worker while a run settles in another thread). Each scan therefore
runs inside :func:`detectors`, which holds one lock and switches the settings only when the
set asked for differs from the one in place: a scan never runs with the other's detectors.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

_LOCK = threading.RLock()
_current: tuple[frozenset[str], frozenset[str]] | None = None


@lru_cache(maxsize=1)
def all_detectors() -> frozenset[str]:
    """The names of every detector plugin detect-secrets ships."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    plugins: Any = get_mapping_from_secret_type_to_class().values()
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
