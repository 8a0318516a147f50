"""Per-phase token budgets (seed 002: "configuration of max tokens per phase").

``[budget] <phase>`` caps the tokens of a phase's prompt — system prompt and user message, in
the configured encoding — besides the phase's timeout. The preview shows the budget next to the
meters; the run confirmation refuses a prompt over it (the CLI exits 9). 0 means no budget.
"""

from __future__ import annotations

from ..errors import OverBudget
from ..lean_dataclass import dataclass
from ..project.config import Config
from .request import ComposedPrompt


def phase_budget(config: Config, phase: str) -> int:
    """The token budget of ``phase`` (0: none)."""
    value = getattr(config, f"budget_{phase}", 0)
    return value if isinstance(value, int) else 0


@dataclass(frozen=True)
class BudgetCheck:
    """A prompt's tokens against its phase's budget.

    Attributes:
        phase: the phase.
        budget: its budget in tokens (0: none).
        tokens: the prompt's tokens (system + user), None when not counted.
        encoding: the encoding the tokens are counted in.
    """

    phase: str
    budget: int
    tokens: int | None
    encoding: str

    @property
    def over(self) -> bool:
        """True when a budget is set and the counted prompt passes it."""
        return bool(self.budget) and self.tokens is not None and self.tokens > self.budget

    def describe(self) -> str:
        """``budget 12,000 tok: 9,840 used (82 %)``, or that there is none."""
        if not self.budget:
            return f"no token budget for {self.phase} ([budget] {self.phase} = 0)"
        if self.tokens is None:
            return f"budget {self.budget:,} tok (not counted yet)"
        share = 100 * self.tokens / self.budget
        state = "OVER" if self.over else "within"
        return (
            f"budget {self.budget:,} tok: {self.tokens:,} {self.encoding} tok "
            f"({share:.0f} %, {state})"
        )

    def refusal(self) -> str:
        """Why the run is refused (only meaningful when :attr:`over`)."""
        assert self.tokens is not None
        return (
            f"the {self.phase} prompt is {self.tokens:,} {self.encoding} tokens, over its "
            f"budget of {self.budget:,} ([budget] {self.phase} in .promptdeck/config.toml)"
        )


def check_budget(prompt: ComposedPrompt, config: Config) -> BudgetCheck:
    """Measure ``prompt`` against its phase's budget (it must carry token counts to judge)."""
    system, user = prompt.system_meter.tokens, prompt.user_meter.tokens
    tokens = None if system is None or user is None else system + user
    return BudgetCheck(
        prompt.request.phase,
        phase_budget(config, prompt.request.phase),
        tokens,
        prompt.injection.encoding,
    )


def enforce_budget(prompt: ComposedPrompt, config: Config) -> BudgetCheck:
    """:func:`check_budget`, raising when the prompt is over.

    Raises:
        OverBudget: the prompt passes its phase's budget (exit 9).
    """
    check = check_budget(prompt, config)
    if check.over:
        raise OverBudget(check.refusal())
    return check
