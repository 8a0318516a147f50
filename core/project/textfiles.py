"""The one guarded way promptdeck reads a workspace file.

Projects are cloned from anywhere, so a file named ``sprint-status.yaml`` may be a FIFO, a
symlink to ``/dev/zero`` or to a home-folder secret, a sparse 10 GB file or a symlink loop.
:func:`read_file_bytes` answers every such case from ``stat`` before a byte is read:

1. ``stat`` (links followed) first: only a regular file is opened — never a FIFO, device,
   socket or folder, which could block forever or never end — and one over the size limit is
   ``too-large``, not opened; a symlink loop is ``unreadable``;
2. the file is opened with ``O_NONBLOCK | O_NOCTTY`` and ``fstat``-ed again, so a file swapped
   for a FIFO between the checks neither blocks nor is read;
3. the path the kernel opened (``/proc/self/fd``; a resolved path where there is no ``/proc``)
   must lie inside the project root — ``outside-project`` otherwise, whatever symlink or
   symlinked folder led there — before a byte is read;
4. at most ``limit + 1`` bytes are ever read.

:func:`decode_text` then answers "is this UTF-8 text?" (``empty``, ``binary``, ``not-utf8``).
:func:`read_text_file` and :func:`read_text_head` put the two together the same way for every
reader (the story sources, the injected context, the app's preview); :func:`parse_toml` reads
the TOML such a file holds, every refusal a :class:`StructuredProblem`.
Every refusal is a :class:`TextProblem` with a short reason; nothing here raises for a bad file.
"""

from __future__ import annotations

import codecs
import errno
import json
import os
import re
import stat as stat_module
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..lean_dataclass import dataclass

DEFAULT_READ_LIMIT = 2 * 1024 * 1024
"""Largest file read whole when no limit is given (the ``[read] max_bytes`` default)."""

_BOM = "\ufeff"
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_LISTED_FLAGS = _OPEN_FLAGS | getattr(os, "O_NOFOLLOW", 0)
_PROC_FD = "/proc/self/fd"
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class TextProblem:
    """Why a file is not usable text.

    Attributes:
        reason: ``missing``, ``unreadable``, ``outside-project``, ``too-large``, ``empty``,
            ``binary`` or ``not-utf8``.
        detail: a short human explanation (the OS error, the offset of the bad byte).
    """

    reason: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}" if self.detail else self.reason


def _kind(mode: int) -> str:
    if stat_module.S_ISDIR(mode):
        return "is a folder"
    if stat_module.S_ISFIFO(mode):
        return "a FIFO, not a regular file"
    if stat_module.S_ISCHR(mode) or stat_module.S_ISBLK(mode):
        return "a device, not a regular file"
    if stat_module.S_ISSOCK(mode):
        return "a socket, not a regular file"
    return "not a regular file"


def _os_problem(exc: OSError) -> TextProblem:
    if isinstance(exc, FileNotFoundError):
        return TextProblem("missing")
    if isinstance(exc, IsADirectoryError):
        return TextProblem("unreadable", "is a folder")
    if exc.errno == errno.ELOOP:
        return TextProblem("unreadable", "a symlink loop")
    return TextProblem("unreadable", exc.strerror or type(exc).__name__)


def _too_large(size: int, limit: int) -> TextProblem:
    return TextProblem("too-large", f"{size:,} bytes, over the {limit:,}-byte read limit; not read")


def resolve_inside(path: str | os.PathLike[str], root: Path | None) -> Path | TextProblem:
    """``path`` with every symlink resolved, or why it may not be read.

    Args:
        path: the file.
        root: the project root (resolved); None skips the inside-the-project check.
    """
    try:
        real = Path(path).resolve(strict=True)
    except RuntimeError:
        return TextProblem("unreadable", "a symlink loop")
    except OSError as exc:
        return _os_problem(exc)
    except ValueError:
        return TextProblem("unreadable", "a NUL byte in the path")
    if root is not None:
        try:
            real.relative_to(root)
        except ValueError:
            return TextProblem("outside-project", "leads outside the project root; not read")
    return real


def stat_regular(
    path: str | os.PathLike[str], root: Path | None, limit: int = DEFAULT_READ_LIMIT
) -> tuple[Path, os.stat_result] | TextProblem:
    """Check a file from ``stat`` alone: inside ``root``, regular, at most ``limit`` bytes.

    Returns:
        The resolved path and its ``stat``, or a :class:`TextProblem`. Nothing is opened.
    """
    real = resolve_inside(path, root)
    if isinstance(real, TextProblem):
        return real
    try:
        info = os.stat(real)
    except OSError as exc:
        return _os_problem(exc)
    problem = _stat_verdict(info, limit)
    return problem if problem is not None else (real, info)


def _stat_verdict(info: os.stat_result, limit: int) -> TextProblem | None:
    """Why a file with this ``stat`` is not read (not a regular file, over ``limit``), or
    None: the verdict every read takes from ``stat`` before it opens anything."""
    if not stat_module.S_ISREG(info.st_mode):
        return TextProblem("unreadable", _kind(info.st_mode))
    if info.st_size > limit:
        return _too_large(info.st_size, limit)
    return None


def read_file_bytes(
    path: str | os.PathLike[str],
    root: Path | None,
    *,
    limit: int = DEFAULT_READ_LIMIT,
    head: int | None = None,
    listed: bool = False,
) -> bytes | TextProblem:
    """The bytes of a regular file inside ``root``, checked from ``stat`` before reading.

    Args:
        path: the file.
        root: the resolved project root; None skips the inside-the-project check (only for
            files promptdeck itself names, such as a test's temporary file).
        limit: the most bytes the file may hold; a larger one is ``too-large``, unread.
        head: read at most this many bytes (plus one, to tell a cut file).
        listed: the caller's folder listing (``os.scandir``, no syscall per entry) already
            says this is a regular file and not a symlink, in a folder checked to lie inside
            ``root``. The first ``stat`` and the real-path check are then skipped — discovery
            reads thousands of such files — and the file is opened with ``O_NOFOLLOW``, so an
            entry swapped for a symlink since the listing is refused; ``fstat`` still refuses
            one swapped for a FIFO.

    Returns:
        The bytes (every byte, a BOM included), or a :class:`TextProblem`.
    """
    if not listed:
        try:
            info = os.stat(path)
        except ValueError:
            return TextProblem("unreadable", "a NUL byte in the path")
        except OSError as exc:
            return _os_problem(exc)
        problem = _stat_verdict(info, limit)
        if problem is not None:
            return problem
    try:
        descriptor = os.open(path, _LISTED_FLAGS if listed else _OPEN_FLAGS)
    except OSError as exc:
        return _os_problem(exc)
    try:
        info = os.fstat(descriptor)
        # Checked again on the open descriptor: the path may have been swapped since stat.
        if not stat_module.S_ISREG(info.st_mode):
            return TextProblem("unreadable", _kind(info.st_mode))
        if not listed and root is not None and not _inside(_opened_path(descriptor, path), root):
            return TextProblem("outside-project", "leads outside the project root; not read")
        wanted = (head if head is not None else limit) + 1
        if info.st_size > limit:
            return _too_large(info.st_size, limit)
        parts: list[bytes] = []
        got = 0
        while got < wanted:
            part = os.read(descriptor, min(_CHUNK, wanted - got))
            if not part:
                break
            parts.append(part)
            got += len(part)
    except OSError as exc:
        return _os_problem(exc)
    finally:
        os.close(descriptor)
    data = b"".join(parts)
    if head is None and len(data) > limit:
        return _too_large(len(data), limit)
    return data


def _opened_path(descriptor: int, path: str | os.PathLike[str]) -> str:
    """The real path of the file open on ``descriptor``: what the kernel opened, so no symlink
    swapped in after the open can mislead the check."""
    try:
        return os.readlink(f"{_PROC_FD}/{descriptor}")
    except OSError:
        return os.path.realpath(path)


def _inside(real: str, root: Path) -> bool:
    base = str(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def decode_text(data: bytes, *, complete: bool = True, offset: int = 0) -> str | TextProblem:
    """``data`` as UTF-8 text (a leading BOM dropped), or why it is not text.

    Args:
        data: the bytes.
        complete: False when ``data`` is a file's head: a character cut at the end is left
            out and ``empty`` is not reported.
        offset: where ``data`` starts in the file, for the offsets in messages.
    """
    if complete and not data.strip():
        return TextProblem("empty")
    nul = data.find(b"\0")
    if nul >= 0:
        return TextProblem("binary", f"NUL byte at offset {offset + nul}")
    try:
        # A whole file decodes in one call; a head keeps a character cut at its end back.
        if complete:
            text = data.decode("utf-8")
        else:
            text = codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError as exc:
        return TextProblem("not-utf8", f"invalid byte at offset {offset + exc.start}")
    return text.removeprefix(_BOM) if offset == 0 else text


def read_text(
    path: str | os.PathLike[str], root: Path | None, *, limit: int = DEFAULT_READ_LIMIT
) -> str | TextProblem:
    """A whole file as UTF-8 text through :func:`read_file_bytes` and :func:`decode_text`."""
    data = read_file_bytes(path, root, limit=limit)
    if isinstance(data, TextProblem):
        return data
    return decode_text(data)


HEAD_BYTES = 4096
"""How much of a file :func:`read_text_head` reads by default: enough for a first heading."""


def printable_name(name: str) -> str:
    """``name`` as valid text: the bytes of a non-UTF-8 file name shown as U+FFFD.

    Returns ``name`` itself when it is valid UTF-8, so ``printable_name(n) != n`` tells that a
    name cannot be shown, written to JSON or put in a prompt as it is.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return name


def read_text_file(
    path: str | os.PathLike[str],
    *,
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
    listed: bool = False,
) -> str | TextProblem:
    """Read a whole file as UTF-8 text (a leading BOM dropped), through the guarded reader.

    Args:
        path: the file to read.
        root: the project root the file must resolve inside (every workspace reader passes
            it); None skips that check.
        limit: the most bytes read; a larger file is ``too-large`` and is not opened.
        listed: see :func:`read_text_head`.

    Returns:
        The text, or a :class:`TextProblem` saying why the file is not usable text.
    """
    data = read_file_bytes(path, root, limit=limit, listed=listed)
    if isinstance(data, TextProblem):
        return data
    return decode_text(data)


def read_text_head(
    path: str | os.PathLike[str],
    size: int = HEAD_BYTES,
    *,
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
    listed: bool = False,
) -> tuple[str, bool] | TextProblem:
    """Read at most ``size`` bytes of a file as UTF-8 text, through the guarded reader.

    A multi-byte character cut by the limit is left out rather than reported as bad UTF-8.

    Args:
        path: the file to read.
        size: the most bytes to read.
        root: the project root the file must resolve inside; None skips that check.
        limit: a file larger than this is ``too-large`` (from ``stat``), even for a head read.
        listed: a folder listing already showed a regular, non-symlink file inside ``root``
            (see :func:`~promptdeck.core.project.textfiles.read_file_bytes`).

    Returns:
        ``(text, complete)`` — ``complete`` is True when the whole file was read — or a
        :class:`TextProblem`. ``empty`` is only reported when the whole file was read.
    """
    data = read_file_bytes(path, root, limit=limit, head=size, listed=listed)
    if isinstance(data, TextProblem):
        return data
    complete = len(data) <= size
    result = decode_text(data[:size], complete=complete)
    if isinstance(result, TextProblem):
        return result
    return result, complete


RECORD_JSON_LIMIT = 4 * 1024 * 1024
"""Largest JSON record read back (``meta.json``, ``result.json``, ``session.json``…): a real
one is a few KiB; the limit only keeps a planted one from costing memory."""
RECORD_TEXT_LIMIT = 32 * 1024 * 1024
"""Largest text record read back (``system.md``, ``signals.jsonl``, a stream): far above any
real prompt or signal log, and a bound on what a planted file can cost."""


def read_json_object(
    path: str | os.PathLike[str], root: Path | None, *, limit: int = RECORD_JSON_LIMIT
) -> dict[str, Any] | TextProblem:
    """A JSON object kept in the project (a run record, a health count), through the guarded
    reader: a FIFO, a device, a link out of the project or a file over ``limit`` is refused
    before a byte is read, and anything but a JSON object is ``not-json``."""
    text = read_text(path, root, limit=limit)
    if isinstance(text, TextProblem):
        return text
    try:
        data = json.loads(text)
    except ValueError as exc:
        return TextProblem("not-json", str(exc).split(":", 1)[0])
    except RecursionError:
        return TextProblem("not-json", "nested too deeply")
    if not isinstance(data, dict):
        return TextProblem("not-json", f"a JSON {type(data).__name__}, not an object")
    return data


# TOML and YAML read from a repository: `tomllib` and PyYAML refuse more than malformed text,
# and not always with their own error. A number of more than 4,300 digits is a bare ValueError
# (Python's limit on turning digits into an int), deep nesting a RecursionError: each reader
# of a repository's TOML calls parse_toml (the YAML readers share the story sources'
# load_yaml, which does the same), so each is one problem naming the file, never a traceback.

LONG_NUMBER = "a number of more than 4,300 digits"
"""What Python refuses to turn into an ``int`` (``sys.get_int_max_str_digits``)."""
_INT_DIGITS = 4300
_DIGIT_RUN = re.compile(r"[0-9_]+")
_TOML_LINE = re.compile(r"\(at line (?P<line>\d{1,9}), column \d+\)")


class StructuredProblem(ValueError):
    """Why a TOML or YAML text could not be read, and the 1-based line where known.

    Attributes:
        message: what is wrong (``not valid TOML (…)``, ``TOML holding a number of …``).
        line: the line, or None.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(message if line is None else f"line {line}: {message}")


def long_number_line(text: str) -> int | None:
    """The 1-based line of the first run of more than 4,300 digits in ``text``, or None.

    Runs are taken whole, one after the other: a pattern asking for 4,301 digits would be
    tried again at each digit of every shorter run, time growing with each run's square.
    """
    for found in _DIGIT_RUN.finditer(text):
        if found.end() - found.start() > _INT_DIGITS:
            return text.count("\n", 0, found.start()) + 1
    return None


def parse_toml(text: str) -> dict[str, Any]:
    """``text`` parsed as TOML.

    Raises:
        StructuredProblem: not valid TOML, a number past Python's digit limit, or nesting too
            deep to parse.
    """
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE.search(str(exc))
        line = int(found.group("line")) if found else None
        raise StructuredProblem(f"not valid TOML ({exc})", line) from None
    except RecursionError:
        raise StructuredProblem("TOML nested too deeply to read") from None
    except ValueError:
        # tomllib's `int()` refuses a number past 4,300 digits with a bare ValueError.
        raise StructuredProblem(f"TOML holding {LONG_NUMBER}", long_number_line(text)) from None


MAX_TOML_DEPTH = 64
"""Deeper nesting (arrays, inline tables, dotted keys, table headers) is refused before
parsing: ``tomllib`` recurses on nested arrays and is quadratic in a dotted key's length, so
a hostile file 200,000 levels deep would otherwise crash it or exhaust memory."""


_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _surely_shallow(text: str) -> bool:
    """An upper bound of the nesting, in C-speed passes: the brackets alone (quotes ignored,
    which can only count more) and the dots of the longest line. A plan's ``tickets.toml``
    of thousands of entries passes here without the character-by-character walk."""
    depth = deepest = 0
    for char in _NOT_BRACKET.sub("", text):
        depth = depth + 1 if char in "[{" else max(0, depth - 1)
        deepest = max(deepest, depth)
        if deepest > MAX_TOML_DEPTH:
            return False
    return max((line.count(".") for line in text.splitlines()), default=0) <= MAX_TOML_DEPTH


def check_toml_shape(text: str, where: str) -> None:
    """Refuse TOML nested more than :data:`MAX_TOML_DEPTH` levels, cheaply, before parsing.

    Counts bracket depth and the dots of a key outside quoted strings; a multi-line string
    holding brackets can only make the count higher, never hide real nesting.

    Raises:
        ConfigError: too deep.
    """
    if _surely_shallow(text):
        return
    depth = dots = 0
    quote = ""
    for char in text:
        if quote:
            if char == quote or (quote == "#" and char == "\n"):
                dots = 0 if quote == "#" else dots
                quote = ""
            continue
        if char in "\"'#":
            quote = char
        elif char in "[{":
            depth += 1
            if depth > MAX_TOML_DEPTH:
                break
        elif char in "]}":
            depth = max(0, depth - 1)
        elif char == ".":
            dots += 1
            if dots > MAX_TOML_DEPTH:
                break
        elif char in "=,\n":
            dots = 0  # a key ends at "=", a value at "," or the line's end
    else:
        return
    raise ConfigError(where, None, f"valid TOML nested less deeply (at most {MAX_TOML_DEPTH})")
