"""The fit and the refusal's advice may leave out what a story's plan asks to load — a spec's
``context:`` files, a v4 project's always-load files, a context companion — never the story's
own file; and what they propose is what applying it gives."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from builders import make_workspace
from promptdeck.core.fit.advice import fit_under_error_line, size_options
from promptdeck.core.fit.solver import TIERS, FitTarget, composed_measure, solve
from promptdeck.core.injection import Selection
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.prompt import ComposedPrompt, PromptRequest, compose_prompt

ARTIFACTS = "_bmad-output/implementation-artifacts"
SPEC = f"{ARTIFACTS}/spec-1-2-password-reset.md"
CONTEXT = "docs/architecture.md"
FILES = {
    f"{ARTIFACTS}/sprint-status.yaml": (
        "development_status:\n  epic-1: in-progress\n  1-2-password-reset: in-progress\n"
    ),
    SPEC: (
        "---\ntitle: 'Password reset'\nstatus: 'in-progress'\nstory_key: '1-2-password-reset'\n"
        "context:\n  - '{project-root}/docs/architecture.md'\n---\n\n## Intent\n\n"
        "Mail a one-time link.\n\n## Tasks & Acceptance\n\n- [ ] `api/reset.py` -- tokens\n"
    ),
    CONTEXT: "# Architecture\n\n" + "a" * 20_000 + "\n",
}
ERROR_LINE = 12_000


def workspace_at(tmp_path: Path) -> Workspace:
    return make_workspace(
        tmp_path / "ws",
        FILES,
        injection_warn_bytes=ERROR_LINE // 2,
        injection_error_bytes=ERROR_LINE,
        paths_project_context=(),
    )


def compose(workspace: Workspace, selection: Selection | None = None) -> ComposedPrompt:
    request = PromptRequest("1-2", "dev", selection=selection or Selection())
    return compose_prompt(workspace, None, request, count_tokens=False)


def test_a_context_list_file_over_the_error_line_is_what_the_advice_leaves_out(
    tmp_path: Path,
) -> None:
    workspace = workspace_at(tmp_path)
    prompt = compose(workspace)
    row = next(f for f in prompt.injection.files if f.path == CONTEXT)
    # Over the line on its own: listed with the story's files, not read.
    assert (row.category, row.status, row.why) == ("story", "too-large", "context: list")
    assert prompt.injection.level == "error"

    answer = fit_under_error_line(workspace, prompt)
    assert answer.fits, answer.reason
    assert [(d.path, d.flag) for d in answer.drop] == [(CONTEXT, f"--leave-out {CONTEXT}")]
    assert (SPEC, "the story's own file") in answer.kept
    # Applying it gives the size it predicts, under the line.
    lean = compose(workspace, Selection(left_out=(CONTEXT,)))
    assert lean.injection.level != "error"
    assert answer.size_after == lean.injection.size_bytes

    options = size_options(workspace, prompt)
    assert [option.paths for option in options] == [(CONTEXT,)]
    assert f"--leave-out {CONTEXT}" in options[0].action


def test_inspect_fit_proposes_the_context_file_against_a_byte_target(tmp_path: Path) -> None:
    workspace = workspace_at(tmp_path)
    config = replace(workspace.config, injection_error_bytes=10 * ERROR_LINE)
    workspace = replace(workspace, config=config)
    prompt = compose(workspace)
    spec_bytes = (workspace.root / SPEC).stat().st_size
    target = FitTarget(prompt.system_meter.bytes + prompt.user_meter.bytes - 5_000, "bytes", "t")

    def again(request: PromptRequest) -> ComposedPrompt:
        return compose_prompt(workspace, None, request, count_tokens=False)

    answer = solve(prompt, target, composed_measure(again, prompt.request, target))
    assert answer.fits and [d.path for d in answer.drop] == [CONTEXT]
    assert answer.lines()[1].strip().startswith(f"--leave-out {CONTEXT}")
    assert spec_bytes < 5_000  # the story's own file alone could never be the answer


def test_an_always_load_file_is_given_up_before_a_file_added_by_hand(tmp_path: Path) -> None:
    files = {**FILES, "docs/standards.md": "s" * 9_000 + "\n", "docs/added.md": "x" * 9_000 + "\n"}
    workspace = make_workspace(
        tmp_path / "ws",
        files,
        injection_warn_bytes=6_000,
        injection_error_bytes=ERROR_LINE,
        paths_project_context=(),
        bmad_always_load=("docs/standards.md",),
        bmad_always_load_origin=".bmad-core/core-config.yaml:16",
    )
    prompt = compose(workspace, Selection(left_out=(CONTEXT,), additional_files=("docs/added.md",)))
    shown = {f.path: (f.category, f.status) for f in prompt.injection.files}
    assert shown["docs/standards.md"] == ("always-load", "included")
    # The sizes on disk pass the line at the file added by hand: it is not read.
    assert shown["docs/added.md"] == ("additional", "too-large")
    answer = fit_under_error_line(workspace, prompt)
    assert answer.fits
    assert [(d.path, d.flag) for d in answer.drop] == [
        ("docs/standards.md", "--exclude docs/standards.md")
    ]
    assert TIERS["always-load"] == TIERS["context"] < TIERS["additional"]
