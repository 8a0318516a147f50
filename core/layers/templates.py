"""Layer templates: bundled in the package (``core/templates/``), overridable per workspace.

:class:`TemplateSet` finds a template (a workspace override in ``config.paths_templates``
first, read fresh and never from outside the project; else the bundled one) and
:func:`render` fills it: placeholders are ``$name``, an unknown placeholder is a
:class:`ComposeError`, never a blank, and a line holding only a placeholder whose value is
empty is dropped with the blank line after it (how optional sections come and go).
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from ..errors import ComposeError
from ..lean_dataclass import dataclass
from ..project.textfiles import DEFAULT_READ_LIMIT, TextProblem, read_text


@dataclass(frozen=True)
class TemplateText:
    """A template's text and where it came from (``template:NAME`` or a workspace path)."""

    name: str
    text: str
    source: str


# The bundled templates sit at the top of core/: the prompt room's texts are templates too.
_PACKAGE_DIR = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=128)
def _bundled(name: str) -> str | None:
    # Package data cannot change under a running process, so it is read once.
    # The package is installed as plain files: a path under core/ is the package data
    # (importlib.resources would cost a headless command ~10 ms of imports).
    entry = _PACKAGE_DIR / "templates" / name
    try:
        return entry.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return None


def bundled_template(name: str) -> TemplateText:
    """The bundled template ``name``.

    Raises:
        ComposeError: no such bundled template.
    """
    text = _bundled(name)
    if text is None:
        raise ComposeError(f"template {name} is missing from the installed package")
    return TemplateText(name, text, f"template:{name}")


class TemplateSet:
    """Layer templates: a workspace override when one exists, else the bundled one.

    Overrides are read fresh on every :meth:`get`, so an edit shows at the next compose.
    """

    def __init__(
        self,
        root: Path | None = None,
        override_dir: str | None = None,
        limit: int = DEFAULT_READ_LIMIT,
    ) -> None:
        """Use overrides from ``root / override_dir`` (none when either is None), each read
        through the guarded reader with at most ``limit`` bytes."""
        self.root = root
        self.override_dir = override_dir
        self.limit = limit

    def _override_path(self, name: str) -> tuple[Path, str] | None:
        if self.root is None or not self.override_dir:
            return None
        folder = Path(self.override_dir)
        path = (folder if folder.is_absolute() else self.root / folder) / name
        shown = (Path(self.override_dir) / name).as_posix()
        return path, shown

    def get(self, name: str) -> TemplateText:
        """The template ``name``, overridden or bundled.

        Raises:
            ComposeError: an override exists but is not readable UTF-8 text or lies (or
                links) outside the project, or the bundled template is missing.
        """
        override = self._override_path(name)
        if override is not None:
            path, shown = override
            if os.path.lexists(path):
                assert self.root is not None  # an override path exists only with a root
                # Never read a file outside the project into a prompt: a cloned repository
                # could otherwise send a home-folder secret to the agent.
                text = read_text(path, self.root.resolve(), limit=self.limit)
                if isinstance(text, TextProblem):
                    if text.reason == "missing" or text.detail == "is a folder":
                        return bundled_template(name)
                    if text.reason == "empty":
                        text = ""
                    elif text.reason == "outside-project":
                        raise ComposeError(
                            f"template override {shown} leads outside the project; not read"
                        )
                    elif text.reason in ("not-utf8", "binary"):
                        raise ComposeError(f"template override {shown}: not UTF-8 text")
                    else:
                        raise ComposeError(f"template override {shown}: {text}")
                return TemplateText(name, text, shown)
        return bundled_template(name)


BUNDLED = TemplateSet()
"""Bundled templates only (no workspace)."""

_PLACEHOLDER_LINE = re.compile(r"^[ \t]*\$(?:\{(\w+)\}|(\w+))[ \t]*$")


def render(template: TemplateText, values: Mapping[str, str]) -> str:
    """Fill ``template`` from ``values``.

    A line that holds only a placeholder whose value is ``""`` is dropped together with the
    blank line after it. Leading and trailing newlines of the result are removed.

    Raises:
        ComposeError: the template names a placeholder ``values`` lacks, or has a stray ``$``.
    """
    kept: list[str] = []
    drop_blank = False
    for line in template.text.replace("\r\n", "\n").split("\n"):
        match = _PLACEHOLDER_LINE.match(line)
        if match:
            name = match.group(1) or match.group(2)
            if values.get(name, None) == "":
                drop_blank = True
                continue
        if drop_blank and not line.strip():
            drop_blank = False
            continue
        drop_blank = False
        kept.append(line)
    try:
        text = string.Template("\n".join(kept)).substitute(values)
    except KeyError as exc:
        raise ComposeError(
            f"template {template.source}: unknown placeholder ${exc.args[0]}"
        ) from None
    except ValueError as exc:
        raise ComposeError(f"template {template.source}: {exc}") from None
    return text.strip("\n")
