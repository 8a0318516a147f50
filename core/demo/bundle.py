"""The bundled demo workspace, and :func:`prepare_demo` that sets up a fresh copy of it.

The demo is *ledgerline*, a small Python project that imports bank statement exports: a
package under ``src/`` with tests, BMAD planning and implementation artifacts (two epics,
seven stories, discovery and tech-spec files, one story over the injection warning line and
one over the error line, one malformed draft), an OpenSpec change with three task groups and
specs, and ``.promptdeck/`` settings that select the offline ``replay`` agent.

Dot-folders are stored as ``dot-<name>`` in the package (``dot-promptdeck/``,
``dot-gitignore``) and renamed on copy: packaging tools and their globs routinely drop
dot-files from package data, and a real ``.gitignore`` inside the package would also apply to
promptdeck's own repository.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import AssetMissing, GitError, UsageError
from ..processes import git_module

DEMO_SOURCE = Path(__file__).resolve().parent / "workspace"
"""The bundled demo workspace, as shipped (dot-folders under their ``dot-`` names)."""
DOT_PREFIX = "dot-"
DEMO_FOLDER_NAME = "ledgerline"
TEMP_PREFIX = "promptdeck-demo-"
"""The prefix of the temporary folders that hold demo workspaces."""
DEMO_AUTHOR = ("promptdeck demo", "demo@promptdeck.invalid")
INITIAL_COMMIT_MESSAGE = "Initial commit: ledgerline demo workspace"
_NEVER_COPIED = frozenset({"__pycache__", ".pytest_cache", ".DS_Store"})


def installed_name(name: str) -> str:
    """The name a bundled file gets in the copy: ``dot-promptdeck`` → ``.promptdeck``."""
    if name.startswith(DOT_PREFIX) and len(name) > len(DOT_PREFIX):
        return "." + name[len(DOT_PREFIX) :]
    return name


def _copy_tree(source: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(source.iterdir()):
        if entry.name in _NEVER_COPIED:
            continue
        destination = target / installed_name(entry.name)
        if entry.is_dir():
            _copy_tree(entry, destination)
        else:
            shutil.copyfile(entry, destination)


def _init_git(root: Path) -> None:
    try:
        git = git_module(root)
    except ImportError as exc:  # GitPython raises this when no git executable is found
        raise GitError(f"the demo needs git: {exc}") from None
    name, email = DEMO_AUTHOR
    try:
        repo = git.Repo.init(root, initial_branch="main")
        with repo.config_writer("repository") as config:
            config.set_value("user", "name", name)
            config.set_value("user", "email", email)
            config.set_value("commit", "gpgsign", "false")
        # The user's GIT_AUTHOR_* / GIT_COMMITTER_* variables would override the repo-local
        # identity for this one commit; the demo's first commit is always the demo's.
        repo.git.update_environment(
            GIT_AUTHOR_NAME=name,
            GIT_AUTHOR_EMAIL=email,
            GIT_COMMITTER_NAME=name,
            GIT_COMMITTER_EMAIL=email,
        )
        repo.git.add("--all")
        repo.git.commit("--no-verify", "--quiet", "-m", INITIAL_COMMIT_MESSAGE)
        repo.close()
    except git.GitCommandError as exc:
        detail = (exc.stderr or "").strip() or str(exc)
        raise GitError(f"could not create the demo repository in {root}: {detail}") from None


def prepare_demo(dest: str | os.PathLike[str] | None = None) -> Path:
    """Copy the bundled demo workspace, ``git init`` it and make an initial commit.

    Args:
        dest: the folder to create the demo in; it must not exist or be empty. Default: a
            new ``ledgerline`` folder inside a fresh temporary folder.

    Returns:
        The demo workspace root.

    Raises:
        AssetMissing: the bundled demo is not in the installed package.
        UsageError: ``dest`` exists and is not an empty folder (nothing is ever copied over
            existing files).
        GitError: git is missing or the repository cannot be created.
    """
    if not (DEMO_SOURCE / "_bmad-output").is_dir():
        raise AssetMissing(f"the bundled demo workspace is missing from the package: {DEMO_SOURCE}")
    if dest is None:
        root = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX)) / DEMO_FOLDER_NAME
    else:
        root = Path(dest).expanduser().absolute()
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise UsageError(f"{root}: not an empty folder; the demo is only created in a new one")
    try:
        _copy_tree(DEMO_SOURCE, root)
    except OSError as exc:
        raise UsageError(f"cannot create the demo in {root}: {exc.strerror or exc}") from None
    _init_git(root)
    return root


@contextmanager
def temporary_demo(*, keep: bool = False) -> Iterator[Path]:
    """A fresh demo workspace in a new temporary folder, deleted on exit unless ``keep``.

    The folder is deleted however the block ends (a normal quit, an error, Ctrl-C), so runs of
    the demo do not pile up in the temporary directory; it holds nothing but the demo copy and
    the runs made in it.

    Yields:
        The demo workspace root (``<tmp>/promptdeck-demo-XXXX/ledgerline``).

    Raises:
        AssetMissing, GitError, UsageError: as :func:`prepare_demo`; nothing is left behind.
    """
    holder = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    try:
        yield prepare_demo(holder / DEMO_FOLDER_NAME)
    finally:
        if not keep:
            shutil.rmtree(holder, ignore_errors=True)
