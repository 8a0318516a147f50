"""The command palette (``ctrl+p``): every key of the screen, every theme, every story."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from promptdeck.core.terminal import printable_line
from promptdeck.themes import THEMES
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

Command = tuple[str, str, Callable[[], object]]


class PromptdeckCommands(Provider):
    """Builds commands from the active screen's state: its bindings (title = the key's
    description, help = its tooltip), the shipped themes, and the stories to jump to."""

    def _commands(self) -> Iterator[Command]:
        screen = self.screen
        for binding in getattr(screen, "BINDINGS", ()):
            if not isinstance(binding, Binding) or not binding.id:
                continue
            key = binding.key_display or binding.key
            title = f"{binding.description} ({key})"
            yield title, binding.tooltip, partial(screen.run_action, binding.action)
        for theme in THEMES:
            label = theme.name.removeprefix("promptdeck-").replace("-", " ")
            yield (
                f"Theme: {label}",
                f"Switch to the {label} theme (remembered)",
                partial(setattr, self.app, "theme", theme.name),
            )
        catalog = getattr(screen, "catalog", None)
        select = getattr(screen, "select_story", None)
        if catalog is not None and select is not None:
            for story in catalog.stories:
                yield (
                    printable_line(f"Story {story.id}: {story.title}"),
                    f"Preview story {story.id} ({story.status})",
                    partial(select, story),
                )

    async def discover(self) -> Hits:
        """Every key and theme, before anything is typed (stories only when searched)."""
        for title, help_text, command in self._commands():
            if title.startswith("Story "):
                continue
            yield DiscoveryHit(title, command, help=help_text)

    async def search(self, query: str) -> Hits:
        """Fuzzy matches over titles."""
        matcher = self.matcher(query)
        for title, help_text, command in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), command, text=title, help=help_text)
