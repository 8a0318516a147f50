"""The epic forecast: every story of an epic, every phase of its sequence, measured and priced.

The preflight before an epic is handed to an unattended loop. Each row is one story × phase,
composed exactly as ``inspect`` composes it (so a row's bytes and tokens are that ``inspect``'s),
with the flags that stop or slow a run — the injection over its warning or error line, a
system prompt over the argv limit — the prefix the phase's system prompt shares with the
previous phase's, its predicted cost (:mod:`.prediction`), and the files the story's
``context:`` frontmatter asks for that are not in the project. The totals are the sums of the
rows; a story that cannot be composed is listed with its reason and counts in no total.

An epic is forecast as it will be run: each story's own phases for every story not yet done
(every story with ``all_stories``), and the epic-level phases (UAT, retro: a phase whose scope
is the epic) once, composed for the epic's last story. A row whose injection is over its
error line is too large to send — a run refuses it — so it is marked and left out of the
totals, which say how many rows they leave out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from ..errors import PromptdeckError, StoryNotFound
from ..injection.model import Selection
from ..lean_dataclass import dataclass
from ..phases.table import get_phase
from ..plans.catalog import load_catalog
from ..project.textfiles import TextProblem, read_text_head, resolve_inside, stat_regular
from ..project.workspace import Workspace
from ..prompt.request import ComposedPrompt
from ..stories.model import Story
from ..tokens import ARGV_LIMIT_BYTES
from ..tokens.counter import TokenCounter, get_counter
from ..tokens.pricing import ModelPrice, load_prices
from .prediction import SCOPE, PhaseCost, forecast_basis, forecast_prompts
from .prefix import DEFAULT_SEQUENCE, compose_sequence, measure_prompts

FRONTMATTER_BYTES = 16 * 1024
"""How much of a story file is read for its frontmatter: far more than a real one holds."""

_PROJECT_ROOT = "{project-root}/"
_KEY = re.compile(r"^([A-Za-z_][\w-]*):(.*)$")


def context_paths(text: str) -> tuple[str, ...]:
    """The ``context:`` list of a story file's YAML frontmatter, root-relative.

    BMAD's build specs name the files they want loaded as ``{project-root}/…`` paths, as a
    block list (``- path``) or a flow list (``[a, b]``); the prefix is dropped. No frontmatter,
    or no ``context:`` key, is an empty tuple.
    """
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return ()
    paths: list[str] = []
    inside = False
    for line in lines[1:]:
        if line.strip() in ("---", "..."):
            break
        key = _KEY.match(line)
        if key is not None:
            inside = key.group(1) == "context"
            value = key.group(2).strip()
            if inside and value.startswith("[") and value.endswith("]"):
                paths.extend(value[1:-1].split(","))
                inside = False
            continue
        item = line.strip()
        if inside and item.startswith("- "):
            paths.append(item[2:])
    cleaned = (path.strip().strip("'\"").strip() for path in paths)
    return tuple(path.removeprefix(_PROJECT_ROOT).lstrip("/") for path in cleaned if path)


def missing_context(workspace: Workspace, story: Story) -> tuple[str, ...]:
    """The ``context:`` files of ``story`` that are not a regular file inside the project.

    The story file is read through the guarded reader (its head only); an unreadable story
    file has no ``context:`` list.
    """
    if story.path is None:
        return ()
    head = read_text_head(workspace.root / story.path, FRONTMATTER_BYTES, root=workspace.root)
    if isinstance(head, TextProblem):
        return ()
    missing: list[str] = []
    for path in context_paths(head[0]):
        where = resolve_inside(workspace.root / path, workspace.root)
        if isinstance(where, TextProblem) or isinstance(
            stat_regular(where, workspace.root), TextProblem
        ):
            missing.append(path)
    return tuple(missing)


@dataclass(frozen=True)
class PlanRow:
    """One story × phase of the forecast.

    Attributes:
        story_id: the story.
        phase: the phase.
        system_bytes: the composed system prompt, bytes.
        system_tokens: and tokens (None when not counted).
        user_bytes: the user message, bytes.
        user_tokens: and tokens.
        injection_bytes: the injection as its thresholds measure it.
        level: the injection against its lines: ``ok``, ``warning`` or ``error``.
        over_argv: the system prompt is over the argv limit (one argument).
        shared_prefix_bytes: the prefix shared with the previous phase's system prompt (0 for
            the first phase).
        shared_prefix_tokens: that prefix in tokens.
        cost: the predicted cost.
        missing_context: the story's ``context:`` files that are not in the project.
        scope: ``story``, or ``epic`` for a phase run once for the whole epic.
    """

    story_id: str
    phase: str
    system_bytes: int
    system_tokens: int | None
    user_bytes: int
    user_tokens: int | None
    injection_bytes: int
    level: str
    over_argv: bool
    shared_prefix_bytes: int
    shared_prefix_tokens: int | None
    cost: PhaseCost
    missing_context: tuple[str, ...] = ()
    scope: str = "story"

    @property
    def too_large(self) -> bool:
        """The injection is over its error line: a run refuses to send this prompt."""
        return self.level == "error"

    @property
    def flags(self) -> tuple[str, ...]:
        """What to look at before the run, one short word each."""
        found = []
        if self.too_large:
            found.append("too-large")
        elif self.level != "ok":
            found.append(f"injection-{self.level}")
        if self.over_argv:
            found.append("over-argv")
        if self.missing_context:
            found.append("missing-context")
        if self.cost.dollars is None:
            found.append("cost-unknown")
        return tuple(found)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``plan --json``)."""
        return {
            "story": self.story_id,
            "phase": self.phase,
            "scope": self.scope,
            "too_large": self.too_large,
            "system_bytes": self.system_bytes,
            "system_tokens": self.system_tokens,
            "user_bytes": self.user_bytes,
            "user_tokens": self.user_tokens,
            "injection_bytes": self.injection_bytes,
            "level": self.level,
            "over_argv": self.over_argv,
            "shared_prefix_bytes": self.shared_prefix_bytes,
            "shared_prefix_tokens": self.shared_prefix_tokens,
            "dollars": self.cost.dollars,
            "cost": self.cost.to_dict(),
            "missing_context": list(self.missing_context),
            "flags": list(self.flags),
        }


@dataclass(frozen=True)
class PlanTotals:
    """The sums of the forecast's rows that can be sent (tokens and dollars None when any
    such row's is unknown); ``left_out`` counts the rows too large to send."""

    system_bytes: int
    system_tokens: int | None
    user_bytes: int
    user_tokens: int | None
    shared_prefix_bytes: int
    dollars: float | None
    left_out: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "rows_left_out_too_large": self.left_out,
            "system_bytes": self.system_bytes,
            "system_tokens": self.system_tokens,
            "user_bytes": self.user_bytes,
            "user_tokens": self.user_tokens,
            "shared_prefix_bytes": self.shared_prefix_bytes,
            "dollars": self.dollars,
        }


def _sum(values: Sequence[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


@dataclass(frozen=True)
class EpicPlan:
    """The forecast of one epic (or OpenSpec change).

    Attributes:
        epic: the epic id or change name.
        model: the model priced.
        phases: the phase sequence each story is stepped through.
        encoding: the tokenizer of the counts.
        rows: one per story × phase, in story then phase order (epic-level phases once).
        failed: the stories that could not be composed, with why.
        problems: the price table's problems, one line each.
        model_source: where the model came from.
        done_left_out: the epic's done stories left out (none with ``all_stories``).
        price: the price row used, None when the model has none.
    """

    epic: str
    model: str
    phases: tuple[str, ...]
    encoding: str
    rows: tuple[PlanRow, ...]
    failed: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = field(default=())
    model_source: str = ""
    done_left_out: tuple[str, ...] = ()
    price: ModelPrice | None = None

    @property
    def basis(self) -> str:
        """What the plan's figures rest on (see :func:`~.prediction.forecast_basis`)."""
        costs = [row.cost for row in self.rows]
        return forecast_basis(self.model, self.model_source, self.price, costs)

    @property
    def totals(self) -> PlanTotals:
        """The sums of the rows that can be sent."""
        rows = [row for row in self.rows if not row.too_large]
        dollars = [row.cost.dollars for row in rows]
        return PlanTotals(
            system_bytes=sum(row.system_bytes for row in rows),
            system_tokens=_sum([row.system_tokens for row in rows]),
            user_bytes=sum(row.user_bytes for row in rows),
            user_tokens=_sum([row.user_tokens for row in rows]),
            shared_prefix_bytes=sum(row.shared_prefix_bytes for row in rows),
            dollars=None
            if any(value is None for value in dollars)
            else sum(value for value in dollars if value is not None),
            left_out=len(self.rows) - len(rows),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``plan --json``)."""
        return {
            "epic": self.epic,
            "model": self.model or None,
            "model_source": self.model_source or None,
            "scope": SCOPE,
            "basis": self.basis,
            "phases": list(self.phases),
            "done_left_out": list(self.done_left_out),
            "encoding": self.encoding,
            "estimate": (
                f"token counts are {self.encoding} counts, an estimate for "
                f"{self.model or 'the model'}"
            ),
            "rows": [row.to_dict() for row in self.rows],
            "failed": [{"story": story, "reason": reason} for story, reason in self.failed],
            "totals": self.totals.to_dict(),
            "problems": list(self.problems),
        }


def _row(
    prompt: ComposedPrompt,
    cost: PhaseCost,
    shared: tuple[int, int | None],
    missing: tuple[str, ...],
    scope: str = "story",
) -> PlanRow:
    injection = prompt.injection
    return PlanRow(
        story_id=prompt.story.id,
        phase=prompt.request.phase,
        system_bytes=prompt.system_meter.bytes,
        system_tokens=prompt.system_meter.tokens,
        user_bytes=prompt.user_meter.bytes,
        user_tokens=prompt.user_meter.tokens,
        injection_bytes=injection.size_bytes,
        level=injection.level,
        over_argv=prompt.system_meter.bytes > ARGV_LIMIT_BYTES,
        shared_prefix_bytes=shared[0],
        shared_prefix_tokens=shared[1],
        cost=cost,
        missing_context=missing,
        scope=scope,
    )


def plan_epic(
    workspace: Workspace,
    epic: str,
    model: str,
    *,
    phases: Sequence[str] = DEFAULT_SEQUENCE,
    selection: Selection | None = None,
    delivery: str | None = None,
    counter: TokenCounter | None = None,
    model_source: str = "",
    all_stories: bool = False,
) -> EpicPlan:
    """Compose, measure and price every story phase of every story of ``epic`` not yet done
    (every story with ``all_stories``), and its epic-level phases once.

    Raises:
        StoryNotFound: the epic has no stories.
        UsageError: an unknown phase.
    """
    counter = counter or get_counter(workspace.config.tokens_encoding)
    catalog = load_catalog(workspace)
    stories = catalog.in_group(epic)
    if not stories:
        groups = ", ".join(dict.fromkeys(s.group for s in catalog.stories)) or "none"
        raise StoryNotFound(f"no stories in epic '{epic}' (epics: {groups})")
    table = load_prices(workspace)
    price = table.find(model) if model else None
    minimum = price.min_cacheable_tokens if price is not None else None
    scopes = {name: get_phase(name).scope for name in phases}
    done = () if all_stories else tuple(s.id for s in stories if s.status == "done")
    stories = tuple(s for s in stories if s.id not in done)
    rows: list[PlanRow] = []
    failed: list[tuple[str, str]] = []
    for index, story in enumerate(stories):
        # Epic-level phases run once, after the epic's last story: composed for that story.
        last = index == len(stories) - 1
        sequence = [name for name in phases if last or scopes[name] != "epic"]
        if not sequence:
            continue
        try:
            prompts = compose_sequence(
                workspace,
                story.id,
                phases=sequence,
                selection=selection,
                delivery=delivery,
                counter=counter,
                # Read once for the epic: reading the plan again for each story made the
                # forecast's time grow with the square of the epic's size.
                catalog=catalog,
            )
        except PromptdeckError as exc:
            failed.append((story.id, str(exc)))
            continue
        meter = measure_prompts(prompts, counter, minimum, model)
        predicted = forecast_prompts(workspace, prompts, meter, model, table, model_source)
        missing = missing_context(workspace, story)
        for index, (prompt, cost) in enumerate(zip(prompts, predicted.phases, strict=True)):
            pair = meter.pairs[index - 1] if index else None
            shared = (
                (0, 0)
                if pair is None
                else (
                    pair.shared_prefix_bytes,
                    pair.shared_prefix_tokens,
                )
            )
            scope = scopes.get(prompt.request.phase, "story")
            rows.append(_row(prompt, cost, shared, missing, scope))
    return EpicPlan(
        epic=epic,
        model=model,
        phases=tuple(phases),
        encoding=counter.encoding,
        rows=tuple(rows),
        failed=tuple(failed),
        problems=table.problems,
        model_source=model_source,
        done_left_out=done,
        price=price,
    )
