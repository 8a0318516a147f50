"""The main screen's keys: one table of bindings with stable ids, the footer's order, and the
ids a user's ``[keymap]`` may rebind.

The ids (``main.run_phase`` …) are what a keymap names, so they never change with a key; the
help screen and the footer are built from this table, so neither drifts from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.binding import Binding, BindingType
from textual.dom import DOMNode


def _binding(
    key: str, action: str, description: str, tooltip: str, *, name: str = "", **extra: Any
) -> Binding:
    # Every id is ``main.<action>`` unless named: the id a keymap rebinds.
    return Binding(key, action, description, id=f"main.{name or action}", tooltip=tooltip, **extra)


PHASE_GROUP = Binding.Group("Phase")
VIEW_GROUP = Binding.Group("View")
INCLUDE_GROUP = Binding.Group("Include")

MAIN_BINDINGS: list[Binding] = [
    _binding("r", "run_phase", "Run", "Run the selected phase (asks first)"),
    _binding("n", "run_suggested", "Next", "Run the suggested next phase (asks first)"),
    _binding("c", "cancel_run", "Cancel", "Cancel the running phase"),
    _binding(
        "slash",
        "filter",
        "Filter",
        "Filter the story tree (Enter: back to the tree; Escape clears, the cursor stays)",
        key_display="/",
    ),
    _binding(
        "p",
        "toggle_project_context",
        "Project",
        "Include or leave out the project context",
        group=INCLUDE_GROUP,
    ),
    _binding(
        "d",
        "toggle_discovery",
        "Discovery",
        "Include or leave out discovery files",
        group=INCLUDE_GROUP,
    ),
    _binding(
        "t",
        "toggle_tech_spec",
        "Tech spec",
        "Include or leave out tech-spec files",
        group=INCLUDE_GROUP,
    ),
    _binding(
        "R",
        "toggle_rules_layer",
        "Rules",
        "Leave Layer-0B, the workspace rules, out of the prompt, or put it back "
        "(remembered for the story)",
        key_display="R",
        group=INCLUDE_GROUP,
    ),
    _binding(
        "space",
        "toggle_file",
        "Leave out",
        "Leave out the file under the cursor, or take it in; on the Layer-0B row, the "
        "workspace rules (remembered for the story)",
        key_display="space",
        show=False,
    ),
    _binding(
        "f",
        "fit",
        "Fit",
        "The fewest files to leave out so the prompt fits its budget or the error line",
        show=False,
    ),
    _binding(
        "C",
        "capture",
        "Capture",
        "Run the real client once offline (a loopback server, a canned answer) and show the "
        "whole request it sends for this story and phase, part by part",
        key_display="C",
    ),
    _binding(
        "i",
        "attach_image",
        "Image",
        "Attach an image to the next run's message (again: detach it)",
    ),
    _binding(
        "left_square_bracket",
        "previous_phase",
        "Prev phase",
        "Select the previous phase",
        key_display="[",
        group=PHASE_GROUP,
    ),
    _binding(
        "right_square_bracket",
        "next_phase",
        "Next phase",
        "Select the next phase",
        key_display="]",
        group=PHASE_GROUP,
    ),
    _binding("m", "toggle_mode", "Mode", "Switch the mode between create and optimize"),
    _binding(
        "L",
        "toggle_delivery",
        "Delivery",
        "Layered or cache-aware delivery: the per-phase layers in the system prompt, or at the "
        "head of the user turn so every phase shares the system prompt",
        key_display="L",
    ),
    _binding(
        "v",
        "toggle_variant",
        "Party",
        "Standard or party variant of the selected phase (kickoff, review, failure, retro)",
    ),
    _binding("a", "add_file", "Add file", "Add a file of the project to the injection"),
    _binding("x", "remove_file", "Remove file", "Remove the added file under the cursor (or last)"),
    _binding(
        "b",
        "composition",
        "Composition",
        "Show the composition of the system prompt (again: tokens ↔ bytes)",
    ),
    _binding(
        "D",
        "prompt_diff",
        "Diff",
        "What changed since the last run of this phase: the prompt now against the one it sent",
        key_display="D",
    ),
    _binding(
        "y",
        "copy",
        "Copy",
        "Copy a file path, a layer's text, the user message or the system prompt",
        name="copy_system",
    ),
    _binding(
        "o",
        "open_in_editor",
        "Open",
        "Open the selected file, layer source or story file in $EDITOR",
    ),
    _binding("e", "export", "Export", "Export the composed prompt files to a folder"),
    _binding("h", "history", "History", "Show the runs of this workspace"),
    _binding(
        "E",
        "epic_plan",
        "Epic plan",
        "Forecast the selected story's epic: every story × phase, bytes, tokens, flags, cost",
        key_display="E",
    ),
    _binding(
        "1",
        "view('stories')",
        "Stories",
        "Show only the stories (again: all regions)",
        name="view_stories",
        group=VIEW_GROUP,
    ),
    _binding(
        "2",
        "view('preview')",
        "Preview",
        "Show only the preview (again: all regions)",
        name="view_preview",
        group=VIEW_GROUP,
    ),
    _binding(
        "3",
        "view('phases')",
        "Phases",
        "Show only the phases (again: all regions)",
        name="view_phases",
        group=VIEW_GROUP,
    ),
    _binding("w", "notices", "Notices", "Read every notice of this session again"),
    _binding("question_mark", "help", "Help", "List every key", key_display="?"),
    _binding("q", "quit", "Quit", "Quit (asks first while a phase runs)"),
]
"""The main screen's keys, in the order the help screen lists them."""

FOOTER_PRIORITY = (
    "main.run_phase",
    "main.run_suggested",
    "main.cancel_run",
    "main.help",
    "main.quit",
    "main.view_stories",
    "main.view_preview",
    "main.view_phases",
    "main.previous_phase",
    "main.next_phase",
    "main.history",
    "main.composition",
    "main.prompt_diff",
    "main.capture",
    "main.notices",
    "main.filter",
    "main.toggle_project_context",
    "main.toggle_discovery",
    "main.toggle_tech_spec",
    "main.toggle_mode",
    "main.copy_system",
    "main.open_in_editor",
    "main.export",
    "main.add_file",
    "main.remove_file",
    "app.command_palette",
)
"""The footer's order: the keys that act first, then the ones that find things, then the rest.
At 80 columns the first nine fit; wider terminals show more."""


def ids_of(bindings: Iterable[BindingType]) -> set[str]:
    """The ids of ``bindings`` (those that have one)."""
    return {binding.id for binding in bindings if isinstance(binding, Binding) and binding.id}


def binding_ids(*owners: type[DOMNode]) -> set[str]:
    """The binding ids ``owners`` declare in their ``BINDINGS``."""
    ids: set[str] = set()
    for owner in owners:
        ids |= ids_of(owner.BINDINGS)
    return ids
