"""What would bring an oversized injection under the error line: the files to leave out.

The advice is the minimal drop of :mod:`.solver` against the injection's error line: only files
that are really in the prompt, named one by one, never the story's own; and the size it
predicts is the size of the prompt composed with them left out (the same core call the preview
makes). The app's run confirmation and ``promptdeck run --dry-run`` both list it under a
refusal.
"""

from __future__ import annotations

from ..lean_dataclass import dataclass
from ..project.workspace import Workspace
from ..prompt.compose import compose_prompt
from ..prompt.request import ComposedPrompt, PromptRequest
from ..units import human_bytes
from .solver import FitAnswer, composed_measure, error_line_target, solve


@dataclass(frozen=True)
class SizeOption:
    """One change the user can make, and the injection size it would give.

    Attributes:
        action: what to do, naming the files: ``leave out a.md, b.md``.
        saving: bytes it saves.
        size_after: the injection size after it (composed, not estimated).
        fits: True when it brings the injection under the error line.
        paths: the files it leaves out.
        proof: how the set is known to be minimal.
    """

    action: str
    saving: int
    size_after: int
    fits: bool
    paths: tuple[str, ...] = ()
    proof: str = ""

    def describe(self) -> str:
        """``leave out a.md (--exclude): −38.2 KiB → 120.0 KiB, under the line``."""
        verdict = "under the line" if self.fits else "still over"
        saving, after = human_bytes(self.saving), human_bytes(self.size_after)
        return f"{self.action}: −{saving} → {after}, {verdict}"


def fit_under_error_line(workspace: Workspace, prompt: ComposedPrompt) -> FitAnswer:
    """The minimal drop that brings ``prompt``'s injection under its error line.

    Blocking (composes the prompt again for each check): call it from a worker thread.
    """
    target = error_line_target(prompt)

    def compose(request: PromptRequest) -> ComposedPrompt:
        return compose_prompt(workspace, None, request, count_tokens=False, scan_secrets=False)

    return solve(prompt, target, composed_measure(compose, prompt.request, target))


def size_options(workspace: Workspace, prompt: ComposedPrompt) -> list[SizeOption]:
    """The files to leave out so the injection fits, as one option (none when no drop fits).

    Blocking (composes the prompt again): call it from a worker thread.
    """
    answer = fit_under_error_line(workspace, prompt)
    if not answer.fits or not answer.drop or answer.size_after is None:
        return []
    paths = tuple(item.path for item in answer.drop)
    how = "--exclude, or space on the file's row"
    if any(item.plan_context for item in answer.drop):
        # A file the story's plan asks to load is listed with the story's own: --leave-out.
        how = "; ".join(item.flag for item in answer.drop)
    action = "leave out " + ", ".join(paths) + f" ({how})"
    saving = prompt.injection.size_bytes - answer.size_after
    return [SizeOption(action, saving, answer.size_after, True, paths, answer.proof)]
