"""The preview's words: the notes under its tabs and its title, as plain text made from the
composed prompt (the pane paints them; tests read them without a screen)."""

from __future__ import annotations

from promptdeck.core.project import Config
from promptdeck.core.prompt import ComposedPrompt, check_budget, notes_by_seriousness
from promptdeck.core.terminal import printable_line
from promptdeck.core.tokens import rules_read_twice

NOTE_ROWS = 2
"""Warning rows under the flags line (the notes are three rows high, one line each)."""


def notes_text(
    prompt: ComposedPrompt, config: Config, agent: str = "", rows: int | None = NOTE_ROWS
) -> str:
    """The notes under the tabs: what is included (and the key that changes it), the token
    budget when one is set, then every warning of the compose once, the most serious first
    (a missing story file, then an injection over the error line; see
    :func:`~promptdeck.core.prompt.notes_by_seriousness`), and a rules file ``agent`` would
    read twice.

    ``rows``: the warning rows there is room for (None: all). When there are more, the last
    row counts the rest (``+3 more``): the less serious notes are the ones left out."""
    selection = prompt.request.selection
    # A toggle with no candidate file says so instead of looking merely switched off.
    none = prompt.injection.toggle_notes()
    flags = [
        f"[p] project {'on' if selection.project_context else 'off'}",
        f"[d] discovery {'on' if selection.discovery else 'off'}"
        + (f" ({none['discovery']})" if none["discovery"] else ""),
        f"[t] tech-spec {'on' if selection.tech_spec else 'off'}"
        + (f" ({none['tech-spec']})" if none["tech-spec"] else ""),
    ]
    # A toggle with nothing to switch says so, rather than looking like a choice.
    for index, (key, category) in enumerate((("d", "discovery"), ("t", "tech-spec")), start=1):
        if prompt.injection.toggle_note(category):
            flags[index] = f"[{key}] no {category} files"
    if selection.additional_files:
        flags.append(f"[a] +{len(selection.additional_files)} added")
    if prompt.variant == "party":
        flags.append("[v] party")
    budget = check_budget(prompt, config)
    if budget.budget:
        used = "…" if budget.tokens is None else f"{budget.tokens:,}"
        flags.append(f"budget {used}/{budget.budget:,} tok" + (" OVER" if budget.over else ""))
    rules = prompt.rules
    twice = rules_read_twice(rules.path, agent) if rules and rules.status == "ok" else None
    warnings = [
        printable_line(w) for w in notes_by_seriousness(prompt, config, [twice] if twice else [])
    ]
    if rows is not None and len(warnings) > rows:
        left = len(warnings) - max(rows - 1, 0)
        warnings = [*warnings[: max(rows - 1, 0)], f"+{left} more (all in the tooltip)"]
    line = "  ".join(flags)
    if warnings:
        line += "\n⚠ " + "\n⚠ ".join(warnings)
    return line


def preview_title(prompt: ComposedPrompt, why: str = "") -> str:
    """``Preview · review (next) · 1-2 · create`` (`` · party`` for the party variant).

    The phase and why it is the one shown come first, so a narrow terminal that cuts the title
    short still says them (``why``: ``next``, ``last run``, ``done``, ``setting``, ``chosen``;
    ``next: status 'review', sprint-status.yaml:12`` when the story's tracked status chose it).
    """
    request = prompt.request
    party = " · party" if prompt.variant == "party" else ""
    # ``why`` may name a file of the project (the status's source): shown printable.
    phase = f"{request.phase} ({printable_line(why)})" if why else request.phase
    return f"Preview · {phase} · {prompt.story.id} · {request.mode}{party}"
