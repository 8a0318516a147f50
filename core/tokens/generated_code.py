"""Generated code, remembered: the methods :mod:`dataclasses` writes for each class, and the
constructor :func:`collections.namedtuple` writes for each tuple, compiled once on this machine
instead of at every start.

Both write Python source as a class is made and compile it there (``exec`` and ``eval`` on
text). Before Python 3.13 a frozen dataclass costs three compiles: the app's first frame made
some 380, promptdeck's and Textual's, 50 ms on a 2-vCPU machine (a quarter of what a trivial
Textual app takes to draw); every command that loads the engine makes a hundred or more.
Python keeps each module's compiled code in ``__pycache__``, never this.

:func:`install_code_memory` gives each of the two modules a function of its own under the
builtin's name (a module's global is found before the builtin): given source text, it runs the
code compiled for that very text, compiling a text it has not met as the builtin would (the
same file name, no ``__future__`` flag of its own caller) and keeping it. Anything else goes to
the builtin untouched. So a class gets the same methods, compiled from the same source
(``tests/unit/test_generated_code`` compares them).

:func:`save_code_memory` adds what this process compiled to the file, when it compiled
anything: the CLI at exit, the app once its first frame is on screen (with the stylesheet). One
file per interpreter (marshal's format and the bytecode belong to it), kept to
:data:`MAX_ENTRIES`: past that, the next write keeps only what its process used.

Loading compiled code is running code, so the file is sealed like the app's opening (:mod:`.seal`,
HMAC under a key only this user can read): a file whose seal does not match — planted, damaged,
from another interpreter — or that is a link, not a regular file, or over :data:`MAX_BYTES`, is
never loaded. Nothing is shown for it: every class is then compiled as Python would, and the
next write replaces the file (never a file that is not promptdeck's own). The memory makes no
key of its own: until the app has made one (its first start seals its remembered opening),
nothing is written.

Location: ``$XDG_CACHE_HOME/promptdeck/generated-code-<interpreter>.bin``.
``PROMPTDECK_CODE_CACHE=off`` turns it off.
"""

from __future__ import annotations

import atexit
import builtins
import collections
import dataclasses
import marshal
import os
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

from ..atomic import write_whole
from ..project.user_dirs import cache_folder, foreign_file
from ..switches import turned_off

ENV_VAR = "PROMPTDECK_CODE_CACHE"
MARK = b"promptdeck generated code 1\n"
"""The file's first bytes, then the seal (64 hex digits), then the marshalled memory."""
SEAL_CHARS = 64
MAX_ENTRIES = 2_000
"""Compiled texts kept (the app's start uses some 380, a command fewer)."""
MAX_BYTES = 8 * 1024 * 1024
"""A larger file is not read, and a memory that would be larger is not written."""

_Key = tuple[str, str]  # (the compile mode, the source text)


def memory_path(environ: dict[str, str] | None = None) -> Path:
    """Where this interpreter's memory is kept."""
    optimized = f"-O{sys.flags.optimize}" if sys.flags.optimize else ""
    tag = sys.implementation.cache_tag or sys.implementation.name
    return cache_folder(environ) / f"generated-code-{tag}{optimized}.bin"


def _label() -> bytes:
    # What the code was compiled by and for: a memory from another interpreter never matches.
    return f"generated-code {sys.version} -O{sys.flags.optimize}".encode()


class _Memory:
    """This process's memory: the compiled texts the file held, and the code this process ran."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pid = os.getpid()
        self.kept: dict[_Key, bytes] = {}
        """What the file held when first read, and what this process wrote to it since."""
        self.ran: dict[_Key, CodeType] = {}
        """Every text this process ran, with its code (taken from ``kept`` or compiled)."""
        self._loaded = False
        self._lock = threading.Lock()

    def code(self, mode: str, source: str) -> CodeType:
        """The code compiled from ``source`` in ``mode``, remembered or compiled now."""
        key = (mode, source)
        code = self.ran.get(key)  # two classes of one shape: the same text
        if code is not None:
            return code
        if not self._loaded:
            with self._lock:  # two threads' first classes: one read
                if not self._loaded:
                    self.kept.update(_read(self.path))
                    self._loaded = True
        kept = self.kept.get(key)
        if kept is not None:
            try:
                code = marshal.loads(kept)
            except (EOFError, ValueError, TypeError):
                code = None
        if not isinstance(code, CodeType):
            # As the builtin compiles text: "<string>", and no __future__ flag of this module.
            code = compile(source, "<string>", mode, dont_inherit=True)
        self.ran[key] = code
        return code

    def new(self) -> dict[_Key, CodeType]:
        """What this process compiled that the file does not hold (a copy: the app's threads
        may still be adding)."""
        return {key: code for key, code in list(self.ran.items()) if key not in self.kept}


_memory: _Memory | None = None


def _remembering(builtin: Callable[..., Any], mode: str) -> Callable[..., Any]:
    """``builtin`` (exec or eval), with the code for a source text taken from the memory."""

    def run(source: Any, namespace: Any = None, /, *rest: Any, **options: Any) -> Any:
        if namespace is None:  # the builtin's default: its caller's namespace, not this one's
            caller = sys._getframe(1)
            namespace = caller.f_globals
            if not rest or rest[0] is None:
                rest = (caller.f_locals, *rest[1:])
        memory = _memory
        if memory is not None and type(source) is str:
            source = memory.code(mode, source)
        return builtin(source, namespace, *rest, **options)

    run.__name__ = run.__qualname__ = builtin.__name__
    run.__doc__ = builtin.__doc__
    return run


def install_code_memory(environ: dict[str, str] | None = None) -> bool:
    """Compile the classes made from now on through the memory, and remember them at exit.

    Once per process; False when ``PROMPTDECK_CODE_CACHE`` turns it off (or it already was).
    """
    global _memory
    if _memory is not None or turned_off(ENV_VAR, environ):
        return False
    _memory = _Memory(memory_path(environ))
    # Module globals, found before the builtins: dataclasses' `exec(txt, globals, ns)` and
    # namedtuple's `eval(code, namespace)` now reach the memory.
    dataclasses.exec = _remembering(builtins.exec, "exec")  # type: ignore[attr-defined]
    collections.eval = _remembering(builtins.eval, "eval")  # type: ignore[attr-defined]
    atexit.register(save_code_memory)
    return True


def uninstall_code_memory() -> None:
    """Back to the builtins, nothing remembered (tests)."""
    global _memory
    _memory = None
    vars(dataclasses).pop("exec", None)
    vars(collections).pop("eval", None)
    atexit.unregister(save_code_memory)


def save_code_memory() -> bool:
    """Write the memory if this process compiled anything new; True when it was written.

    Never raises: a memory that cannot be written costs the next start its compiles, no more.
    """
    memory = _memory
    if memory is None or memory.pid != os.getpid():
        return False  # not installed, or a forked child (its parent writes)
    new = memory.new()
    path = memory.path
    if not new or not path.parent.parent.is_dir():
        return False  # nothing new; no cache folder (the user's to make)
    from .seal import has_key, seal

    if not has_key():
        return False  # the app makes the key; nothing is kept before it has
    if foreign_file(path, lambda head: head.startswith(MARK), head=len(MARK)) is not None:
        return False  # not ours: left as it is
    written = {key: marshal.dumps(code) for key, code in new.items()}
    # What other processes wrote since this one read it, then this one's: the app and a
    # command never undo each other's work.
    codes = {**_read(path), **memory.kept, **written}
    if len(codes) > MAX_ENTRIES:
        codes = {key: codes[key] for key in list(memory.ran) if key in codes}
    body = marshal.dumps(codes)
    mark = seal(_label(), (body,), make_key=False)
    if mark is None or len(body) > MAX_BYTES:
        return False
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        write_whole(path, MARK + mark.encode("ascii") + body, mode=0o600)
    except OSError:
        return False
    memory.kept.update(written)
    return True


def _read(path: Path) -> dict[_Key, bytes]:
    """The memory in ``path``; empty when it is missing, not a regular file of its own, too
    large, unsealed or damaged."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except (OSError, ValueError):
        return {}
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return {}
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return {}
    finally:
        os.close(descriptor)
    head = len(MARK) + SEAL_CHARS
    if len(data) > MAX_BYTES or not data.startswith(MARK):
        return {}
    from .seal import is_sealed

    found, body = data[len(MARK) : head].decode("ascii", "replace"), data[head:]
    if not is_sealed(found, _label(), (body,)):
        return {}
    try:
        codes = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {
        key: value
        for key, value in codes.items()
        if type(key) is tuple
        and len(key) == 2
        and key[0] in ("exec", "eval")
        and type(key[1]) is str
        and type(value) is bytes
    }
