"""The context window of each model a captured request names: one table, its sources beside it.

A capture's parts are shown as a share of the window of the model the client asked for (the
request's ``model``). The table is matched by the longest name prefix, so a dated or suffixed
name (``claude-sonnet-4-5-20250929``) finds its family; a name no row matches takes its
client's default (:data:`CLIENT_WINDOWS`).
"""

from __future__ import annotations

MODEL_WINDOWS: tuple[tuple[str, int], ...] = (
    # Anthropic, "Models overview" (docs.anthropic.com/en/docs/about-claude/models/overview):
    # every Claude 3, 3.5, 3.7, 4 and 4.x model has a 200K-token context window; Claude Code
    # names the 1M-token beta window with a "[1m]" suffix on the model (its /model picker).
    ("claude-", 200_000),
    # OpenAI models as the Codex CLI's bundled catalog lists them (`codex debug models`,
    # codex-cli 0.169.0, field "context_window"): the input window Codex itself fills and
    # reports as model_context_window in its rollout; OpenAI's model pages list the GPT-5
    # family at 400K tokens of which 128K are output, which leaves the same 272K of input.
    ("gpt-5", 272_000),
    ("gpt-6", 272_000),
    ("gpt-6.1-terra", 500_000),
    ("gpt-daybreak-red", 372_000),
    ("codex-", 272_000),
)
"""``(model name prefix, window in tokens)``; the longest matching prefix wins."""

LONG_CONTEXT_SUFFIX = "[1m]"
LONG_CONTEXT_WINDOW = 1_000_000
"""Claude's 1M-token window, named by :data:`LONG_CONTEXT_SUFFIX` on the model."""

CLIENT_WINDOWS = {"claude": 200_000, "codex": 272_000}
"""The window of a model the table does not know, per client (the configuration's defaults,
``agent.claude_context_window`` and ``agent.codex_context_window``)."""


def model_window(client: str, model: str) -> int:
    """The context window, in tokens, of ``model`` as ``client`` names it."""
    name = model.strip().lower()
    if name.endswith(LONG_CONTEXT_SUFFIX):
        return LONG_CONTEXT_WINDOW
    found = [(len(prefix), size) for prefix, size in MODEL_WINDOWS if name.startswith(prefix)]
    if found:
        return max(found)[1]
    return CLIENT_WINDOWS.get(client, CLIENT_WINDOWS["claude"])
