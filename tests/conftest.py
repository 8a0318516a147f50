"""Suite-wide isolation: no test reads or writes the real user's cache folder.

The cache folder is pointed at a throwaway one when pytest starts, before any test module is
collected, so every process-wide token counter, every subprocess and every app test uses it.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest


def pytest_configure(config: pytest.Config) -> None:
    cache_home = tempfile.mkdtemp(prefix="promptdeck-test-cache-")
    os.environ["XDG_CACHE_HOME"] = cache_home
    os.environ.pop("PROMPTDECK_TOKEN_CACHE", None)

    def remove() -> None:
        from promptdeck.core.token_cache import shared_cache

        shared_cache().close()
        shutil.rmtree(cache_home, ignore_errors=True)

    config.add_cleanup(remove)
