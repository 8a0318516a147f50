"""Remembered answers: the output of a composing command, kept with proof of what it read.

``inspect`` and ``compose`` of an unchanged story give the same bytes every time; composing them
costs the engine's imports, the story lookup, reading the files and counting. This module lets
the CLI answer from a remembered copy instead — and only when it can prove the copy current.

**What the answer depends on** is taken from what composing actually did, not from a list of
files kept here: while the command runs the first time, a :class:`ReadRecorder` notes every path
the process opened, listed, or looked at (``os.stat``, ``os.lstat``, ``os.listdir``,
``os.scandir``, ``open``, ``os.open``) — story files, the config, templates (bundled or the
workspace's own), rules, the artifacts folder, a file that was looked for and is missing. A new
source of input added to the engine later is covered without a change here.

**Proving it current** takes one ``stat`` per recorded path, never a read: the file's type, size,
inode, device, modification and change times must be what they were (a missing path must still be
missing; a listed folder's times change when an entry is added, removed or renamed; a folder only
looked at — does it exist, where does a link lead — must be the same folder). The change time
(``ctime``) is set by the kernel on every write and cannot be set back by a program, so equal
times mean unchanged content — provided nothing changed in the same clock tick as the recording.
Hence the racy-timestamp rule (git's, for its index): an answer is not remembered at all while
any path it read was modified in the last :data:`SETTLE_SECONDS` (a same-second mtime counts as
unknown); the next run, once the files have settled, remembers it.

**The key** names everything else the answer depends on: the command line, the working folder,
the environment variables that change output (``PROMPTDECK_*``, ``XDG_CONFIG_HOME``, ``HOME``,
``COLUMNS``, ``NO_COLOR`` …), the encoding of stdout, promptdeck's version and the identity (size
and times) of its own code, so an upgrade or an edited checkout never answers from an old copy.

Stored in :mod:`.results` (kind ``composed``): a foreign or damaged file is rebuilt with one
line; the value read back is checked for shape and is used only if every check passes.

:func:`remember_parts` and :func:`remembered_parts` keep other results the same way — bytes
with the same proof of what they were made from — sealed (:mod:`.seal`), for bytes that are
loaded with trust (the app's opening, pickled: :mod:`promptdeck.tui.session.opening`).
A reading that asked about a process (is a run's process alive?) is never remembered: a
process can end without any file changing.
"""

from __future__ import annotations

import base64
import builtins
import hashlib
import io
import json
import os
import stat
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from .results import results_path, shared_results

KIND = "composed"
SETTLE_SECONDS = 2.0
"""An answer whose inputs changed more recently than this is not remembered."""
MAX_PATHS = 20_000
"""More recorded paths than this and the answer is not remembered (checking would cost more)."""
ENVIRONMENT = (
    "HOME",
    "XDG_CONFIG_HOME",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "TERM",
    "PYTHONIOENCODING",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    # Which client is found (its version names the default model priced) and the clients' own
    # model settings: a forecast answered from a copy made under another PATH would price
    # another model.
    "PATH",
    "ANTHROPIC_MODEL",
    "CODEX_HOME",
)
"""Variables (besides every ``PROMPTDECK_*``) whose value is part of the key."""
_PACKAGE = Path(__file__).resolve().parents[2]


class Answer(NamedTuple):
    """A command's remembered output (a named tuple: :mod:`dataclasses` would add its import
    to every answered command).

    Attributes:
        stdout: the bytes it wrote on stdout.
        stderr: the bytes it wrote on stderr.
        code: its exit code.
    """

    stdout: bytes
    stderr: bytes
    code: int


def _signature(info: os.stat_result, how: str) -> list[int]:
    if how != "list" and stat.S_ISDIR(info.st_mode):
        # A folder that was only looked at (is it there, is it a folder, where does a link
        # lead): its identity is what was used. Its entries matter only where it was listed.
        return [stat.S_IFMT(info.st_mode), info.st_ino, info.st_dev]
    return [
        stat.S_IFMT(info.st_mode),
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_ino,
        info.st_dev,
    ]


HOW = ("stat", "lstat", "list")
"""How a path was used: looked at (links followed or not), or listed (or opened)."""


def _look(path: str, how: str) -> list[int] | None:
    try:
        return _signature(os.lstat(path) if how == "lstat" else os.stat(path), how)
    except (OSError, ValueError):
        return None


def own_cache_files() -> list[str]:
    """promptdeck's own cache files (the results store, the token counts, with SQLite's files
    beside them): written by every run, never an input of what it makes, so a
    :class:`ReadRecorder` passes them over. The files, not their folders: a cache put inside a
    project (``PROMPTDECK_TOKEN_CACHE``) must not hide the project's files beside it."""
    from .cache import default_path

    stores = [str(path) for path in (results_path(), default_path()) if path is not None]
    return [f"{store}{suffix}" for store in stores for suffix in ("", "-wal", "-shm", "-journal")]


class ReadRecorder:
    """Notes every path the process looks at while :meth:`recording` (all threads)."""

    def __init__(self, ignored: Sequence[str] = ()) -> None:
        """``ignored``: files, or folders with all they hold, that are never recorded."""
        self.paths: dict[tuple[str, str], None] = {}
        self.asked_processes = False
        """Whether a process was asked about (is a run's process alive?): what it said can
        change with no file changing, so such an answer is never remembered."""
        self.started = time.time()
        self.ignored = (*(os.path.join(folder, "") for folder in ignored), "/proc/", "/dev/")
        """Folders not recorded: promptdeck's own cache folders (written by every run, never
        an input of the answer) and the kernel's views."""
        import tempfile  # here, not at the top: an answered command never records

        temp = tempfile.gettempdir()
        self.scratch = (temp, os.path.join(temp, "promptdeck-scan-"))
        """The temporary folder itself (the secret scan's private copies are made there; its
        listing is no input) and those copies."""

    def _note(self, path: object, how: str = "list") -> None:
        if isinstance(path, int):  # a descriptor: its path was noted when it was opened
            return
        try:
            name = os.path.abspath(os.fsdecode(path))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        if os.path.join(name, "").startswith(self.ignored):
            return
        if name == self.scratch[0] or name.startswith(self.scratch[1]):
            return
        self.paths[(name, how)] = None
        if how != "lstat":  # what a symlink points to can change while the link does not
            self.paths[(name, "lstat")] = None

    @contextmanager
    def recording(self) -> Iterator[ReadRecorder]:
        """Patch the stat, list and open calls of :mod:`os` and :mod:`builtins`, and
        :func:`os.kill`, while inside."""
        saved = (os.stat, os.lstat, os.listdir, os.scandir, os.open, builtins.open, io.open)
        real_stat, real_lstat, real_listdir, real_scandir, real_open, real_bopen, _ = saved
        real_kill = os.kill
        note = self._note

        def kill_(pid: int, signal: int) -> None:
            self.asked_processes = True
            real_kill(pid, signal)

        def stat_(path: Any, *args: Any, **kwargs: Any) -> Any:
            follow = kwargs.get("follow_symlinks", True) and kwargs.get("dir_fd") is None
            note(path, "stat" if follow else "lstat")
            return real_stat(path, *args, **kwargs)

        def lstat_(path: Any, *args: Any, **kwargs: Any) -> Any:
            note(path, "lstat")
            return real_lstat(path, *args, **kwargs)

        def listdir_(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            note(path)
            return real_listdir(path, *args, **kwargs)

        def scandir_(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            note(path)
            return real_scandir(path, *args, **kwargs)

        def open_(path: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("dir_fd") is None:
                note(path)
            return real_open(path, *args, **kwargs)

        def builtin_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            note(file)
            return real_bopen(file, *args, **kwargs)

        os.stat, os.lstat, os.listdir, os.scandir = stat_, lstat_, listdir_, scandir_
        os.open = open_
        os.kill = kill_
        builtins.open = io.open = builtin_open
        try:
            yield self
        finally:
            os.stat, os.lstat, os.listdir, os.scandir, os.open, builtins.open, io.open = saved
            os.kill = real_kill

    def evidence(self) -> list[list[Any]] | None:
        """``[path, how, signature]`` of every recorded path as it is now, or None when the
        answer must not be remembered (a path changed within :data:`SETTLE_SECONDS` of the
        recording's start, too many paths, or a process was asked about)."""
        if len(self.paths) > MAX_PATHS or self.asked_processes:
            return None
        settled_before = (self.started - SETTLE_SECONDS) * 1e9
        out: list[list[Any]] = []
        for path, how in self.paths:
            signature = _look(path, how)
            full = signature is not None and len(signature) == 6
            if full and max(signature[2], signature[3]) >= settled_before:  # type: ignore[index]
                return None  # racy: the content may differ from what was read
            out.append([path, how, signature])
        return out


def is_current(evidence: object) -> bool:
    """True when every recorded path looks exactly as it did (one ``stat`` each, no read)."""
    if not isinstance(evidence, list):
        return False
    for item in evidence:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and isinstance(item[0], str)
            and item[1] in HOW
            and (item[2] is None or isinstance(item[2], list))
        ):
            return False
        if _look(item[0], item[1]) != item[2]:
            return False
    return True


@lru_cache(maxsize=1)
def code_identity() -> str:
    """promptdeck's version and the size and times of its own files (an edited checkout or an
    upgrade is another identity), as they were when this process first asked: a command looks
    its answer up and, when there is none, records it under the same key. The app's files count
    too: its remembered opening holds objects of its own classes."""
    digest = hashlib.sha256()
    for room in ("core", "tui"):
        for folder, folders, files in os.walk(_PACKAGE / room):
            # The demo room's workspace is data the engine never composes from its own copy.
            skip = ("__pycache__", "workspace") if folder.endswith("demo") else ("__pycache__",)
            folders[:] = sorted(f for f in folders if f not in skip)
            for name in sorted(files):
                if name.endswith((".py", ".md", ".toml", ".txt", ".json", ".yaml")):
                    info = os.stat(os.path.join(folder, name))
                    digest.update(f"{folder}/{name}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    for name in sorted(os.listdir(_PACKAGE / "cli")):
        if name.endswith(".py"):
            info = os.stat(_PACKAGE / "cli" / name)
            digest.update(f"cli/{name}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def inputs_key(words: Sequence[str], environ: Mapping[str, str] | None = None) -> bytes:
    """The key of a result that depends on ``words`` (what was asked), promptdeck's code and
    the environment variables that change output (see the module docstring)."""
    env = os.environ if environ is None else environ
    chosen = sorted(
        (name, value)
        for name, value in env.items()
        if name.startswith("PROMPTDECK_") or name in ENVIRONMENT
    )
    parts = ["answer 1", code_identity(), repr(list(words)), repr(chosen)]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).digest()


def answer_key(argv: Sequence[str], environ: dict[str, str] | None = None) -> bytes:
    """The key of a command's answer: its arguments and everything around them that shapes the
    output (see the module docstring)."""
    encoding = getattr(sys.stdout, "encoding", "") or ""
    return inputs_key([os.getcwd(), repr(list(argv)), encoding], environ)


def remembered(key: bytes) -> Answer | None:
    """The answer stored under ``key`` if every path it read is unchanged, else None."""
    value = shared_results().get(KIND, key)
    if not (isinstance(value, dict) and isinstance(value.get("code"), int)):
        return None
    stdout, stderr = value.get("stdout"), value.get("stderr")
    if not (isinstance(stdout, str) and isinstance(stderr, str)):
        return None
    if not is_current(value.get("evidence")):
        return None
    try:
        return Answer(
            stdout.encode("utf-8", "surrogateescape"),
            stderr.encode("utf-8", "surrogateescape"),
            value["code"],
        )
    except UnicodeError:
        return None


def remember(key: bytes, answer: Answer, recorder: ReadRecorder) -> bool:
    """Store ``answer`` with the evidence of what it read; False when it may not be (racy)."""
    evidence = recorder.evidence()
    if evidence is None:
        return False
    shared_results().put(
        KIND,
        key,
        {
            "code": answer.code,
            "stdout": answer.stdout.decode("utf-8", "surrogateescape"),
            "stderr": answer.stderr.decode("utf-8", "surrogateescape"),
            "evidence": evidence,
        },
    )
    return True


def remembered_parts(kind: str, key: bytes) -> list[bytes] | None:
    """The parts stored under ``(kind, key)`` by :func:`remember_parts`, if their seal is this
    user's (:mod:`.seal`) and every path they read is unchanged, else None."""
    value = shared_results().get(kind, key)
    if not isinstance(value, dict):
        return None
    evidence = value.get("evidence")
    encoded = value.get("parts")
    if not (isinstance(encoded, list) and all(isinstance(p, str) for p in encoded)):
        return None
    try:
        parts = [base64.b64decode(p, validate=True) for p in encoded]
    except ValueError:
        return None
    from .seal import is_sealed

    sealed = [_evidence_bytes(evidence), *parts]
    if not is_sealed(value.get("seal"), _label(kind, key), sealed) or not is_current(evidence):
        return None
    return parts


def remember_parts(kind: str, key: bytes, parts: Sequence[bytes], recorder: ReadRecorder) -> bool:
    """Store ``parts`` (bytes loaded with trust, such as pickles) sealed, with the evidence of
    what they were made from; False when they may not be (racy, no seal key)."""
    from .seal import seal

    evidence = recorder.evidence()
    if evidence is None:
        return False
    made = seal(_label(kind, key), [_evidence_bytes(evidence), *parts])
    if made is None:
        return False
    encoded = [base64.b64encode(p).decode("ascii") for p in parts]
    shared_results().put(kind, key, {"parts": encoded, "seal": made, "evidence": evidence})
    return True


def _label(kind: str, key: bytes) -> bytes:
    """What a seal binds the parts to: their kind and their key (never moved to another)."""
    return kind.encode() + b"\0" + key


def _evidence_bytes(evidence: object) -> bytes:
    """The evidence as the seal covers it (so no entry can be made to look current with
    evidence of its own): the JSON it is stored as, written the one way."""
    return json.dumps(evidence, separators=(",", ":"), ensure_ascii=True).encode()
