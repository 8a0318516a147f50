"""Facts about other processes, asked without disturbing them; and which file a program name
starts, found only on absolute ``PATH`` entries outside the project.

A shell finds ``claude`` or ``git`` on each ``PATH`` entry in turn, and binstub setups put
relative entries there (``./bin``, ``node_modules/.bin``). Relative to a cloned repository,
such an entry runs the repository's own ``bin/claude`` or ``bin/git`` — with no trust asked.
So promptdeck resolves every program it starts itself, before it starts it
(:func:`resolve_program`):

* a name without a slash is looked up only on ``PATH`` entries that are absolute and whose
  real path is not inside the project (an entry the user wrote as an absolute path into the
  project is passed over too: a repository must not choose what runs by shipping a file);
* a name with a slash is a path the user or the project's trusted config named: relative to
  the project root (where the agent runs), made absolute — the trust digest covers it.

The confirmation, ``--dry-run`` and ``meta.json`` show the absolute path that will run, and
GitPython is pointed at the ``git`` found the same way (:func:`git_module`).

Every git process promptdeck starts also runs none of the repository's own programs: it is
given the ``.git`` found walking up from the project root (:func:`work_tree_of`) explicitly,
and configuration that outranks the repository's (:func:`safe_git_environment`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any


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


def search_path(root: Path | None, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The ``PATH`` entries a program may be found on: absolute ones whose real path lies
    outside ``root`` (the resolved project root; None: no project to leave out)."""
    env = os.environ if environ is None else environ
    entries: list[str] = []
    for entry in env.get("PATH", os.defpath).split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue  # a relative entry is relative to whatever folder the program runs in
        if root is not None:
            real = os.path.realpath(entry)
            base = str(root)
            if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
                continue
        if entry not in entries:
            entries.append(entry)
    return tuple(entries)


def resolve_program(
    name: str, root: Path | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The absolute path of the program ``name`` would start, or None when there is none.

    Args:
        name: a bare name (``claude``) or a path (``tools/agent``, ``/usr/bin/git``).
        root: the resolved project root: relative paths are taken from it and ``PATH``
            entries inside it are passed over.
        environ: the environment whose ``PATH`` is searched (default: this process's).
    """
    if not name or "\0" in name:
        return None
    if os.sep in name or (os.altsep and os.altsep in name):
        path = Path(name).expanduser()
        if not path.is_absolute():
            if root is None:
                return None
            path = root / path
        path = Path(os.path.abspath(path))
        return str(path) if os.access(path, os.X_OK) and path.is_file() else None
    found = shutil.which(name, path=os.pathsep.join(search_path(root, environ)))
    return os.path.abspath(found) if found else None


def git_module(root: Path | None) -> Any:
    """GitPython, set to run the ``git`` :func:`resolve_program` finds: GitPython would
    otherwise run whatever ``git`` a relative ``PATH`` entry (``./bin``) finds in the
    repository.

    Raises:
        ImportError: no such ``git`` (GitPython raises the same when it finds none).
    """
    executable = resolve_program("git", None if root is None else root.resolve())
    if executable is None:
        raise ImportError("git was not found on an absolute PATH entry outside the project")
    # Set before the import: GitPython runs `git version` with this executable as it loads.
    os.environ["GIT_PYTHON_GIT_EXECUTABLE"] = executable
    import git

    if executable != git.Git.GIT_PYTHON_GIT_EXECUTABLE:
        git.refresh(executable)
    return git


_SAFE_CONFIG = (
    ("safe.bareRepository", "explicit"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("log.showSignature", "false"),
)
"""Settings every git process of promptdeck's runs with, over the repository's own: no
fsmonitor, no hook, no signature check (``log.showSignature`` runs ``gpg.program``)."""
NO_TRANSPORT = {"GIT_ALLOW_PROTOCOL": "", "GIT_TERMINAL_PROMPT": "0"}
"""What lets no git process of promptdeck's reach a remote: an empty list of allowed protocols
outranks every ``protocol.*.allow`` of the repository's configuration, so a partial clone's
lazy fetch of a missing object fails instead of running a transport (``remote.*.uploadpack``,
``ext::``, ssh). promptdeck's git steps are all local."""
UNSIGNED = (("commit.gpgSign", "false"), ("tag.gpgSign", "false"))
"""Settings for a repository whose own configuration names a signing program: signing would
run it."""


def work_tree_of(root: Path) -> Path | None:
    """The folder holding the ``.git`` (a folder, or a ``gitdir:`` file) that git would use
    for ``root``, found walking up from it; None when there is none. A folder that only looks
    like a bare repository (``HEAD``, ``objects/``, ``refs/`` committed inside a plan folder)
    is never one: promptdeck works on a work tree."""
    try:
        current = root.resolve()
    except (OSError, RuntimeError):
        return None
    for folder in (current, *current.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def safe_git_environment(
    git_dir: Path, work_tree: Path, drivers: tuple[str, ...] = (), *, unsigned: bool = False
) -> dict[str, str]:
    """The variables every git process for the repository at ``git_dir`` runs with: the
    repository named explicitly, no transport (:data:`NO_TRANSPORT`), and
    :data:`_SAFE_CONFIG` (plus each of ``drivers``, the repository's filter drivers, switched
    off, and with ``unsigned`` no signing, :data:`UNSIGNED`) after any ``GIT_CONFIG_KEY_n`` of
    the user's own, so that ours win."""
    settings = list(_SAFE_CONFIG)
    for name in drivers:
        settings += [(f"filter.{name}.{part}", "") for part in ("clean", "smudge", "process")]
        settings.append((f"filter.{name}.required", "false"))
    if unsigned:
        settings += UNSIGNED
    try:
        count = int(os.environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    env = {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work_tree), **NO_TRANSPORT}
    for offset, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{count + offset}"] = key
        env[f"GIT_CONFIG_VALUE_{count + offset}"] = value
    env["GIT_CONFIG_COUNT"] = str(count + len(settings))
    return env
