"""The names the seed documents call, importable from the rooms the seeds name.

The reorganisation into rooms moved ``build_prompt_system_append`` (seed 000) and
``compose_messages`` (seed 001) behind their rooms; code written against the seeds imports them
from ``promptdeck.core.injection`` and ``promptdeck.core.layers``. Each is a thin re-export of
the one definition, never a copy.
"""

from __future__ import annotations

import importlib

import pytest

SEED_NAMES = (
    (
        "promptdeck.core.injection",
        "build_prompt_system_append",
        "promptdeck.core.injection.builder",
    ),
    ("promptdeck.core.layers", "compose_messages", "promptdeck.core.layers.composer"),
    ("promptdeck.core.layers", "compose_system_instruction", "promptdeck.core.layers.composer"),
    ("promptdeck.core.layers", "ComposeInput", "promptdeck.core.layers.input"),
    ("promptdeck.core.layers", "PromptLayer", "promptdeck.core.layers.model"),
    ("promptdeck.core", "InjectionTooLarge", "promptdeck.core.errors"),
)


@pytest.mark.parametrize(("room", "name", "home"), SEED_NAMES)
def test_a_seed_name_imports_from_the_room_the_seed_names(room: str, name: str, home: str) -> None:
    exported = getattr(importlib.import_module(room), name)
    assert exported is getattr(importlib.import_module(home), name)
    assert name in importlib.import_module(room).__all__


def test_the_seed_calls_work_through_the_rooms(tmp_path) -> None:
    from promptdeck.core.injection import build_prompt_system_append

    (tmp_path / "_bmad-output" / "implementation-artifacts").mkdir(parents=True)
    story = tmp_path / "_bmad-output" / "implementation-artifacts" / "1-1-first.md"
    story.write_text("# Story 1.1: First\n\nStatus: ready-for-dev\n", encoding="utf-8")
    text = build_prompt_system_append(tmp_path, "dev-story", ["1-1"])
    assert "<file_injections" in text and "1-1-first.md" in text
