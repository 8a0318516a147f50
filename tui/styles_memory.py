"""The app's stylesheet as Textual parsed it, remembered from one start to the next.

Textual parses every stylesheet at each start: the app's own files and each widget class's
default CSS, as the widgets first mount: some 15 ms of the main screen's first frame, always
with the same result, as the rules depend only on the CSS text, the theme's variables and
Textual's parser. So once the app is drawn, what Textual parsed is remembered
(:func:`remember`, pickled, in the result store and sealed with the user's key like the
remembered opening), and at the next start the opening helper sends it back before anything
else (:func:`remembered`, :mod:`promptdeck.tui.session.opening`). The app hands it to its
stylesheet as already parsed (:func:`install`) when the theme's variables and Textual's CSS
code are the ones it was parsed with; Textual then finds each piece of CSS among its own
parsed ones (its cache is keyed by the CSS text itself), and parses only what is new.

This reaches into two private parts of Textual's ``Stylesheet`` (``_parse_cache`` and
``_variables``). Should they change, nothing is remembered or installed and the app parses
as Textual does (``tests/tui/test_styles_memory.py`` would say so).
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
from typing import TYPE_CHECKING, Any

from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.switches import ANSWER_CACHE, turned_off

if TYPE_CHECKING:
    from textual.css.stylesheet import Stylesheet

KIND = "app-styles"
"""The result store's kind for remembered stylesheets."""


@dataclass(frozen=True)
class StylesMemory:
    """What Textual parsed, and what with.

    Attributes:
        textual: Textual's CSS code, as its files were (its parser made the rules).
        variables: the theme's variables the rules were parsed with.
        parsed: each piece of CSS as Textual's cache keys it (its text, where it was read
            from, and how it ranks), with the rules parsed from it.
    """

    textual: str
    variables: dict[str, str]
    parsed: tuple[tuple[tuple[Any, ...], list[Any]], ...]


def memory_key(theme: str | None) -> bytes:
    """What a remembered stylesheet is filed under: the theme asked for, the interpreter (the
    rules are its pickles), and promptdeck's code and environment."""
    from promptdeck.core.tokens import inputs_key

    return inputs_key(["app styles", repr(theme), sys.version])


def remembered(theme: str | None) -> bytes | None:
    """The remembered stylesheet for ``theme``, pickled as it was remembered (None if there is
    none, or it is not this user's own). Imports no Textual: the opening helper asks."""
    if turned_off(ANSWER_CACHE):
        return None
    from promptdeck.core.tokens import remembered_parts

    try:
        parts = remembered_parts(KIND, memory_key(theme))
    except Exception:  # a memory that cannot be read is no memory: Textual parses
        return None
    return parts[0] if parts and len(parts) == 1 else None


@functools.lru_cache(maxsize=1)
def _parser_identity() -> str:
    """Textual's CSS code as its files are now (name, size, time): another Textual, or an edited
    one, is another identity. Not its version: asking that imports ``importlib.metadata``,
    some 10 ms of the first frame."""
    from textual import css

    folder = os.path.dirname(css.__file__)
    seen = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            info = os.stat(os.path.join(folder, name))
            seen.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("\n".join(seen).encode()).hexdigest()


def loaded(body: object) -> StylesMemory | None:
    """``body`` (a remembered stylesheet as the helper sent it) as a memory; None if it is not
    one."""
    return body if isinstance(body, StylesMemory) else None


def install(stylesheet: Stylesheet, memory: StylesMemory | None) -> bool:
    """Hand ``memory``'s parsed CSS to ``stylesheet``, if it was parsed with the variables the
    stylesheet has now and by this Textual; True if it was handed over."""
    if memory is None:
        return False
    try:
        if memory.textual != _parser_identity() or memory.variables != stylesheet._variables:
            return False
        cache = stylesheet._parse_cache
        for key, rules in memory.parsed:
            cache[key] = rules
    except (AttributeError, TypeError):  # Textual keeps its parsed CSS elsewhere now
        return False
    return True


def to_remember(stylesheet: Stylesheet, memory: StylesMemory | None) -> StylesMemory | None:
    """What ``stylesheet`` has parsed, if that is more than ``memory`` holds (None when the
    memory already holds it all, or the stylesheet's parsed CSS cannot be read)."""
    try:
        cache = stylesheet._parse_cache
        found = [(key, cache.get(key)) for key in cache.keys()]  # noqa: SIM118 - no __iter__
        variables = dict(stylesheet._variables)
    except (AttributeError, TypeError):
        return None
    parsed = tuple((key, rules) for key, rules in found if rules is not None)
    if not parsed or len(parsed) != len(found):
        return None
    held = {key for key, _ in memory.parsed} if memory is not None else set()
    if memory is not None and memory.variables == variables and held >= {k for k, _ in parsed}:
        return None
    return StylesMemory(_parser_identity(), variables, parsed)


def remember(memory: StylesMemory, theme: str | None) -> bool:
    """Keep ``memory`` for the next start with ``theme`` (off the UI thread: it writes the
    result store); False if it was not kept."""
    if turned_off(ANSWER_CACHE):
        return False
    from promptdeck.core.tokens import ReadRecorder, own_cache_files, remember_parts

    try:
        body = pickle.dumps(memory, protocol=pickle.HIGHEST_PROTOCOL)
        # Made from no file: the parsed CSS is keyed by its own text.
        return remember_parts(KIND, memory_key(theme), [body], ReadRecorder(own_cache_files()))
    except Exception:  # not remembered: Textual parses it again next time
        return False
