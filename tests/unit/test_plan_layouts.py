"""The layouts BMAD and OpenSpec write today, read from the fixtures in tests/fixtures/layouts/.

Each fixture was written for these tests from the formats' descriptions: v6.3 build specs with
``context:`` lists, a bmad-spec folder, a v7 initiative tree with a migrated ``archive-v6/``,
and OpenSpec 1.10 changes (an ``.openspec.yaml``-only change, nested specs, a custom schema).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from builders import make_workspace
from promptdeck.core.injection.builder import build_story_injection
from promptdeck.core.injection.model import Injection, Selection
from promptdeck.core.plans.catalog import load_catalog, load_story_catalog
from promptdeck.core.plans.writeback import write_back
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.stories.model import Story, StoryCatalog

LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
ARTIFACTS = "_bmad-output/implementation-artifacts"
CART = "_bmad-output/initiative-checkout/epic-cart"
PAYMENT = "_bmad-output/initiative-checkout/epic-payment"


def fixture(tmp_path: Path, name: str) -> Workspace:
    shutil.copytree(LAYOUTS / name, tmp_path / name)
    return open_workspace(tmp_path / name)


def by_id(catalog: StoryCatalog) -> dict[str, Story]:
    ids = [story.id for story in catalog.stories]
    assert len(ids) == len(set(ids)), f"a story listed twice: {ids}"
    return {story.id: story for story in catalog.stories}


def rows(injection: Injection) -> dict[str, tuple[str, str, str]]:
    """path → (category, status, reason) of every row."""
    return {f.path: (f.category, f.status, f.reason) for f in injection.files}


def inject(workspace: Workspace, story: Story, selection: Selection | None = None) -> Injection:
    return build_story_injection(
        workspace, story, selection or Selection(), command_name="dev", count_tokens=False
    )


# ------------------------------------------------------------------ v6.3 build specs


def test_build_specs_are_stories_or_attach_to_the_story_of_their_key(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v63-specs")
    catalog = load_catalog(ws)
    stories = by_id(catalog)
    assert list(stories) == ["1-1", "1-2", "1-3", "1-4", "2-1", "3-1"]
    assert stories["1-1"].layout == "classic"
    # 1-2 and 1-3 are in sprint-status.yaml with no story file: the spec is their file.
    spec = f"{ARTIFACTS}/spec-1-2-password-reset.md"
    assert (stories["1-2"].layout, stories["1-2"].path) == ("spec", spec)
    assert stories["1-2"].title == "Password reset by email"
    assert [t.done for t in stories["1-2"].tasks] == [True, False]
    # No sprint-status entry: the spec alone is the story, its status its own.
    audit = stories["3-1"]
    assert (audit.layout, audit.status, audit.group) == ("spec", "backlog", "3")
    assert audit.status_source == f"{ARTIFACTS}/spec-3-1-audit-log.md:4"


def test_a_spec_that_disagrees_with_sprint_status_is_shown_drifting(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v63-specs")
    story = by_id(load_catalog(ws))["1-3"]
    assert story.status == "backlog"
    assert story.status_drift == (
        f"{ARTIFACTS}/spec-1-3-session-timeout.md:4 says 'ready-for-dev'",
    )


def test_context_list_files_are_injected_each_with_its_row_and_reason(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v63-specs")
    story = by_id(load_catalog(ws))["1-2"]
    assert story.context_files[:2] == ("docs/architecture.md", "docs/api/errors.md")
    injection = inject(ws, story)
    shown = rows(injection)
    assert shown["docs/architecture.md"] == ("story", "included", "context: list")
    assert shown["docs/api/errors.md"] == ("story", "included", "context: list")
    meters = {f.path: f.bytes for f in injection.files}
    assert meters["docs/architecture.md"] == (ws.root / "docs/architecture.md").stat().st_size
    assert '<file path="docs/architecture.md">' in injection.text


def test_a_context_file_can_be_left_out_like_any_other(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v63-specs")
    story = by_id(load_catalog(ws))["1-2"]
    full = inject(ws, story)
    lean = inject(ws, story, Selection(left_out=("docs/architecture.md",)))
    category, status, reason = rows(lean)["docs/architecture.md"]
    assert (category, status) == ("story", "excluded")
    assert reason.startswith("left out")
    assert "One web app, one API" in full.text
    assert "One web app, one API" not in lean.text
    assert lean.total.bytes < full.total.bytes


def test_context_paths_outside_or_missing_are_rows_never_read(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v63-specs")
    (tmp_path / "outside-notes.md").write_text("SECRET-OUTSIDE\n")
    story = by_id(load_catalog(ws))["1-3"]
    injection = inject(ws, story)
    shown = rows(injection)
    assert shown["../outside-notes.md"][1] == "outside-project"
    assert shown["docs/missing.md"][1] == "missing"
    assert shown["docs/security.md"][1] == "included"
    assert "SECRET-OUTSIDE" not in injection.text
    assert sum("../outside-notes.md" in w for w in injection.warnings) == 1


def test_the_epic_context_is_in_its_stories_and_marked_stale(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v63-specs")
    context = ws.root / ARTIFACTS / "epic-1-context.md"
    planning = ws.root / "_bmad-output/planning-artifacts/epics.md"
    os.utime(planning, (1_000_000, 1_000_000))
    os.utime(context, (2_000_000, 2_000_000))
    stories = by_id(load_catalog(ws))
    rel = f"{ARTIFACTS}/epic-1-context.md"
    assert rel in stories["1-1"].context_files and rel in stories["1-3"].context_files
    assert rel not in stories["2-1"].context_files
    fresh = next(f for f in inject(ws, stories["1-1"]).files if f.path == rel)
    assert (fresh.status, fresh.reason, fresh.flags) == ("included", "epic context of epic 1", ())
    # A planning file newer than the compiled context: BMAD would recompile it first.
    os.utime(planning, (3_000_000, 3_000_000))
    stale = next(f for f in inject(ws, stories["1-1"]).files if f.path == rel)
    assert stale.flags == ("stale",)
    assert "_bmad-output/planning-artifacts/epics.md is newer" in stale.reason


def test_quick_specs_are_unattached_unless_the_config_attaches_them(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v63-specs")
    catalog = load_catalog(ws)
    assert catalog.unattached == (f"{ARTIFACTS}/tech-spec-dark-mode.md",)
    attached = by_id(catalog)["2-1"]
    assert f"{ARTIFACTS}/spec-onboarding-copy.md" in attached.files
    assert attached.context_files == ("docs/voice.md",)
    assert rows(inject(ws, attached))["docs/voice.md"][1] == "included"
    # Without the setting, the same spec is tied to no story.
    (ws.root / ".promptdeck/config.toml").unlink()
    plain = load_catalog(open_workspace(ws.root))
    assert f"{ARTIFACTS}/spec-onboarding-copy.md" in plain.unattached
    assert f"{ARTIFACTS}/spec-onboarding-copy.md" not in by_id(plain)["2-1"].files


def test_the_one_story_lookup_reads_the_spec_as_the_full_catalog_does(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v63-specs")
    full = by_id(load_catalog(ws))
    for story_id in ("1-2", "1-3", "1-4", "3-1"):
        assert load_story_catalog(ws, story_id).find(story_id) == full[story_id]


REMEMBER = f"{ARTIFACTS}/spec-1-4-remember-me.md"
COOKIES = f"{ARTIFACTS}/spec-1-4-cookie-flags.md"
ROTATION = f"{ARTIFACTS}/spec-1-4-token-rotation.md"


def test_of_three_specs_for_one_key_the_one_named_for_the_entry_is_the_story_s(
    tmp_path: Path,
) -> None:
    ws = fixture(tmp_path, "v63-specs")
    catalog = load_catalog(ws)
    story = by_id(catalog)["1-4"]
    # spec-1-4-cookie-flags.md comes first by name; the entry is 1-4-remember-me.
    assert (story.path, story.files, story.title) == (REMEMBER, (REMEMBER,), "Remember me")
    assert story.context_files == ("docs/security.md", f"{ARTIFACTS}/epic-1-context.md")
    # The others in the order they ranked: a story_key naming the story, then a name alone.
    assert [c.path for c in story.second_claims] == [ROTATION, COOKIES]
    told = {e.path: e.reason for e in catalog.unreadable if e.key == "1-4"}
    assert set(told) == {COOKIES, ROTATION}
    for claim in story.second_claims:
        assert told[claim.path] == claim.reason
        assert f"{REMEMBER} is its spec" in claim.reason
        assert "named for the sprint-status entry 1-4-remember-me" in claim.reason


def test_inspect_and_doctor_agree_on_the_specs_of_a_story_claimed_three_times(
    tmp_path: Path,
) -> None:
    ws = fixture(tmp_path, "v63-specs")
    catalog = load_catalog(ws)
    injection = inject(ws, by_id(catalog)["1-4"])
    shown = rows(injection)
    assert shown[REMEMBER][1] == "included"
    told = {e.path: e.reason for e in catalog.unreadable}
    for loser in (COOKIES, ROTATION):
        # Listed as a row, with the reason doctor gives; its text never sent.
        assert shown[loser] == ("story", "excluded", told[loser])
        assert next(f.why for f in injection.files if f.path == loser) == "second claim"
    assert "The session cookie is readable" not in injection.text
    assert "A remembered token never changes" not in injection.text
    # A losing spec's context list is not the story's either.
    assert "docs/architecture.md" not in shown
    assert shown["docs/security.md"] == ("story", "included", "context: list")


def test_without_a_spec_named_for_the_entry_story_key_decides_then_the_name(
    tmp_path: Path,
) -> None:
    ws = fixture(tmp_path, "v63-specs")
    (ws.root / REMEMBER).unlink()
    story = by_id(load_catalog(ws))["1-4"]
    # A story_key that names the story beats a name alone, though it sorts last.
    assert story.path == ROTATION
    assert "its story_key 1-4-token-rotation names the story" in story.second_claims[0].reason
    rotation = (ws.root / ROTATION).read_text()
    (ws.root / ROTATION).write_text(rotation.replace("1-4-token-rotation", "1-4-remember-me"))
    (ws.root / COOKIES).write_text(
        (ws.root / COOKIES).read_text().replace("status:", "story_key: '1-4'\nstatus:")
    )
    story = by_id(load_catalog(open_workspace(ws.root)))["1-4"]
    assert story.path == ROTATION
    assert "its story_key is the sprint-status entry 1-4-remember-me" in (
        story.second_claims[0].reason
    )
    # Two specs as good as each other: the first by name, and the note says so.
    (ws.root / ROTATION).unlink()
    (ws.root / ARTIFACTS / "spec-1-4-a-first.md").write_text("---\nstatus: done\n---\n")
    (ws.root / COOKIES).write_text("---\nstatus: done\n---\n")
    story = by_id(load_catalog(open_workspace(ws.root)))["1-4"]
    assert story.path == f"{ARTIFACTS}/spec-1-4-a-first.md"
    assert "it comes first by name" in story.second_claims[0].reason


def test_a_plan_s_commit_hash_is_no_secret_but_a_credential_beside_it_is(
    tmp_path: Path,
) -> None:
    ws = fixture(tmp_path, "v63-specs")
    story = by_id(load_catalog(ws))["1-4"]
    assert inject(ws, story).secrets == ()
    spec = ws.root / REMEMBER
    leaked = "deploy_token: 'b8e4f1a93c7d2e6f5a0b9c8d7e6f5a4b3c2d1e0f'\n"
    spec.write_text(spec.read_text().replace("context:", leaked + "context:", 1))
    found = inject(ws, story).secrets
    assert {(f.path, f.line) for f in found} == {(REMEMBER, 6)}


def test_a_malformed_front_matter_is_named_with_its_line(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v63-specs")
    (ws.root / ARTIFACTS / "spec-2-2-broken.md").write_text(
        "---\ntitle: 'Broken'\nstatus: [in-progress\n---\n\n# Broken\n"
    )
    catalog = load_catalog(ws)
    broken = [e for e in catalog.unreadable if e.path.endswith("spec-2-2-broken.md")]
    assert len(broken) == 1 and broken[0].line is not None and broken[0].line >= 3
    assert "front matter" in broken[0].reason
    assert {"1-1", "1-2", "1-3", "1-4", "2-1", "3-1"} <= set(by_id(catalog))


def test_a_spec_moves_its_own_status_after_a_phase(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v63-specs")
    story = by_id(load_catalog(ws))["1-2"]
    update = write_back(ws, story, "dev", succeeded=True)
    assert update is not None
    spec = (ws.root / story.path).read_text() if story.path else ""
    assert "status: 'in-review'" in spec
    sprint = (ws.root / ARTIFACTS / "sprint-status.yaml").read_text()
    assert "1-2-password-reset: review" in sprint


# ------------------------------------------------------------------------ bmad-spec


def test_bmad_spec_stories_come_in_stories_yaml_order(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "bmad-spec")
    stories = by_id(load_catalog(ws))
    assert list(stories) == ["spec-rate-limits:1", "spec-rate-limits:2", "spec-rate-limits:3"]
    first, second, third = stories.values()
    assert {s.layout for s in stories.values()} == {"bmad-spec"}
    assert (first.status, second.status, third.status) == ("done", "review", "backlog")
    folder = "_bmad-output/specs/spec-rate-limits"
    assert second.status_source == f"{folder}/stories/2-metrics.md:4"
    # stories.yaml carries no status: an entry with no story spec is planned, from its line.
    assert third.status_source == f"{folder}/stories.yaml:8" and third.path is None
    assert third.title == "Per-customer overrides"


def test_a_bmad_spec_story_gets_its_spec_companions_and_context(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "bmad-spec")
    folder = "_bmad-output/specs/spec-rate-limits"
    story = by_id(load_catalog(ws))["spec-rate-limits:1"]
    shown = rows(inject(ws, story))
    assert shown[f"{folder}/glossary.md"] == ("story", "included", "companions: list")
    assert shown["docs/redis.md"] == ("story", "included", "context: list")
    assert shown[f"{folder}/stories/1-token-bucket.md"][1] == "included"
    assert shown[f"{folder}/SPEC.md"][1] == "included"
    # Another story's spec file is never this one's.
    assert f"{folder}/stories/2-metrics.md" not in shown


def test_a_story_id_with_two_spec_files_reads_the_first_and_says_so(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "bmad-spec")
    folder = ws.root / "_bmad-output/specs/spec-rate-limits/stories"
    (folder / "2-metrics-again.md").write_text("---\nstatus: done\n---\n")
    catalog = load_catalog(ws)
    story = by_id(catalog)["spec-rate-limits:2"]
    assert story.path is not None and story.path.endswith("2-metrics-again.md")
    note = [e for e in catalog.unreadable if e.path.endswith("2-metrics.md")]
    assert note and "first by name" in note[0].reason


# ------------------------------------------------------------------------------- v7


def test_v7_tickets_are_stories_in_build_order_with_the_plan_owning_the_status(
    tmp_path: Path,
) -> None:
    ws = fixture(tmp_path, "v7-initiative")
    catalog = load_catalog(ws)
    stories = by_id(catalog)
    assert list(stories) == ["1-1", "1-2", "1-2a", "1-3", "2-1", "2-2", "backlog:rounding"]
    assert {s.layout for s in stories.values()} == {"v7"}
    assert stories["1-1"].status == "done"
    assert stories["1-1"].status_source == f"{CART}/story-add-to-cart-plan.md:3"
    assert stories["1-2a"].status == "review"  # built sits in review on BMAD's board
    assert stories["1-2a"].status_note == (
        f"plan status 'built' ({CART}/story-cart-badge-plan.md:3) shown as review,"
        " as BMAD's board does"
    )
    assert stories["2-1"].status == "in-progress"  # blocked sits in in-progress
    assert stories["1-1"].status_note == ""  # done is done: nothing to explain
    assert stories["2-2"].status == "review"  # in-review
    # An entry with no plan is planned: backlog, from its line in tickets.toml.
    spike = stories["1-3"]
    assert (spike.status, spike.status_source) == ("backlog", f"{CART}/tickets.toml:22")
    assert stories["1-1"].group_title == "Cart"


def test_an_epic_slug_is_its_folder_name_with_or_without_the_prefix(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v7-initiative")
    catalog = load_catalog(ws)
    stories = by_id(catalog)
    # slug = "epic-payment" (BMAD's template: the folder's own name) and slug = "cart".
    assert stories["2-1"].group_title == "Payment" and stories["1-1"].group_title == "Cart"
    assert stories["2-1"].context_files[0] == f"{PAYMENT}/epic-payment.md"
    notes = [w for w in catalog.warnings if "has no folder" in w]
    assert notes == [
        "_bmad-output/initiative-checkout/tickets.toml line 16: epic 3 has no folder"
        " epic-receipts/ yet"
    ]


def test_a_leaf_file_joins_its_entry_by_its_own_id(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v7-initiative")
    spike = by_id(load_catalog(ws))["1-3"]
    assert spike.path == f"{CART}/spike-guest-carts.md"
    # No plan: still planned, from its line in tickets.toml.
    assert (spike.status, spike.status_source) == ("backlog", f"{CART}/tickets.toml:22")


def test_a_v7_plan_s_context_list_is_injected_row_by_row(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v7-initiative")
    (tmp_path / "outside-notes.md").write_text("SECRET-OUTSIDE\n")
    story = by_id(load_catalog(ws))["2-1"]
    assert story.context_files == (
        f"{PAYMENT}/epic-payment.md",
        "docs/payments.md",
        "../outside-notes.md",
        "docs/missing.md",
    )
    injection = inject(ws, story)
    shown = rows(injection)
    assert shown["docs/payments.md"] == ("story", "included", "context: list")
    assert shown["../outside-notes.md"][1] == "outside-project"
    assert shown["docs/missing.md"][1] == "missing"
    assert "SECRET-OUTSIDE" not in injection.text
    assert "idempotency key" in injection.text
    assert sum("../outside-notes.md" in w for w in injection.warnings) == 1
    meters = {f.path: f.bytes for f in injection.files}
    assert meters["docs/payments.md"] == (ws.root / "docs/payments.md").stat().st_size
    # The epic's own file is the epic's context, not a context: list entry.
    epic = next(f for f in injection.files if f.path == f"{PAYMENT}/epic-payment.md")
    assert (epic.why, epic.reason) == ("epic context", "epic context: the ticket's epic file")
    # Left out like any other file: the row stays, the text goes.
    lean = inject(ws, story, Selection(left_out=("docs/payments.md",)))
    assert rows(lean)["docs/payments.md"][1] == "excluded"
    assert "idempotency key" not in lean.text
    # The plan's baseline_revision is a commit, not a credential.
    assert injection.secrets == ()


def test_an_unknown_plan_status_is_shown_verbatim_and_the_tracker_drift_named(
    tmp_path: Path,
) -> None:
    ws = fixture(tmp_path, "v7-initiative")
    story = by_id(load_catalog(ws))["1-2"]
    assert (story.status, story.status_known) == ("waiting-on-design", False)
    drift = f"{CART}/story-remove-item.md:2 says tracker_status 'in-progress'"
    assert story.status_drift == (drift,)


def test_the_archived_v6_plan_is_history_not_stories(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v7-initiative")
    catalog = load_catalog(ws)
    assert all("legacy" not in s.title.lower() for s in catalog.stories)
    assert all(not (s.path or "").startswith("_bmad-output/archive-v6") for s in catalog.stories)
    assert any("archive-v6/" in w and "history" in w for w in catalog.warnings)


def test_a_v7_story_injects_its_own_leaf_plan_and_epic_file_only(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v7-initiative")
    story = by_id(load_catalog(ws))["1-1"]
    shown = rows(inject(ws, story))
    story_rows = {path for path, row in shown.items() if row[0] == "story"}
    assert story_rows == {
        f"{CART}/story-add-to-cart.md",
        f"{CART}/story-add-to-cart-plan.md",
        f"{CART}/epic-cart.md",
    }


def test_a_malformed_tickets_toml_is_named_with_its_line_and_the_rest_read(
    tmp_path: Path,
) -> None:
    ws = fixture(tmp_path, "v7-initiative")
    tickets = ws.root / "_bmad-output/initiative-checkout/epic-payment/tickets.toml"
    tickets.write_text('[[entry]]\nid = 1\ntitle = "Card form\n')
    catalog = load_catalog(ws)
    broken = [e for e in catalog.unreadable if e.path.endswith("epic-payment/tickets.toml")]
    assert len(broken) == 1 and broken[0].line == 3
    assert {"1-1", "1-2", "1-2a", "1-3", "backlog:rounding"} <= set(by_id(catalog))


def test_an_entry_without_an_id_is_reported_with_its_line(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v7-initiative")
    catalog = load_catalog(ws)
    entry = [e for e in catalog.unreadable if e.path.endswith("epic-payment/tickets.toml")]
    assert [(e.line, e.reason) for e in entry] == [(6, "entry has no usable 'id'; not read")]


def test_the_active_initiative_is_read_from_core_too(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            "_bmad/custom/config.user.toml": '[core]\nactive_initiative = "initiative-b"\n',
            "_bmad-output/initiative-a/tickets.toml": '[[entry]]\nid = 1\ntitle = "A one"\n',
            "_bmad-output/initiative-b/tickets.toml": '[[entry]]\nid = 1\ntitle = "B one"\n',
        },
    )
    stories = load_catalog(ws).stories
    assert [(s.id, s.title, s.layout) for s in stories] == [("1", "B one", "v7")]


def test_a_v7_plan_moves_its_own_status_after_a_phase(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v7-initiative")
    story = by_id(load_catalog(ws))["2-1"]
    update = write_back(ws, story, "dev", succeeded=True)
    assert update is not None and [e.path for e in update.edits] == [
        "_bmad-output/initiative-checkout/epic-payment/story-card-form-plan.md"
    ]
    plan = ws.root / update.edits[0].path
    assert "status: in-review" in plan.read_text()
    assert not (ws.root / ARTIFACTS / "sprint-status.yaml").exists()


# ------------------------------------------------------------------------- OpenSpec


def test_openspec_changes_as_1_10_writes_them(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "openspec-1x")
    stories = by_id(load_catalog(ws))
    assert list(stories) == ["add-search:1", "add-search:2", "lean-flow:1", "new-idea"]
    assert {s.layout for s in stories.values()} == {"openspec"}
    # Indented sub-tasks count: 2 of 4 ticked.
    assert stories["add-search:1"].status == "in-progress"
    # A change with only .openspec.yaml is listed, planned, titled by its goal.
    idea = stories["new-idea"]
    assert (idea.status, idea.title) == ("backlog", "Wishlists shoppers can share")
    assert idea.status_source == "openspec/changes/new-idea/.openspec.yaml"
    # Nested specs: specs/<area>/<capability>/spec.md.
    search = stories["add-search:1"]
    assert {r.capability for r in search.requirements} == {"search/query", "search/ranking"}
    assert "openspec/changes/add-search/specs/search/ranking/spec.md" in search.files


def test_a_custom_schema_names_the_change_files(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "openspec-1x")
    lean = by_id(load_catalog(ws))["lean-flow:1"]
    assert lean.path == "openspec/changes/lean-flow/todo.md"
    assert lean.files == ("openspec/changes/lean-flow/brief.md",)
    assert [t.done for t in lean.tasks] == [True, False]


def test_config_context_and_rules_are_metered_as_the_agent_gets_them(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "openspec-1x")
    story = by_id(load_catalog(ws))["add-search:1"]
    injection = build_story_injection(ws, story, Selection(), command_name="dev")
    files = {f.path: f for f in injection.files}
    context = files["openspec/config.yaml (context)"]
    text = (
        "Tech stack: Python 3.12, FastAPI, Postgres.\nWrite requirements as observable behaviour.\n"
    )
    assert (context.status, context.bytes) == ("included", len(text.encode()))
    assert context.tokens is not None and context.tokens > 0
    assert text in injection.text
    rules = files["openspec/config.yaml (rules: tasks)"]
    assert rules.status == "excluded" and rules.tokens is not None and rules.tokens > 0
    assert "End every group with a test task" not in injection.text
    off = build_story_injection(ws, story, Selection(project_context=False), command_name="dev")
    assert text not in off.text
