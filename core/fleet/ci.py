"""An epic's stories as CI jobs: a GitHub Actions workflow exported, its jobs' artifacts read
back as run records.

:func:`export_github` composes every story × phase (dev, then review) of the epic now, writes
each prompt's exact files under ``.promptdeck/ci/epic-<N>/<story>/<phase>/`` (``system.md``,
``user.md`` and the ``meta.json`` its record will carry) and a workflow
``.github/workflows/promptdeck-epic-<N>.yml``: per wave of the overlap plan, a ``dev`` job and
then a ``review`` job, each a matrix over the wave's stories, each step running the agent's
action with promptdeck's system prompt and user message —

- Claude Code: ``anthropics/claude-code-action@v1`` with ``prompt`` (the user message) and
  ``claude_args: --append-system-prompt-file <system.md>``;
- Codex: ``openai/codex-action@v1`` with ``prompt-file`` (the user message) and ``codex-home``
  holding a ``config.toml`` whose ``developer_instructions`` is the system prompt (as
  promptdeck's own Codex launch sends it).

The dev job pushes the story's branch ``promptdeck/<story>``; the review job starts from it.
Each job uploads ``promptdeck-<story>-<phase>``: the payload's ``meta.json``, the agent's output
and ``ci.json`` (the job's conclusion). :func:`import_runs` reads such folders back: every file
through the guarded reader, inside the folder given; a malformed, huge or linked-out record is
one line and is not imported.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import yaml

from ..errors import SecretsInInjection, UsageError
from ..lean_dataclass import dataclass
from ..phases.outcome import ProcessEnd, decide_outcome, exit_code_for
from ..phases.signals import deciding_signal, parse_text
from ..plans.catalog import load_catalog
from ..project.state_folder import STATE_DIRNAME, open_state_file, state_dir
from ..project.textfiles import TextProblem, read_json_object, read_text, read_text_head
from ..project.workspace import Workspace, ensure_inside
from ..records.reader import load_run_dir
from ..records.schema import RunMeta
from ..records.writer import RunRecord
from .overlap import epic_overlap
from .worktrees import slug

CI_RELPATH = ".promptdeck/ci"
WORKFLOWS = ".github/workflows"
PHASES = ("dev", "review")
ACTIONS = {
    "claude": "anthropics/claude-code-action@v1",
    "codex": "openai/codex-action@v1",
}
"""The action each agent's jobs use."""
ACTION_INPUTS = {
    "claude": ("prompt", "claude_args", "anthropic_api_key"),
    "codex": ("prompt-file", "codex-home", "openai-api-key"),
}
"""The documented inputs the exported steps set, per action."""
MARKER = "# Written by promptdeck export --ci github"
_OUTPUT = {"claude": "execution.json", "codex": "output.txt"}
_IMPORTED_LIMIT = 4 * 1024 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_NO_LIMIT = 1 << 62
_EXPORTED_META = ("story", "phase", "mode", "agent", "signature", "system_bytes", "user_bytes")
"""The keys of an artifact's ``meta.json`` an import keeps: the ones the export decides."""
_CONCLUSIONS = ("success", "failure", "cancelled")


@dataclass(frozen=True)
class Export:
    """What :func:`export_github` wrote: the workflow and each job's payload folder."""

    workflow: Path
    payloads: tuple[Path, ...]
    waves: tuple[tuple[str, ...], ...]


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string, exact (every control character escaped)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _write(root: Path, path: Path, text: str) -> None:
    """Write an exported file: under ``.promptdeck/`` through the state-folder rules, the
    workflow through real folders; never through a link, never into a FIFO or a device."""
    ensure_inside(root, path, "an exported file")
    if path.relative_to(root).parts[0] == STATE_DIRNAME:
        state_dir(root, path.parent)
        descriptor = open_state_file(root, path, _WRITE_FLAGS)
    else:
        _real_folders(root, path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        _real_folders(root, path.parent)
        try:
            descriptor = os.open(path, _WRITE_FLAGS | _NOFOLLOW, 0o644)
        except OSError as exc:
            raise UsageError(
                f"{path.relative_to(root)}: {exc.strerror or exc}; not written"
            ) from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise UsageError(f"{path.relative_to(root)}: not a regular file; not written")
        handle.truncate(0)
        handle.write(text)


def _real_folders(root: Path, folder: Path) -> None:
    """Refuse ``folder`` when it, or a folder on the way from ``root``, is a symlink."""
    current = root
    for part in folder.relative_to(root).parts:
        current = current / part
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK(os.lstat(current).st_mode):
                raise UsageError(
                    f"{current.relative_to(root)}: a symlink; promptdeck does not write through it"
                )


def _check_foreign_workflow(root: Path, workflow: Path) -> None:
    """Refuse a workflow file there that promptdeck did not write: anything but a regular
    file starting with :data:`MARKER` (a big, binary or unreadable one included)."""
    shown = workflow.relative_to(root)
    try:
        info = os.lstat(workflow)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"{shown}: {exc.strerror or exc}; not overwritten") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{shown} exists and is not a regular file: not overwritten")
    head = read_text_head(workflow, len(MARKER) + 1, root=root.resolve(), limit=_NO_LIMIT)
    if isinstance(head, TextProblem) or not head[0].startswith(MARKER):
        raise UsageError(
            f"{shown} exists and promptdeck did not write it: not overwritten; move it away first"
        )


def export_github(
    workspace: Workspace, epic: str, agent: str, *, allow_secrets: bool = False
) -> Export:
    """Write the epic's workflow and payloads (see the module's description). Every prompt is
    composed before anything is written.

    Raises:
        UsageError: an agent with no action, a workflow file there that promptdeck did not
            write (it is never overwritten), a path leading out of the project, two stories
            with one folder name (exit 2).
        SecretsInInjection: a prompt's injected files hold likely credentials and
            ``allow_secrets`` is not given: the payloads are committed and pushed to run,
            so nothing is written (exit 8).
        StoryNotFound: the epic has no stories.
    """
    from ..prompt.compose import compose_prompt
    from ..prompt.request import PromptRequest

    if agent not in ACTIONS:
        raise UsageError(f"export --ci github: agent {agent!r} has no action (claude or codex)")
    root = workspace.root
    workflow = root / WORKFLOWS / f"promptdeck-epic-{slug(epic)}.yml"
    _check_foreign_workflow(root, workflow)
    plan = epic_overlap(workspace, epic)
    catalog = load_catalog(workspace)
    done = {s.id for s in catalog.in_group(epic) if s.status == "done"}
    base = f"{CI_RELPATH}/epic-{slug(epic)}"
    waves = tuple(tuple(s for s in wave if s not in done) for wave in plan.waves)
    waves = tuple(wave for wave in waves if wave)
    named: dict[str, str] = {}
    composed = []
    for story_id in (s for wave in waves for s in wave):
        story = catalog.find(story_id)
        other = named.setdefault(slug(story.id), story.id)
        if other != story.id:
            raise UsageError(
                f"stories {other} and {story.id} have one folder name {slug(story.id)!r}: "
                "their payloads would overwrite each other; not exported"
            )
        for phase in PHASES:
            request = PromptRequest(story_id=story.id, phase=phase)
            prompt = compose_prompt(workspace, catalog, request, count_tokens=False)
            composed.append((story, phase, prompt))
    secrets = [str(f) for _, _, prompt in composed for f in prompt.injection.secrets]
    if secrets and not allow_secrets:
        raise SecretsInInjection(secrets)
    payloads: list[Path] = []
    for story, phase, prompt in composed:
        folder = root / base / slug(story.id) / phase
        _write(root, folder / "system.md", prompt.system)
        _write(root, folder / "user.md", prompt.user)
        meta = RunMeta(
            run_id="",
            story=story.id,
            story_title=story.title,
            story_path=story.path,
            epic=story.group,
            phase=phase,
            mode="ci",
            agent=agent,
            signature=prompt.signature,
            system_bytes=len(prompt.system.encode("utf-8")),
            user_bytes=len(prompt.user.encode("utf-8")),
        )
        _write(root, folder / "meta.json", json.dumps(meta.to_dict(), indent=2) + "\n")
        if agent == "codex":
            config = f"developer_instructions = {_toml_string(prompt.system)}\n"
            _write(root, folder / "codex-home" / "config.toml", config)
        payloads.append(folder)
    text = (
        MARKER
        + "\n"
        + yaml.safe_dump(workflow_for(epic, waves, base, agent), sort_keys=False, width=100000)
    )
    _write(root, workflow, text)
    return Export(workflow, tuple(payloads), waves)


def _job_id(wave: int, phase: str) -> str:
    return f"wave-{wave}-{phase}"


def workflow_for(
    epic: str, waves: tuple[tuple[str, ...], ...], base: str, agent: str
) -> dict[str, Any]:
    """The workflow as data: per wave a dev job and a review job, matrices over the wave's
    stories; each wave's dev waits for the wave before it."""
    jobs: dict[str, Any] = {}
    previous: str | None = None
    for number, wave in enumerate(waves, start=1):
        for phase in PHASES:
            job = _job_id(number, phase)
            needs = [_job_id(number, "dev")] if phase == "review" else []
            if phase == "dev" and previous is not None:
                needs = [previous]
            include = [
                {"story": story, "dir": f"{base}/{slug(story)}/{phase}", "branch": slug(story)}
                for story in wave
            ]
            body: dict[str, Any] = {
                "name": f"wave {number} · {phase} · ${{{{ matrix.story }}}}",
                "runs-on": "ubuntu-latest",
                "timeout-minutes": 60,
                "strategy": {"fail-fast": False, "matrix": {"include": include}},
                "steps": _steps(phase, agent),
            }
            if needs:
                body = {"needs": needs, **body}
            jobs[job] = body
        previous = _job_id(number, "review")
    return {
        "name": f"promptdeck epic {epic}",
        "on": {"workflow_dispatch": {}},
        "permissions": {"contents": "write"},
        "jobs": jobs,
    }


_MATRIX_ENV = {
    "PROMPTDECK_STORY": "${{ matrix.story }}",
    "PROMPTDECK_DIR": "${{ matrix.dir }}",
    "PROMPTDECK_BRANCH": "${{ matrix.branch }}",
}
"""What a ``run`` script reads of its job. An expression is never written into a script: a
story id or a path comes from the plan, files a pull request can change, and an expression
is pasted into the script before the shell reads it (script injection); an environment
variable is data."""


def _push_step(phase: str) -> dict[str, Any]:
    """The step that commits the phase's work (never promptdeck's own output) and pushes the
    story's branch."""
    return {
        "name": "Push the story's branch",
        "shell": "bash",
        "env": dict(_MATRIX_ENV),
        "run": "\n".join(
            [
                'git config user.name "promptdeck"',
                'git config user.email "promptdeck@users.noreply.github.com"',
                "git add -A -- . ':!promptdeck-out'",
                f'git commit -q -m "promptdeck: {phase} of story $PROMPTDECK_STORY" || true',
                'git push origin "HEAD:refs/heads/promptdeck/$PROMPTDECK_BRANCH"',
            ]
        ),
    }


def _steps(phase: str, agent: str) -> list[dict[str, Any]]:
    ref = "promptdeck/${{ matrix.branch }}" if phase == "review" else "${{ github.ref_name }}"
    out = f"promptdeck-out/${{{{ matrix.branch }}}}-{phase}"
    shell_out = f'promptdeck-out/"$PROMPTDECK_BRANCH"-{phase}'
    steps: list[dict[str, Any]] = [
        {"uses": "actions/checkout@v4", "with": {"ref": ref, "fetch-depth": 0}},
    ]
    if agent == "claude":
        steps.append(
            {
                "id": "payload",
                "name": "Read promptdeck's user message",
                "shell": "bash",
                "env": dict(_MATRIX_ENV),
                # A delimiter of the job's own: a line of the message can never end it early.
                "run": (
                    "eof=\"PROMPTDECK_EOF_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')\"\n"
                    '{ echo "user<<$eof"; cat "$PROMPTDECK_DIR/user.md"; echo; '
                    'echo "$eof"; } >> "$GITHUB_OUTPUT"'
                ),
            }
        )
        steps.append(
            {
                "id": "agent",
                "uses": ACTIONS["claude"],
                "with": {
                    "anthropic_api_key": "${{ secrets.ANTHROPIC_API_KEY }}",
                    "prompt": "${{ steps.payload.outputs.user }}",
                    "claude_args": "--append-system-prompt-file ${{ matrix.dir }}/system.md",
                },
            }
        )
        output = "${{ steps.agent.outputs.execution_file }}"
    else:
        steps.append(
            {
                "id": "agent",
                "uses": ACTIONS["codex"],
                "with": {
                    "openai-api-key": "${{ secrets.OPENAI_API_KEY }}",
                    "prompt-file": "${{ matrix.dir }}/user.md",
                    "codex-home": "${{ matrix.dir }}/codex-home",
                    "output-file": f"{out}/output.txt",
                },
            }
        )
        output = ""
    name = _OUTPUT[agent]
    keep_env = {
        **_MATRIX_ENV,
        "PROMPTDECK_STATUS": "${{ job.status }}",
        "PROMPTDECK_RUN": "${{ github.run_id }}",
    }
    if output:
        keep_env["PROMPTDECK_OUTPUT"] = output
    steps.append(
        {
            "name": "Keep the run for promptdeck import-runs",
            "if": "always()",
            "shell": "bash",
            "env": keep_env,
            "run": "\n".join(
                [
                    f"mkdir -p {shell_out}",
                    f'cp "$PROMPTDECK_DIR/meta.json" {shell_out}/meta.json',
                    *(
                        [
                            'if [ -n "$PROMPTDECK_OUTPUT" ] && [ -f "$PROMPTDECK_OUTPUT" ]; then '
                            f'cp "$PROMPTDECK_OUTPUT" {shell_out}/{name}; fi'
                        ]
                        if output
                        else []
                    ),
                    'printf \'{"conclusion": "%s", "run": "%s"}\\n\' "$PROMPTDECK_STATUS" '
                    f'"$PROMPTDECK_RUN" > {shell_out}/ci.json',
                ]
            ),
        }
    )
    steps.append(_push_step(phase))
    steps.append(
        {
            "if": "always()",
            "uses": "actions/upload-artifact@v4",
            "with": {"name": f"promptdeck-${{{{ matrix.branch }}}}-{phase}", "path": out},
        }
    )
    return steps


# -- import ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Imported:
    """What :func:`import_runs` did: the run ids recorded and one line per folder refused."""

    runs: tuple[str, ...]
    refused: tuple[str, ...]


def _output_text(folder: Path, base: Path) -> str | TextProblem:
    """The agent's final text: Claude's execution file (its ``result`` messages) or Codex's
    output file."""
    for name in ("output.txt", "execution.json"):
        text = read_text(folder / name, base, limit=_IMPORTED_LIMIT)
        if isinstance(text, TextProblem) and text.reason == "missing":
            continue
        if isinstance(text, TextProblem) or name == "output.txt":
            return text
        try:
            messages = json.loads(text)
        except (ValueError, RecursionError):
            return text
        parts = [
            str(m.get("result"))
            for m in (messages if isinstance(messages, list) else [])
            if isinstance(m, dict) and m.get("type") == "result" and m.get("result")
        ]
        return "\n".join(parts).encode("utf-8", "replace").decode("utf-8") or text
    return ""


def import_runs(workspace: Workspace, path: Path) -> Imported:
    """Read CI job artifacts under ``path`` (one folder per job, or one job's folder) back as
    run records of ``workspace``."""
    base = path.resolve()
    if not base.is_dir():
        raise UsageError(f"import-runs {path}: not a folder")
    try:
        folders = (
            [base]
            if (base / "meta.json").exists()
            else sorted(
                Path(entry.path)
                for entry in os.scandir(base)
                if entry.is_dir(follow_symlinks=False)
            )
        )
    except OSError as exc:
        raise UsageError(f"import-runs {path}: {exc.strerror}") from None
    runs: list[str] = []
    refused: list[str] = []
    for folder in folders[:10_000]:
        shown = folder.name if folder != base else path.name
        outcome = _import_one(workspace, folder, base)
        if isinstance(outcome, str) and outcome.startswith("refused: "):
            refused.append(f"{shown}: {outcome.removeprefix('refused: ')}; not imported")
        elif outcome:
            runs.append(outcome)
    return Imported(tuple(runs), tuple(refused))


def _valid_text(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every lone surrogate a JSON escape made (``\\udc80``, say: a string no
    UTF-8 file can hold, so no record could be written with it) shown as ``?``."""
    try:
        text = json.dumps(data, ensure_ascii=False).encode("utf-8", "replace").decode("utf-8")
        loaded: dict[str, Any] = json.loads(text)
    except (ValueError, RecursionError):  # nested past what is read back: nothing kept
        return {}
    return loaded


def _import_one(workspace: Workspace, folder: Path, base: Path) -> str:
    meta_data = read_json_object(folder / "meta.json", base)
    if isinstance(meta_data, TextProblem):
        return f"refused: meta.json: {meta_data}"
    meta_data = _valid_text(meta_data)
    # Only what the export wrote is kept: an artifact is a file anyone can forge, and a key
    # such as ``continues`` or ``pid`` would make it another run's resumption, or running.
    meta = RunMeta.from_dict({k: v for k, v in meta_data.items() if k in _EXPORTED_META})
    if not meta.story or not meta.phase or meta.phase not in PHASES:
        return "refused: meta.json names no story and phase promptdeck exported"
    if meta.agent not in ACTIONS:
        return "refused: meta.json names no agent promptdeck exports for (claude or codex)"
    try:
        story = load_catalog(workspace).find(meta.story)
    except UsageError:
        return f"refused: meta.json names the story {meta.story[:80]!r}, not one of this plan"
    meta = dataclasses.replace(
        meta, story=story.id, story_title=story.title, story_path=story.path, epic=story.group
    )
    ci = read_json_object(folder / "ci.json", base)
    if isinstance(ci, TextProblem):
        return f"refused: ci.json: {ci}"
    ci = _valid_text(ci)
    text = _output_text(folder, base)
    if isinstance(text, TextProblem):
        return f"refused: the agent's output: {text}"
    # A job's status is one of GitHub's words; anything else (megabytes, escapes) is unknown.
    conclusion = ci.get("conclusion")
    conclusion = conclusion if conclusion in _CONCLUSIONS else "unknown"
    signal = deciding_signal(parse_text(text), meta.phase)
    outcome = decide_outcome(
        ProcessEnd(
            signal=signal.outcome if signal is not None else None,
            returncode=0 if conclusion == "success" else 1,
        )
    )
    record = RunRecord.create(workspace.root, meta.story, meta.phase, stream_format="text")
    now = time.time()
    kept = RunMeta.from_dict(
        {
            **meta.to_dict(),
            "run_id": record.id,
            "started_ts": now,
            "started": None,
            "ci_run": str(ci.get("run") or "")[:40],
        }
    )
    record.write_meta(kept.to_dict())
    record.write_stream(text.encode("utf-8"))
    record.close()
    result = {
        "run_id": record.id,
        "story": meta.story,
        "phase": meta.phase,
        "attempt": meta.attempt,
        "mode": "ci",
        "agent": meta.agent or "",
        "outcome": outcome,
        "exit_code": exit_code_for(outcome),
        "process_exit": None,
        "duration_s": 0,
        "signal": signal.to_dict() if signal is not None else None,
        "signals": 0,
        "message": f"imported from CI ({conclusion}): "
        + (signal.line if signal is not None else "no signal"),
        "warnings": [],
    }
    record.write_result(result)
    if load_run_dir(record.dir) is None:
        return "refused: the record could not be read back"
    return record.id
