"""Suite-wide isolation: no test reads or writes the real user's cache or config folder.

Both are pointed at throwaway ones when pytest starts, before any test module is collected, so
every process-wide token counter, every trusted-config record, every subprocess and every app
test uses them (tests that need a folder of their own set it themselves).
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest


def pytest_configure(config: pytest.Config) -> None:
    cache_home = tempfile.mkdtemp(prefix="promptdeck-test-cache-")
    config_home = tempfile.mkdtemp(prefix="promptdeck-test-config-")
    os.environ["XDG_CACHE_HOME"] = cache_home
    os.environ["XDG_CONFIG_HOME"] = config_home
    os.environ.pop("PROMPTDECK_TOKEN_CACHE", None)

    def remove() -> None:
        from promptdeck.core.tokens.cache import shared_cache

        shared_cache().close()
        shutil.rmtree(cache_home, ignore_errors=True)
        shutil.rmtree(config_home, ignore_errors=True)

    config.add_cleanup(remove)
