"""The story prompt (seed 003): how the agent works on one story.

For an OpenSpec story: its id and title, its tasks only, the change directory with
``proposal.md`` and ``design.md``, every scenario of the change's specs, the verification
commands, the ``<promise>COMPLETE</promise>`` / ``<promise>FAILED: {reason}</promise>`` signals,
and how to mark tasks done in ``tasks.md``. The BMAD equivalent names the story file, points to
its acceptance criteria, marks tasks done in the story file's checkboxes, and uses seed 002's
``IMPLEMENTATION COMPLETE`` / ``IMPLEMENTATION BLOCKED`` lines in place of the promise tags.

Two sections are decided here, in code: "Shared Learnings" appears only when the learnings file
holds more than :data:`LEARNINGS_TEMPLATE` (until then one line says where to record; the file
itself starts at the first dev run, see :mod:`.learnings`); the retry section only when the
previous attempt gave a failure reason (never after an abnormal termination, which has none).

The prompt is self-contained: acting on it takes file edits and the listed commands, no
environment variable and no special command.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from ..layers.templates import BUNDLED, TemplateSet, render
from ..layers.values import epic_label
from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, read_text
from ..project.workspace import Workspace
from ..stories.model import Story, Task

LEARNINGS_TEMPLATE = """\
# Shared Learnings

Discoveries, decisions and gotchas that later stories should know. Append a short bullet for
each; do not rewrite earlier entries.
"""
"""What a fresh learnings file holds; a file holding only this gets no prompt section."""


def _normalize(text: str) -> str:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def learnings_entries(text: str) -> str:
    """What ``text`` holds beyond :data:`LEARNINGS_TEMPLATE` (``""`` when nothing).

    Line endings and trailing blanks do not count as content.
    """
    body = _normalize(text)
    template = _normalize(LEARNINGS_TEMPLATE)
    if body.startswith(template):
        body = body[len(template) :]
    return body.strip("\n")


@dataclass(frozen=True)
class Learnings:
    """The shared learnings file as read for one compose.

    Attributes:
        path: the configured path, forward slashes.
        status: ``ok``, ``missing``, ``unreadable`` or ``not-utf8``.
        entries: the content beyond the template (``""`` when there is none).
    """

    path: str
    status: str
    entries: str = ""

    @property
    def has_entries(self) -> bool:
        """True when the prompt gets a "Shared Learnings" section."""
        return self.status == "ok" and bool(self.entries)

    @property
    def warning(self) -> str | None:
        """A warning when the file exists but cannot be used, else None."""
        if self.status in ("unreadable", "not-utf8"):
            why = "unreadable" if self.status == "unreadable" else "not valid UTF-8 text"
            return f"learnings file {self.path}: {why}; the prompt has no Shared Learnings"
        return None


def read_learnings(workspace: Workspace, configured: str | None = None) -> Learnings:
    """Read the learnings file now: ``configured``, else ``config.paths_learnings``."""
    configured = configured or workspace.config.paths_learnings
    shown = Path(configured).as_posix()
    path = Path(configured)
    if not path.is_absolute():
        path = workspace.root / path
    text = read_text(path, workspace.root, limit=workspace.config.read_max_bytes)
    if isinstance(text, TextProblem):
        if text.reason in ("missing", "outside-project", "empty") or text.detail == "is a folder":
            return Learnings(shown, "missing")
        return Learnings(
            shown, "not-utf8" if text.reason in ("not-utf8", "binary") else "unreadable"
        )
    return Learnings(shown, "ok", learnings_entries(text))


def render_tasks(tasks: Sequence[Task], depth: int = 0) -> str:
    """The tasks as a nested Markdown checklist, done ones ticked."""
    lines: list[str] = []
    for task in tasks:
        lines.append(f"{'  ' * depth}- [{'x' if task.done else ' '}] {task.text}")
        if task.children:
            lines.append(render_tasks(task.children, depth + 1))
    return "\n".join(lines)


def _tasks_text(story: Story, injected: Collection[str]) -> str:
    """The story's tasks, said once.

    A BMAD story file in the injection holds the task list already: the prompt points to it
    rather than copying it (copying it put ~4 KB of a real story in the prompt twice). An
    OpenSpec story's tasks are one group of the change's shared ``tasks.md``, which is not
    injected: they are copied here, and only they.
    """
    if story.source == "bmad" and story.path is not None and story.path in injected:
        total, done = _count(story.tasks)
        if not total:
            return (
                f"The story file `{story.path}` is in `<file_injections>` below; its "
                "`## Tasks / Subtasks` section lists no tasks."
            )
        return (
            f"The tasks are the `## Tasks / Subtasks` checklist of the story file "
            f"`{story.path}`, in `<file_injections>` below ({total} items, {done} done). Work "
            "through the open ones in order."
        )
    return render_tasks(story.tasks) or "(this story lists no tasks)"


def _count(tasks: Sequence[Task]) -> tuple[int, int]:
    total = done = 0
    for task in tasks:
        total += 1
        done += task.done
        inner_total, inner_done = _count(task.children)
        total += inner_total
        done += inner_done
    return total, done


def _change_docs(story: Story, injected: Collection[str]) -> str:
    """Where the change's proposal and design are: injected (not to be read again), or to be
    read; a change without ``design.md`` (it is optional in OpenSpec) is not sent to one."""
    base = (story.change_dir or f"openspec/changes/{story.group}").rstrip("/")
    docs = [
        (f"{base}/{name}", why)
        for name, why in (
            ("proposal.md", "why the change is made"),
            ("design.md", "how it is designed"),
        )
        if f"{base}/{name}" in story.files
    ]
    if not docs:
        return "It has no `proposal.md` or `design.md`."
    shown = " and ".join(f"`{path}` ({why})" for path, why in docs)
    if all(path in injected for path, _ in docs):
        return f"Its {shown} {'are' if len(docs) > 1 else 'is'} in `<file_injections>` below."
    return f"Read {shown}."


def _spec_files(story: Story) -> list[str]:
    return [f for f in story.files if f.endswith("/spec.md")]


def _scenarios_text(story: Story, injected: Collection[str]) -> str:
    """The change's scenarios, said once: a pointer to the injected spec files (with the
    requirements they hold), or the scenarios copied when the specs are not injected."""
    specs = _spec_files(story)
    if not story.requirements:
        return "The change's specs hold no scenarios."
    if specs and all(spec in injected for spec in specs):
        count = sum(len(r.scenarios) for r in story.requirements)
        listed = "\n".join(
            f"- {r.name} (`{r.capability}`, {len(r.scenarios)} scenario"
            f"{'' if len(r.scenarios) == 1 else 's'})"
            for r in story.requirements
        )
        files = ", ".join(f"`{spec}`" for spec in specs)
        return (
            f"The change's {len(story.requirements)} requirements and {count} scenarios are in "
            f"its spec files, in `<file_injections>` below: {files}. The requirements:\n\n" + listed
        )
    return render_scenarios(story)


def render_scenarios(story: Story) -> str:
    """Every requirement of the story's change with all its scenarios, in spec order."""
    blocks: list[str] = []
    for requirement in story.requirements:
        blocks.append(f"#### Requirement: {requirement.name} (`{requirement.capability}`)")
        if requirement.text.strip():
            blocks.append(requirement.text.strip("\n"))
        for scenario in requirement.scenarios:
            blocks.append(f"##### Scenario: {scenario.name}\n\n{scenario.text.strip(chr(10))}")
    return "\n\n".join(blocks)


def verification_text(commands: Sequence[str]) -> str:
    """The verification commands as a list, or what to do when none is configured."""
    if not commands:
        return (
            "No verification commands are configured for this workspace: run the project's "
            "own tests and checks, if it has any."
        )
    return "\n".join(f"- `{command}`" for command in commands)


def _clean_reason(reason: str | None) -> str | None:
    if reason is None or not reason.strip():
        return None
    return reason.strip()


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in text.split("\n"))


def _story_values(story: Story, injected: Collection[str] = ()) -> dict[str, str]:
    change = story.group
    number = story.id.rsplit(":", 1)[-1] if ":" in story.id else story.id
    return {
        "story_id": story.id,
        "story_title": story.title,
        "story_path": story.path or "(no story file yet)",
        "epic_id": story.group,
        "epic_title": story.group_title or story.group,
        "epic_label": epic_label(story.group, story.group_title),
        "change": change,
        "change_dir": (story.change_dir or f"openspec/changes/{change}").rstrip("/"),
        "story_number": number,
        "tasks": _tasks_text(story, injected),
        "change_docs": _change_docs(story, injected),
        "record_path": story.record_path or "(no story file yet)",
        "story_file_line": (
            f"Tasks: group {number} of `{story.path}`. Records: `{story.record_path}`."
            if story.source == "openspec"
            else f"Story file: `{story.path or '(no story file yet)'}`."
        ),
    }


def story_prompt(
    story: Story,
    *,
    verify_commands: Sequence[str] = (),
    learnings: Learnings | None = None,
    retry_reason: str | None = None,
    templates: TemplateSet = BUNDLED,
    injected: Collection[str] = (),
) -> str:
    """The seed-003 story prompt for ``story`` (OpenSpec, or the BMAD equivalent).

    Args:
        story: the story to work on.
        verify_commands: the verification commands (``config.verify_commands``).
        learnings: the shared learnings; a section only when it has entries.
        retry_reason: the previous attempt's FAILED / BLOCKED reason; a retry section only
            when given and not blank.
        templates: where the templates come from.
        injected: root-relative paths of the files in the injection: what is injected is
            pointed to rather than copied, so each fact is said once.

    Raises:
        ComposeError: a template is missing or names an unknown placeholder.
    """
    openspec = story.source == "openspec"
    values = _story_values(story, injected)
    values["verification"] = verification_text(verify_commands)
    if openspec:
        values["scenarios"] = _scenarios_text(story, injected)
    else:
        values["scenarios"] = render_scenarios(story) or (
            f"The acceptance criteria are in the story file `{values['story_path']}`, in the "
            "injected files. Check your work against every one of them."
        )
    kind = "openspec" if openspec else "bmad"
    values["completion"] = render(templates.get(f"story-completion-{kind}.md"), values)

    reason = _clean_reason(retry_reason)
    values["retry_section"] = ""
    if reason is not None:
        values["retry_reason"] = _quoted(reason)
        values["retry_section"] = render(templates.get("story-retry.md"), values)

    values["learnings_section"] = ""
    if learnings is not None and learnings.has_entries:
        values["learnings_path"] = learnings.path
        values["learnings"] = learnings.entries
        values["learnings_section"] = render(templates.get("story-learnings.md"), values)
    elif learnings is not None and learnings.status in ("ok", "missing"):
        # No Shared Learnings section yet (seed 003), but the agent is told where to record,
        # or the file would never hold more than its template.
        values["learnings_path"] = learnings.path
        values["learnings_section"] = render(templates.get("story-learnings-record.md"), values)
    return render(templates.get(f"story-{kind}.md"), values)


def story_brief(
    story: Story, *, templates: TemplateSet = BUNDLED, injected: Collection[str] = ()
) -> str:
    """The story's context for the phases other than dev: id, title, file, tasks, and for an
    OpenSpec story the change and its scenarios — without the dev instructions. What is in
    ``injected`` is pointed to rather than copied."""
    values = _story_values(story, injected)
    values["change_section"] = ""
    if story.source == "openspec":
        values["scenarios"] = _scenarios_text(story, injected)
        values["change_section"] = render(templates.get("story-brief-change.md"), values)
    return render(templates.get("story-brief.md"), values)


def epic_brief(
    epic_id: str,
    epic_title: str,
    stories: Sequence[Story],
    *,
    templates: TemplateSet = BUNDLED,
) -> str:
    """The epic's context for UAT and retro: every story with its status and file."""
    listed = "\n".join(
        f"- {story.id}: {story.title} ({story.status})"
        + (f" — `{story.path}`" if story.path else " — no story file")
        for story in stories
    )
    label = epic_label(epic_id, epic_title)
    values = {
        "epic_id": epic_id,
        "epic_title": epic_title,
        "epic_heading": label[:1].upper() + label[1:],
        "story_count": str(len(stories)),
        "story_list": listed or "(no stories)",
    }
    return render(templates.get("epic-brief.md"), values)
