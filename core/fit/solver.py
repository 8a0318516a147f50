"""The minimal drop: the smallest set of files to leave out so a story's prompt fits a limit.

``inspect --fit 120KiB|30000t|80%`` and the app's fit key ask it; the run confirmation asks it
for the injection's error line when a run is refused. The answer:

- never names the story's own files, nor a file the user took in by hand (``--include``,
  ``space``) or asked to keep (``--keep``), nor a required layer; the files the story's plan
  asks to load (a spec's ``context:`` files, an epic's context, a v4 project's always-load
  files, the story's context companion) are not its own: they may be left out;
- respects priorities: discovery and tech-spec files go first, then the project context and
  the files the plan asks to load, then files added by hand, and last the workspace rules
  layer (Layer-0B, the only optional layer; ``--keep 0B`` keeps it); a higher tier is
  proposed only when the lower tiers alone cannot make the prompt fit. The rules layer is not
  part of the injection, so it is never proposed against the injection's error line;
- is minimal: no proper subset of it also fits. Sizes only shrink when a file is left out, so
  it is enough that putting back any single file breaks the fit, and that is checked by
  composing each of those sets;
- is the smallest such set when it can be proved: by exact search over every subset when the
  candidates are few (:data:`EXACT_LIMIT`), or — for one byte limit, where sizes add exactly —
  by taking the largest files first, which no set of fewer files can beat. An answer found
  among the lower-priority files only is checked against every file it may leave out; when a
  set of fewer files exists beyond the priorities, or that was not searched, it says how far
  it looked and is not called smallest. Otherwise the answer is minimal and the report says
  it is not proved smallest;
- is what applying it gives: the size reported is the size of the prompt composed with those
  files left out, through the same call every face makes.

The search works on each file's exact share of the prompt (its ``<file>`` element: header,
content and closing tag); the composing check makes the answer exact in tokens as well.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

from ..injection.choices import TAKEN_IN_REASON
from ..injection.model import (
    INCLUDED,
    LISTED_COMPANIONS,
    PLAN_CONTEXT_WHYS,
    TOO_LARGE,
    envelope_pieces,
)
from ..lean_dataclass import dataclass
from ..project.workspace import Workspace
from ..prompt.budget import phase_budget
from ..prompt.compose import compose_prompt
from ..prompt.request import ComposedPrompt, PromptRequest
from ..tokens.counter import TokenCounter
from ..units import human_bytes, human_tokens
from ..vocabulary import RULES_LAYER, optional_layer
from .target import FitTarget, Unit, agent_window, parse_target

EXACT_LIMIT = 16
"""Up to this many candidate files, every subset is searched: the answer is proved smallest."""

TIERS: dict[str, int] = {
    "discovery": 0,
    "tech-spec": 0,
    **dict.fromkeys(LISTED_COMPANIONS, 0),
    "project-context": 1,
    "always-load": 1,
    "context": 1,
    "additional": 2,
}
"""The order files are given up in: a lower tier first. The story's own files never; the
files its plan asks to load (``story`` rows of :data:`PLAN_CONTEXT_WHYS`) with the context."""
PLAN_CONTEXT_TIER = TIERS["context"]
LAYER_TIER = 3
"""The workspace rules layer's tier: given up only when no set of files makes it fit."""
LAYER_CATEGORY = "layer"


@dataclass(frozen=True)
class Droppable:
    """A file the solver may leave out, and its exact share of the prompt.

    Attributes:
        path: root-relative, as the injection lists it.
        category: its injection category.
        tier: the order it is given up in (:data:`TIERS`).
        bytes: the bytes of its ``<file>`` element (the prompt shrinks by exactly this).
        tokens: the tokens of its content (an estimate of its share; None when unread).
        unread: True when the file was not read (past the error line): its bytes come from
            ``stat``, which is the number of bytes it would send.
        layer: True for the workspace rules layer (``path`` is its id): its bytes are the
            system prompt's, none of them the injection's.
        plan_context: True for a file the story's plan asks to load that is listed with the
            story's own (a spec's ``context:`` file): ``--leave-out`` leaves it out.
    """

    path: str
    category: str
    tier: int
    bytes: int
    tokens: int | None
    unread: bool = False
    layer: bool = False
    plan_context: bool = False

    @property
    def flag(self) -> str:
        """The option that leaves it out: ``--exclude PATH``, ``--leave-out PATH`` (a file
        the plan asks to load), or ``--exclude-layer 0B``."""
        if self.layer:
            return f"--exclude-layer {self.path.removeprefix('Layer-')}"
        if self.plan_context:
            return f"--leave-out {self.path}"
        return f"--exclude {self.path}"

    @property
    def injection_bytes(self) -> int:
        """What leaving it out takes off the injection (its error line's measure)."""
        return 0 if self.layer else self.bytes


@dataclass(frozen=True)
class FitAnswer:
    """What the solver found.

    Attributes:
        target: the limit.
        size_before: the prompt's size now, in the target's unit (unread files counted).
        size_after: the size of the prompt composed with :attr:`drop` left out; None when no
            drop makes it fit.
        drop: the files to leave out, largest first (empty when it already fits).
        fits: True when the prompt fits after the drop.
        proof: how the answer is known to be minimal, in words.
        smallest: True when no set of fewer files fits either (proved).
        reason: why nothing fits, when nothing does.
        kept: the files never proposed, with why (story files, your own choices).
    """

    target: FitTarget
    size_before: int
    size_after: int | None
    drop: tuple[Droppable, ...]
    fits: bool
    proof: str
    smallest: bool
    reason: str = ""
    kept: tuple[tuple[str, str], ...] = ()

    def lines(self) -> list[str]:
        """The answer as the CLI and the app word it."""
        show = _shower(self.target.unit)
        head = f"fit {self.target.describe()}: the prompt is {show(self.size_before)} now"
        if not self.fits:
            return [f"{head}; {self.reason}"]
        if not self.drop:
            return [f"{head}: it fits, nothing to leave out"]
        assert self.size_after is not None
        what = (
            f"{len(self.drop)} file(s)"
            if not any(d.layer for d in self.drop)
            else (
                f"{len(self.drop) - 1} file(s) and the workspace rules"
                if len(self.drop) > 1
                else "the workspace rules"
            )
        )
        lines = [f"{head}; leave out {what} and it is {show(self.size_after)}:"]
        lines.extend(f"  {item.flag}  ({_described(item)})" for item in self.drop)
        lines.append(f"  {self.proof}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The ``inspect --fit --json`` shape."""
        return {
            "target": {"limit": self.target.limit, "unit": self.target.unit},
            "size_before": self.size_before,
            "size_after": self.size_after,
            "fits": self.fits,
            "drop": [
                {
                    "path": d.path,
                    "category": d.category,
                    "bytes": d.bytes,
                    "tokens": d.tokens,
                    "option": d.flag,
                }
                for d in self.drop
            ],
            "smallest": self.smallest,
            "proof": self.proof,
            "reason": self.reason or None,
            "kept": [{"path": path, "why": why} for path, why in self.kept],
        }


def _described(item: Droppable) -> str:
    if item.layer:
        return f"{item.path}, the workspace rules, {human_bytes(item.bytes)}"
    return human_bytes(item.bytes)


def _shower(unit: Unit) -> Callable[[int], str]:
    if unit == "bytes":
        return lambda size: f"{human_bytes(size)} ({size:,} bytes)"
    return lambda size: f"{human_tokens(size)} ({size:,} tokens)"


def element_bytes(path: str, content_bytes: int) -> int:
    """The bytes one file adds to the envelope: its header, its content and its closing tag."""
    one = "".join(envelope_pieces([(path, "")]))
    none = "".join(envelope_pieces([]))
    return len(one.encode("utf-8")) - len(none.encode("utf-8")) + content_bytes


def droppables(
    prompt: ComposedPrompt, keep: Iterable[str] = ()
) -> tuple[list[Droppable], list[tuple[str, str]]]:
    """The files of ``prompt`` the solver may leave out, and those it never will (with why)."""
    kept_by_user = set(keep)
    found: list[Droppable] = []
    kept: list[tuple[str, str]] = []
    for item in prompt.injection.files:
        if item.status not in (INCLUDED, TOO_LARGE):
            continue
        plan_context = item.category == "story" and item.why in PLAN_CONTEXT_WHYS
        if item.category == "story" and not plan_context:
            kept.append((item.path, "the story's own file"))
            continue
        if item.reason == TAKEN_IN_REASON or item.path in kept_by_user:
            kept.append((item.path, "you chose to keep it"))
            continue
        found.append(
            Droppable(
                item.path,
                item.category,
                PLAN_CONTEXT_TIER if plan_context else TIERS.get(item.category, 2),
                element_bytes(item.path, item.bytes),
                item.tokens,
                unread=item.status == TOO_LARGE,
                plan_context=plan_context,
            )
        )
    return found, kept


Measure = Callable[[tuple[str, ...]], tuple[int, bool]]
"""Composes the prompt with these paths left out: its size in the target's unit, and whether
the injection is under its error line."""


def rules_droppable(
    prompt: ComposedPrompt, target: FitTarget, measure: Measure, keep: Iterable[str] = ()
) -> tuple[Droppable | None, tuple[str, str] | None]:
    """The workspace rules layer as the last thing the solver may leave out, its share of
    the prompt measured by composing without it; or why it is not offered (kept by the user).

    None when the layer is empty (missing, or already left out), or when the target is the
    injection's error line, which the layer does not count toward.
    """
    layer = next((item for item in prompt.layers if item.layer_id == RULES_LAYER), None)
    if layer is None or layer.missing or target.scope != "prompt":
        return None, None
    if any(optional_layer(name) == RULES_LAYER for name in keep):
        return None, (RULES_LAYER, "you chose to keep it")
    base, _ = measure(())
    without, _ = measure((RULES_LAYER,))
    share = max(base - without, 0)
    if target.unit == "bytes":
        return Droppable(
            RULES_LAYER, LAYER_CATEGORY, LAYER_TIER, share, layer.tokens, layer=True
        ), None
    return Droppable(RULES_LAYER, LAYER_CATEGORY, LAYER_TIER, layer.bytes, share, layer=True), None


def error_line_target(prompt: ComposedPrompt) -> FitTarget:
    """The injection's error line as a target: what a refused run has to get under."""
    line = prompt.injection.error_bytes
    return FitTarget(line, "bytes", f"the {human_bytes(line)} error line", "injection")


def prompt_size(prompt: ComposedPrompt, unit: Unit, scope: str = "prompt") -> int:
    """The prompt's size as sent (system prompt and user message), unread files included;
    with ``scope="injection"``, the injection's size as its lines compare it."""
    if scope == "injection":
        return prompt.injection.size_bytes
    unread = [f for f in prompt.injection.files if f.status == TOO_LARGE]
    if unit == "bytes":
        extra = sum(element_bytes(f.path, f.bytes) for f in unread)
        return prompt.system_meter.bytes + prompt.user_meter.bytes + extra
    system, user = prompt.system_meter.tokens or 0, prompt.user_meter.tokens or 0
    return system + user + sum(math.ceil(f.bytes / 4) for f in unread)


def solve(
    prompt: ComposedPrompt,
    target: FitTarget,
    measure: Measure,
    *,
    keep: Iterable[str] = (),
) -> FitAnswer:
    """The smallest set of files to leave out of ``prompt`` so it fits ``target``.

    ``measure`` composes a candidate answer (see :func:`composed_measure`); it is called to
    check the answer and its minimality, so the size reported is the size applying it gives.
    """
    items, kept = droppables(prompt, keep)
    before = prompt_size(prompt, target.unit, target.scope)
    base_size, base_ok = measure(())
    if base_size <= target.limit and base_ok:
        return FitAnswer(target, before, base_size, (), True, "", True, kept=tuple(kept))
    rules, rules_kept = rules_droppable(prompt, target, measure, keep)
    if rules is not None:
        items.append(rules)
    if rules_kept is not None:
        kept.append(rules_kept)
    over_error = max(0, prompt.injection.size_bytes - prompt.injection.error_bytes)
    found = minimal_drop(items, before, target, measure, over_error)
    if found is not None:
        drop, size, smallest, proof = found
        return FitAnswer(target, before, size, drop, True, proof, smallest, kept=tuple(kept))
    reason = (
        "no set of files it may leave out makes it fit: the story's own files, your kept "
        "files and the required layers are already "
        + _shower(target.unit)(max(0, before - sum(_cost(i, target.unit) for i in items)))
    )
    return FitAnswer(target, before, None, (), False, "", False, reason, tuple(kept))


def minimal_drop(
    items: Sequence[Droppable],
    before: int,
    target: FitTarget,
    measure: Measure,
    over_error: int = 0,
) -> tuple[tuple[Droppable, ...], int, bool, str] | None:
    """The files of ``items`` to leave out so a prompt of size ``before`` fits ``target``.

    Lower tiers are given up first: a higher tier is searched only when the lower ones cannot
    make it fit. ``over_error`` is how many injection bytes must go besides (the error line).

    Returns:
        The files (largest first), the size ``measure`` gives with them left out, whether
        they are proved the fewest, and the proof in words; None when nothing fits.
    """
    size, ok = measure(())
    if size <= target.limit and ok:
        return (), size, True, "it fits as it is"
    tiers = sorted({item.tier for item in items})
    for ceiling in tiers:
        pool = [item for item in items if item.tier <= ceiling]
        found = _search(pool, before - target.limit, over_error, target.unit)
        if found is None:
            continue
        chosen, proved = found
        reach = Reach(len(pool), len(pool) == len(items))
        if proved and not reach.whole:
            # Found among the lower-priority files: the fewest overall only if no set of
            # fewer files fits when every file it may leave out is counted.
            overall = _search(items, before - target.limit, over_error, target.unit)
            fewest = overall is not None and overall[1] and len(overall[0]) >= len(chosen)
            reach = Reach(len(items) if fewest else len(pool), fewest)
        answer = _checked(chosen, pool, target, measure, proved, reach)
        if answer is not None:
            drop, size, smallest, proof = answer
            if ceiling < tiers[-1]:
                names = sorted({i.category for i in pool})
                proof += f"; only {', '.join(names)} files were needed (your priorities)"
            return drop, size, smallest, proof
    return None


def _cost(item: Droppable, unit: Unit) -> int:
    if unit == "bytes":
        return item.bytes
    if item.tokens is not None:
        return item.tokens
    return math.ceil(item.bytes / 4)


def _rank(items: Sequence[Droppable], unit: Unit) -> tuple[int, int, int, tuple[str, ...]]:
    # Fewest files; then the lowest tiers; then the least given up; then by name.
    return (
        len(items),
        sum(item.tier for item in items),
        sum(_cost(item, unit) for item in items),
        tuple(sorted(item.path for item in items)),
    )


def _search(
    pool: Sequence[Droppable], need: int, need_bytes: int, unit: Unit
) -> tuple[list[Droppable], bool] | None:
    """A set of ``pool`` whose costs reach ``need`` (and ``need_bytes`` of injection bytes).

    Returns the set and whether it is proved to be of the fewest files.
    """

    def enough(chosen: Sequence[Droppable]) -> bool:
        return (
            sum(_cost(i, unit) for i in chosen) >= need
            and sum(i.injection_bytes for i in chosen) >= need_bytes
        )

    if not enough(pool):
        return None
    if len(pool) <= EXACT_LIMIT:
        for size in range(len(pool) + 1):
            fitting = [list(c) for c in combinations(pool, size) if enough(c)]
            if fitting:
                return min(fitting, key=lambda c: _rank(c, unit)), True
        return None
    # Largest first, in the unit of the limit; for one limit in bytes that is the fewest files
    # (the k largest files give up the most any k files can).
    ordered = sorted(pool, key=lambda i: (-_cost(i, unit), i.tier, i.path))
    chosen: list[Droppable] = []
    for item in ordered:
        if enough(chosen):
            break
        chosen.append(item)
    # One additive limit (bytes; the error line is in bytes too): largest first is fewest.
    return _pruned(chosen, enough), unit == "bytes"


def _pruned(
    chosen: list[Droppable], enough: Callable[[Sequence[Droppable]], bool]
) -> list[Droppable]:
    # Put back every file the rest can do without, smallest first: what is left is minimal.
    kept = list(chosen)
    for item in sorted(chosen, key=lambda i: (i.bytes, i.path)):
        rest = [other for other in kept if other is not item]
        if enough(rest):
            kept = rest
    return kept


@dataclass(frozen=True)
class Reach:
    """How far the search for the fewest files looked.

    Attributes:
        searched: how many files the search for the fewest went over.
        whole: they were every file the answer may leave out (else only the lower-priority
            ones, and a set of fewer files may exist among the rest).
    """

    searched: int
    whole: bool


def _checked(
    chosen: list[Droppable],
    pool: Sequence[Droppable],
    target: FitTarget,
    measure: Measure,
    proved: bool,
    reach: Reach,
) -> tuple[tuple[Droppable, ...], int, bool, str] | None:
    """Compose the answer and each set with one file put back; grow or shrink until it holds."""
    chosen = list(chosen)
    exact = proved
    for _ in range(len(pool) + 1):
        size, ok = measure(tuple(item.path for item in chosen))
        if not (size <= target.limit and ok):
            # The estimate was short (tokens do not add exactly): give up the next largest.
            rest = [i for i in pool if i not in chosen]
            if not rest:
                return None
            chosen.append(max(rest, key=lambda i: (_cost(i, target.unit), -i.tier)))
            exact = False
            continue
        smaller = _smaller_fit(chosen, target, measure)
        if smaller is not None:
            chosen, exact = smaller, False
            continue
        drop = tuple(sorted(chosen, key=lambda i: (-i.bytes, i.path)))
        checked = (
            "checked by composing: putting back any one of them breaks the fit "
            f"({len(drop)} composes)"
        )
        if exact and target.unit == "bytes" and not reach.whole:
            return (
                drop,
                size,
                False,
                (
                    f"minimal: {checked}; fewest among the {reach.searched} lower-priority "
                    "file(s) searched, not proved smallest: fewer files of higher priority "
                    "would fit too"
                ),
            )
        if exact and target.unit == "bytes":
            how = (
                f"every subset of the {reach.searched} file(s) was searched"
                if reach.searched <= EXACT_LIMIT
                else (
                    f"the largest of the {reach.searched} file(s) were taken first, which no "
                    "fewer files can beat"
                )
            )
            return drop, size, True, f"smallest: {how}; minimal: {checked}"
        if exact:
            # Tokens do not add exactly across files: fewest by each file's own count only.
            return (
                drop,
                size,
                False,
                (
                    f"minimal: {checked}; fewest files by each file's own token count "
                    "(tokens do not add exactly across files)"
                ),
            )
        return drop, size, False, f"minimal: {checked}; not proved smallest"
    return None


def _smaller_fit(
    chosen: list[Droppable], target: FitTarget, measure: Measure
) -> list[Droppable] | None:
    for item in chosen:
        rest = [other for other in chosen if other is not item]
        size, ok = measure(tuple(other.path for other in rest))
        if size <= target.limit and ok:
            return rest
    return None


def composed_measure(
    compose: Callable[[PromptRequest], ComposedPrompt], request: PromptRequest, target: FitTarget
) -> Measure:
    """A :data:`Measure` that composes ``request`` with the paths added to its exclusions
    (and to the files it leaves out, which is how a file the plan asks to load goes)."""
    seen: dict[tuple[str, ...], tuple[int, bool]] = {}

    def measure(paths: tuple[str, ...]) -> tuple[int, bool]:
        key = tuple(sorted(paths))
        if key not in seen:
            layers = tuple(p for p in key if p == RULES_LAYER)
            files = tuple(p for p in key if p != RULES_LAYER)
            excluded = tuple(dict.fromkeys((*request.selection.excluded, *files)))
            dropped = tuple(dict.fromkeys((*request.selection.left_out, *files)))
            left_out = tuple(dict.fromkeys((*request.selection.left_out_layers, *layers)))
            selection = replace(
                request.selection, excluded=excluded, left_out=dropped, left_out_layers=left_out
            )
            prompt = compose(replace(request, selection=selection))
            size = prompt_size(prompt, target.unit, target.scope)
            seen[key] = (size, prompt.injection.level != "error")
        return seen[key]

    return measure


def default_fit(
    workspace: Workspace,
    prompt: ComposedPrompt,
    counter: TokenCounter | None = None,
    captured_window: int | None = None,
) -> FitAnswer:
    """The app's fit key: against the phase's token budget when one is set, else the
    injection's error line when it is over it, else the default agent's whole window (the
    window a kept capture of the client reported, ``captured_window``, when given).

    Blocking (composes the prompt again for each check): call it from a worker thread.
    """
    budget = phase_budget(workspace.config, prompt.request.phase)
    if budget:
        target = FitTarget(budget, "tokens", f"[budget] {prompt.request.phase}")
    elif prompt.injection.level == "error":
        target = error_line_target(prompt)
    else:
        target = parse_target("100%", agent_window(workspace.config, captured_window))
    counted = target.unit == "tokens"
    if counted and not prompt.counted:
        prompt = compose_prompt(workspace, None, prompt.request, counter=counter)

    def compose(request: PromptRequest) -> ComposedPrompt:
        return compose_prompt(
            workspace, None, request, counter=counter, count_tokens=counted, scan_secrets=False
        )

    return solve(prompt, target, composed_measure(compose, prompt.request, target))
