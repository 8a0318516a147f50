"""Seed 000 (Story A-1): build_prompt_system_append / build_injection, AC1–AC10, both
reviews' fixes, and promptdeck's additions (key boundaries, containment, envelope breakers,
stat-first size checks, meters that add up)."""

from __future__ import annotations

import inspect
import os
import time
from pathlib import Path
from typing import Any

import pytest
from promptdeck.core.errors import InjectionTooLarge
from promptdeck.core.injection.builder import (
    build_injection,
    build_prompt_system_append,
    build_story_injection,
)
from promptdeck.core.injection.model import RULE, Selection, render_envelope
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.stories.model import Story
from promptdeck.core.tokens.counter import TokenCounter

ART = "_bmad-output/implementation-artifacts"
CTX = "_bmad-output/planning-artifacts/sprint-project-context.md"


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root, CTX, "# Project context\nPython 3.11, pytest.\n")
    write(root, f"{ART}/sprint-A-1-story.md", "# Story A-1: Build it\n")
    write(root, f"{ART}/sprint-a-1-discovery.md", "discovery notes for a-1\n")
    write(root, f"{ART}/tech-spec-A-1-append.md", "tech spec for A-1\n")
    write(root, f"{ART}/sprint-A-10-story.md", "# Story A-10: Not this one\n")
    write(root, f"{ART}/sprint-A-2-story.md", "# Story A-2: Another\n")
    (root / ART / "A-1-folder").mkdir()
    return root.resolve()


def included_paths(injection) -> list[str]:
    return [f.path for f in injection.included()]


def test_ac1_signature_matches_the_seed() -> None:
    params = inspect.signature(build_prompt_system_append).parameters
    assert list(params)[:7] == [
        "project_root",
        "command_name",
        "story_keys",
        "include_project_context",
        "include_discovery",
        "include_tech_spec",
        "additional_files",
    ]
    assert params["include_project_context"].default is True
    assert params["include_discovery"].default is False
    assert params["include_tech_spec"].default is False
    assert params["additional_files"].default is None
    assert params["emit"].kind is inspect.Parameter.KEYWORD_ONLY


def test_ac2_matches_case_insensitively_files_only(project: Path) -> None:
    inj = build_injection(project, "dev", ["a-1"], include_project_context=False)
    assert included_paths(inj) == [f"{ART}/sprint-A-1-story.md"]
    assert all("A-1-folder" not in f.path for f in inj.files)


def test_key_boundaries_never_match_a_longer_key(project: Path) -> None:
    write(project, f"{ART}/11-1-other.md", "x")
    write(project, f"{ART}/1-10-other.md", "x")
    write(project, f"{ART}/1-1-mine.md", "x")
    a1 = build_injection(project, "dev", ["A-1"], include_project_context=False)
    assert not any("A-10" in f.path for f in a1.files)
    one = build_injection(project, "dev", ["1.1"], include_project_context=False)
    assert [f.path for f in one.files if f.category == "story"] == [f"{ART}/1-1-mine.md"]


def test_ac3_dedupes_across_keys_and_additional_files_first_wins(project: Path) -> None:
    inj = build_injection(
        project,
        "dev",
        ["A-1", "a-1"],
        additional_files=[f"{ART}/sprint-A-1-story.md", f"./{ART}/sprint-A-2-story.md"],
    )
    paths = included_paths(inj)
    assert paths.count(f"{ART}/sprint-A-1-story.md") == 1
    dup = [f for f in inj.files if f.status == "duplicate"]
    assert [f.category for f in dup] == ["additional"]
    assert "already included" in dup[0].reason
    assert paths[-1] == f"{ART}/sprint-A-2-story.md"
    assert inj.text.count('path="_bmad-output/implementation-artifacts/sprint-A-1-story.md"') == 1


def test_ac4_reads_fresh_on_every_call(project: Path) -> None:
    first = build_prompt_system_append(project, "dev", ["A-1"])
    write(project, f"{ART}/sprint-A-1-story.md", "# Story A-1: Changed on disk\n")
    second = build_prompt_system_append(project, "dev", ["A-1"])
    assert "Build it" in first and "Build it" not in second
    assert "Changed on disk" in second


def test_ac5_exact_xml_structure(project: Path) -> None:
    text = build_prompt_system_append(project, "dev", ["A-1"], include_discovery=True)
    assert text == (
        f'<file_injections rule="{RULE}">\n'
        f'  <file path="{CTX}">\n'
        "# Project context\nPython 3.11, pytest.\n\n"
        "  </file>\n"
        f'  <file path="{ART}/sprint-A-1-story.md">\n'
        "# Story A-1: Build it\n\n"
        "  </file>\n"
        f'  <file path="{ART}/sprint-a-1-discovery.md">\n'
        "discovery notes for a-1\n\n"
        "  </file>\n"
        "</file_injections>"
    )
    assert RULE == "DO NOT read these files - content already provided"


def test_ac6_flags_switch_categories_and_report_exclusions(project: Path) -> None:
    off = build_injection(project, "dev", ["A-1"], include_project_context=False)
    by_path = {f.path: f for f in off.files}
    assert by_path[CTX].status == "excluded"
    assert by_path[f"{ART}/sprint-a-1-discovery.md"].status == "excluded"
    assert by_path[f"{ART}/tech-spec-A-1-append.md"].status == "excluded"
    assert "discovery files are off" in by_path[f"{ART}/sprint-a-1-discovery.md"].reason
    on = build_injection(
        project,
        "dev",
        ["A-1"],
        include_discovery=True,
        include_tech_spec=True,
        additional_files=[f"{ART}/sprint-A-2-story.md"],
    )
    assert {f.category for f in on.included()} == {
        "project-context",
        "story",
        "discovery",
        "tech-spec",
        "additional",
    }


def test_ac7_warning_event_over_the_warning_line(project: Path) -> None:
    write(project, f"{ART}/sprint-A-1-story.md", "w" * (101 * 1024))
    events: list[tuple[str, dict]] = []
    text = build_prompt_system_append(
        project, "dev", ["A-1"], emit=lambda k, p: events.append((k, p))
    )
    warnings = [p for k, p in events if k == "injection:warning"]
    assert len(warnings) == 1
    assert warnings[0]["size_bytes"] == len(text.encode())
    assert warnings[0]["threshold_bytes"] == 100 * 1024
    assert warnings[0]["command"] == "dev"


def test_ac7_error_over_the_error_line_is_a_valueerror_naming_the_largest(project: Path) -> None:
    write(project, f"{ART}/sprint-A-1-story.md", "e" * (100 * 1024))
    write(project, f"{ART}/sprint-A-1-extra.md", "f" * (60 * 1024))
    with pytest.raises(ValueError) as caught:
        build_prompt_system_append(project, "dev-story", ["A-1"])
    err = caught.value
    assert isinstance(err, InjectionTooLarge)
    assert err.limit_bytes == 150 * 1024
    assert err.size_bytes > 150 * 1024
    assert "dev-story" in str(err)
    assert err.largest[0] == (f"{ART}/sprint-A-1-story.md", 100 * 1024)
    assert "sprint-A-1-story.md" in str(err)


def test_oversized_files_are_rejected_from_stat_without_reading(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, f"{ART}/sprint-A-1-story.md", "e" * (200 * 1024))
    # The guarded reader opens with os.open and reads with os.read: spy on those, so a reader
    # that opened the file any way at all (even to read nothing) is caught.
    opened: dict[int, str] = {}
    read_from: list[str] = []
    real_open, real_read = os.open, os.read

    def spy_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        descriptor = real_open(path, flags, *args, **kwargs)
        opened[descriptor] = os.fspath(path)
        return descriptor

    def spy_read(descriptor: int, size: int) -> bytes:
        read_from.append(opened.get(descriptor, f"fd {descriptor}"))
        return real_read(descriptor, size)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "read", spy_read)
    with pytest.raises(InjectionTooLarge):
        build_prompt_system_append(project, "dev", ["A-1"])
    inj = build_injection(project, "dev", ["A-1"])
    big = next(f for f in inj.files if f.path.endswith("sprint-A-1-story.md"))
    assert big.status == "too-large" and big.tokens is None
    assert inj.level == "error" and inj.size_bytes >= 200 * 1024
    # The spies see the reader at work (the other files were read) ...
    assert any(path.endswith(".md") for path in read_from)
    # ... and never on the oversized file: not opened, so not a byte of it read.
    assert [path for path in opened.values() if path.endswith("sprint-A-1-story.md")] == []
    assert [path for path in read_from if path.endswith("sprint-A-1-story.md")] == []


def test_thresholds_come_from_config(project: Path) -> None:
    write(project, ".promptdeck/config.toml", "[injection]\nwarn_bytes = 10\nerror_bytes = 50\n")
    inj = build_injection(project, "dev", ["A-1"])
    assert inj.level == "error" and inj.error_bytes == 50
    with pytest.raises(InjectionTooLarge):
        build_prompt_system_append(project, "dev", ["A-1"])


def test_ac8_returns_a_string(project: Path) -> None:
    text = build_prompt_system_append(project, "dev", ["A-1"])
    assert isinstance(text, str) and text.startswith("<file_injections")


def test_ac9_group_order_and_case_insensitive_sort(project: Path) -> None:
    write(project, f"{ART}/Sprint-a-1-Zeta.md", "z")
    write(project, f"{ART}/sprint-a-1-alpha.md", "a")
    write(project, "notes/extra.md", "extra")
    inj = build_injection(
        project,
        "dev",
        ["A-1"],
        include_discovery=True,
        include_tech_spec=True,
        additional_files=["notes/extra.md"],
    )
    assert [(f.category, f.path.split("/")[-1]) for f in inj.included()] == [
        ("project-context", "sprint-project-context.md"),
        ("story", "sprint-a-1-alpha.md"),
        ("story", "sprint-A-1-story.md"),
        ("story", "Sprint-a-1-Zeta.md"),
        ("discovery", "sprint-a-1-discovery.md"),
        ("tech-spec", "tech-spec-A-1-append.md"),
        ("additional", "extra.md"),
    ]


def test_ac10_missing_files_are_skipped_silently_but_listed(project: Path) -> None:
    events: list[tuple[str, dict]] = []
    text = build_prompt_system_append(
        project,
        "dev",
        ["A-1"],
        additional_files=["nope.md"],
        emit=lambda k, p: events.append((k, p)),
    )
    assert "nope.md" not in text
    inj = build_injection(project, "dev", ["A-1"], additional_files=["nope.md"])
    missing = next(f for f in inj.files if f.path == "nope.md")
    assert missing.status == "missing" and missing.reason == "no such file"
    assert (
        "injection:skipped",
        {"command": "dev", "path": "nope.md", "status": "missing", "reason": "no such file"},
    ) in events


def test_missing_project_context_is_listed_not_fatal(tmp_path: Path) -> None:
    write(tmp_path, f"{ART}/sprint-A-1-story.md", "s")
    inj = build_injection(tmp_path, "dev", ["A-1"])
    ctx = inj.files[0]
    assert ctx.category == "project-context" and ctx.status == "missing"
    assert "looked for" in ctx.reason
    fallback = build_injection(tmp_path, "dev", ["A-1"])
    assert fallback.level == "ok"


def test_project_context_falls_back_to_bmad_location(tmp_path: Path) -> None:
    write(tmp_path, "_bmad-output/project-context.md", "ctx")
    inj = build_injection(tmp_path, "dev", [])
    assert included_paths(inj) == ["_bmad-output/project-context.md"]


def test_review_fix_unreadable_binary_and_non_utf8_files_are_skipped(project: Path) -> None:
    write(project, f"{ART}/sprint-A-1-binary.md", b"abc\x00def")
    write(project, f"{ART}/sprint-A-1-latin1.md", "caf\xe9".encode("latin-1"))
    locked = write(project, f"{ART}/sprint-A-1-locked.md", "secret")
    locked.chmod(0)
    try:
        inj = build_injection(project, "dev", ["A-1"])
    finally:
        locked.chmod(0o644)
    status = {f.path.split("/")[-1]: (f.status, f.reason) for f in inj.files}
    assert status["sprint-A-1-binary.md"] == ("not-utf8", "binary (NUL byte at offset 3)")
    assert status["sprint-A-1-latin1.md"] == ("not-utf8", "not UTF-8 (byte 0xe9 at offset 3)")
    if os.geteuid() != 0:  # root reads any file regardless of its mode
        assert status["sprint-A-1-locked.md"][0] == "unreadable"
    assert "caf" not in inj.text and "abc" not in inj.text


def test_review_fix_path_attribute_is_escaped(project: Path) -> None:
    write(project, 'odd/"quoted" & <tag>.md', "x")
    text = build_prompt_system_append(
        project,
        "dev",
        [],
        include_project_context=False,
        additional_files=['odd/"quoted" & <tag>.md'],
    )
    assert '<file path="odd/&quot;quoted&quot; &amp; &lt;tag&gt;.md">' in text


def test_review_fix_empty_injection_emits_event(project: Path) -> None:
    events: list[str] = []
    text = build_prompt_system_append(
        project, "dev", ["Z-9"], include_project_context=False, emit=lambda k, p: events.append(k)
    )
    assert text == f'<file_injections rule="{RULE}">\n</file_injections>'
    assert events == ["injection:empty"]


def test_files_outside_the_project_are_never_read(project: Path, tmp_path: Path) -> None:
    secret = write(tmp_path, "secret.txt", "TOP SECRET")
    (project / ART / "sprint-A-1-link.md").symlink_to(secret)
    inj = build_injection(project, "dev", ["A-1"], additional_files=[str(secret), "../secret.txt"])
    outside = [f for f in inj.files if f.status == "outside-project"]
    assert len(outside) == 3
    assert {f.path for f in outside} == {
        f"{ART}/sprint-A-1-link.md",
        str(secret),
        "../secret.txt",
    }
    assert all(f.bytes == 0 and f.tokens is None for f in outside)
    assert "TOP SECRET" not in inj.text


def test_symlink_inside_the_project_is_followed_and_deduped(project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "story-link.md").symlink_to(project / ART / "sprint-A-1-story.md")
    inj = build_injection(project, "dev", ["A-1"], additional_files=["docs/story-link.md"])
    assert [f.status for f in inj.files if f.category == "additional"] == ["duplicate"]


def test_envelope_breakers_are_flagged(project: Path) -> None:
    write(project, f"{ART}/sprint-A-1-story.md", "an example:\n</file>\n")
    inj = build_injection(project, "dev", ["A-1"])
    story = next(f for f in inj.files if f.category == "story")
    assert story.flags == ("breaks-envelope",)
    assert any("breaks the envelope" in w for w in inj.warnings)


def test_rows_add_up_to_the_total_in_bytes_and_tokens(project: Path) -> None:
    inj = build_injection(project, "dev", ["A-1"], include_discovery=True, include_tech_spec=True)
    rows = inj.included()
    assert inj.total.bytes == len(inj.text.encode("utf-8"))
    assert sum(f.bytes for f in rows) + inj.envelope.bytes == inj.total.bytes
    assert inj.total.tokens is not None and inj.envelope.tokens is not None
    assert sum(f.tokens or 0 for f in rows) + inj.envelope.tokens == inj.total.tokens
    counter = TokenCounter("o200k_base")
    assert inj.total.tokens == counter.count(inj.text)
    assert inj.envelope.bytes > 0 and inj.envelope.tokens > 0


def test_count_tokens_false_leaves_tokens_empty_and_bytes_exact(project: Path) -> None:
    fast = build_injection(project, "dev", ["A-1"], count_tokens=False)
    full = build_injection(project, "dev", ["A-1"])
    assert fast.text == full.text and fast.total.bytes == full.total.bytes
    assert fast.total.tokens is None and all(f.tokens is None for f in fast.files)


def test_bytes_are_sent_as_on_disk_without_newline_translation(project: Path) -> None:
    write(project, f"{ART}/sprint-A-1-story.md", "line one\r\nline two\r\n")
    text = build_prompt_system_append(project, "dev", ["A-1"], include_project_context=False)
    assert "line one\r\nline two\r\n" in text


def test_story_injection_uses_selection_and_story_files(project: Path) -> None:
    write(project, "openspec/changes/add-x/proposal.md", "why")
    write(project, "openspec/changes/add-x/tasks.md", "## 1. First\n- [ ] 1.1 do\n")
    workspace = Workspace(project, Config())
    change_story = Story(
        id="add-x:1",
        key="add-x-1",
        title="First",
        status="ready-for-dev",
        source="openspec",
        group="add-x",
        path="openspec/changes/add-x/tasks.md",
        files=("openspec/changes/add-x/proposal.md", "openspec/changes/add-x/tasks.md"),
    )
    inj = build_story_injection(
        workspace, change_story, Selection(project_context=False), command_name="dev"
    )
    assert included_paths(inj) == [
        "openspec/changes/add-x/proposal.md",
        "openspec/changes/add-x/tasks.md",
    ]
    bmad = Story(
        id="A-1",
        key="a-1",
        title="t",
        status="done",
        source="bmad",
        group="A",
        path=f"{ART}/sprint-A-1-story.md",
        files=(f"{ART}/sprint-A-1-story.md",),
    )
    inj = build_story_injection(workspace, bmad, Selection(discovery=True), command_name="dev")
    assert included_paths(inj) == [
        CTX,
        f"{ART}/sprint-A-1-story.md",
        f"{ART}/sprint-a-1-discovery.md",
    ]
    assert not any(f.status == "duplicate" for f in inj.files)


def test_render_envelope_is_the_seed_shape() -> None:
    assert render_envelope([("a.md", "x")]) == (
        f'<file_injections rule="{RULE}">\n  <file path="a.md">\nx\n  </file>\n</file_injections>'
    )


def test_estimated_counts_are_marked_when_the_encoder_fails(project: Path) -> None:
    def broken(_name: str) -> object:
        raise RuntimeError("no ranks here")

    counter = TokenCounter("o200k_base", builder=broken)
    inj = build_injection(project, "dev", ["A-1"], counter=counter)
    assert inj.total.estimated
    assert inj.total.tokens == -(-inj.total.bytes // 4)
    assert any("estimates" in w and "no ranks here" in w for w in inj.warnings)


def test_a_file_name_that_is_not_utf8_is_listed_never_sent(project: Path) -> None:
    bad = os.fsencode(project / ART) + b"/sprint-a-1-discovery-\xff.md"
    Path(os.fsdecode(bad)).write_text("BADLY-NAMED-CONTENT")
    inj = build_injection(project, "dev", ["A-1"], include_discovery=True)
    row = next(f for f in inj.files if f.status == "not-utf8")
    assert row.path.endswith("sprint-a-1-discovery-\ufffd.md")
    assert row.reason == "file name is not valid UTF-8; not read"
    inj.text.encode("utf-8")  # the envelope stays valid text
    assert "BADLY-NAMED-CONTENT" not in inj.text


def test_cached_listing_never_hides_an_added_or_removed_file(project: Path) -> None:
    folder = project / ART
    an_hour_ago = time.time() - 3600
    os.utime(folder, (an_hour_ago, an_hour_ago))  # old enough for the listing to be cached
    first = build_injection(project, "dev", ["A-1"], include_project_context=False)
    assert included_paths(first) == [f"{ART}/sprint-A-1-story.md"]
    write(project, f"{ART}/sprint-A-1-more.md", "added later")
    second = build_injection(project, "dev", ["A-1"], include_project_context=False)
    assert f"{ART}/sprint-A-1-more.md" in included_paths(second)
    (folder / "sprint-A-1-story.md").unlink()
    os.utime(folder, (an_hour_ago + 1, an_hour_ago + 1))
    third = build_injection(project, "dev", ["A-1"], include_project_context=False)
    assert included_paths(third) == [f"{ART}/sprint-A-1-more.md"]


def test_one_refusal_names_every_file_of_an_injection_over_its_error_line(project: Path) -> None:
    """Every face refuses an injection over its error line with the same error, built once
    (``Injection.too_large``): all its files ranked largest first, the top three named."""
    for name, kib in (("a", 30), ("b", 60), ("c", 40), ("d", 50)):
        write(project, f"{ART}/sprint-A-1-{name}.md", name * (kib * 1024))
    injection = build_injection(project, "dev", ["A-1"], include_project_context=False)
    assert injection.level == "error"
    err = injection.too_large()
    assert isinstance(err, InjectionTooLarge)
    ranked = [path for path, _ in err.largest]
    assert [p for p in ranked if p.endswith(("-a.md", "-b.md", "-c.md", "-d.md"))] == [
        f"{ART}/sprint-A-1-{name}.md" for name in ("b", "d", "c", "a")
    ]
    assert len(ranked) == len([f for f in injection.files if f.status in ("included", "too-large")])
    assert (err.size_bytes, err.limit_bytes) == (injection.size_bytes, injection.error_bytes)
    assert "sprint-A-1-a.md" not in str(err) and "sprint-A-1-b.md" in str(err)
    with pytest.raises(InjectionTooLarge) as caught:
        build_prompt_system_append(project, "dev", ["A-1"], include_project_context=False)
    assert caught.value.largest == err.largest
