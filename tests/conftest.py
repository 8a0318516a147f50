"""Suite-wide isolation: no test reads or writes the real user's home, cache, config or state
folder, and no two tests share one, so the suite runs the same serially and spread over processes
(``pytest -n N``, as ``make test`` runs it).

* When pytest starts (in each worker process of a parallel run, before any test module is
  collected) the cache and config folders point at throwaway ones of that process, so every
  process-wide token counter and every subprocess uses them.
* Before each test, :func:`_private_user_folders` gives the test a home and XDG config and
  cache folders of its own under its ``tmp_path``, with a git identity there, so a test never
  leans on the caller's ``~/.gitconfig``, ``~/.codex`` or settings, nor on what an earlier
  test left behind. The token cache itself stays one per process (it is opened once per
  process and its entries are keyed by content, so a test cannot see another's results).
* The bundled demo is prepared (copied, ``git init``, first commit) once per process, and each
  test that wants a demo workspace gets a copy of its own (:func:`copy_demo`): the same files
  and history as :func:`~promptdeck.core.demo.bundle.prepare_demo` makes, without paying for
  a new repository each time. The tests of ``prepare_demo`` itself still call it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from builders import TEST_GIT_CONFIG, copy_workspace, private_git_home


def pytest_configure(config: pytest.Config) -> None:
    cache_home = tempfile.mkdtemp(prefix="promptdeck-test-cache-")
    config_home = tempfile.mkdtemp(prefix="promptdeck-test-config-")
    state_home = tempfile.mkdtemp(prefix="promptdeck-test-state-")
    os.environ["XDG_CACHE_HOME"] = cache_home
    os.environ["XDG_CONFIG_HOME"] = config_home
    os.environ["XDG_STATE_HOME"] = state_home
    os.environ.pop("PROMPTDECK_TOKEN_CACHE", None)

    def remove() -> None:
        from promptdeck.core.tokens.cache import shared_cache

        shared_cache().close()
        shutil.rmtree(cache_home, ignore_errors=True)
        shutil.rmtree(config_home, ignore_errors=True)
        shutil.rmtree(state_home, ignore_errors=True)

    config.add_cleanup(remove)


@pytest.fixture(autouse=True)
def _private_user_folders(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A home and XDG config and state folders for this test alone (a test that needs other folders
    sets them itself, after this)."""
    folders = tmp_path_factory.mktemp("user")
    home = folders / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(TEST_GIT_CONFIG, encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folders / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(folders / "state"))
    # The machine's system-wide git config is not the test's either.
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # The model a client would use is the test's to set, never the caller's environment's.
    for name in ("ANTHROPIC_MODEL", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled demo as ``prepare_demo`` makes it, once per test process. Never handed to a
    test to change: tests get copies (:func:`copy_demo`)."""
    from promptdeck.core.demo.bundle import prepare_demo

    holder = tmp_path_factory.mktemp("demo-template")
    with private_git_home(holder):
        return prepare_demo(holder / "ledgerline")


@pytest.fixture
def copy_demo(demo_template: Path) -> Callable[[Path], Path]:
    """Make a fresh demo workspace at a path (which must not exist yet) and return its root."""
    return lambda dest: copy_workspace(demo_template, dest)
