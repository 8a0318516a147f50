"""The price table and the predicted cost: figures from the dated data file, bad rows as one
line and an unknown cost, never a guess."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from _prompt_workspace import make_workspace
from promptdeck.core.cost.prediction import DEFAULT_OUTPUT_TOKENS, forecast, money, price_prompt
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.tokens.pricing import BUNDLED_PRICES, load_prices, parse_prices

SONNET = "claude-sonnet-4-6"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = make_workspace(tmp_path, {"AGENTS.md": "# Rules\n\n- Keep it small.\n"})
    return Workspace(root=root.resolve(), config=Config())


def test_every_bundled_row_is_dated_sourced_and_usable() -> None:
    rows, problems = parse_prices(BUNDLED_PRICES.read_text(encoding="utf-8"), "(bundled)")
    assert problems == []
    assert {row.model for row in rows} >= {SONNET, "claude-opus-4-6", "gpt-5.5"}
    for row in rows:
        assert row.checked[:4].isdigit() and row.source.startswith(("https://", "list price"))
        assert row.cache_read < row.input <= row.cache_write_5m <= row.cache_write_1h


def test_a_dated_snapshot_id_finds_its_model() -> None:
    table = load_prices()
    price = table.find("claude-sonnet-4-6-20260101")
    assert price is not None and price.model == SONNET
    assert table.find("claude-sonnet-4-60") is None
    assert table.find("no-such-model") is None


def test_a_negative_price_is_one_line_and_the_model_cost_unknown(workspace: Workspace) -> None:
    (workspace.root / "prices.toml").write_text(
        f'[[model]]\nid = "{SONNET}"\ninput = -3.0\noutput = 15.0\ncache_write_5m = 3.75\n'
        "cache_write_1h = 6.0\ncache_read = 0.3\n",
        encoding="utf-8",
    )
    own = replace(workspace, config=Config(pricing_file="prices.toml"))
    table = load_prices(own)
    assert [p for p in table.problems if SONNET in p] == [
        f"price table prices.toml: model {SONNET}: input is not a non-negative number; "
        "its cost is unknown"
    ]
    assert table.find(SONNET) is None
    # Nothing else stops: the sequence is still measured and every other figure is there.
    meter, predicted = forecast(own, "1-2", SONNET, phases=("kickoff", "dev"))
    assert meter.pairs and predicted.total is None
    assert all(
        phase.dollars is None and "is not a non-negative" in phase.unknown
        for phase in predicted.phases
    )
    assert money(predicted.total) == "unknown"


def test_a_missing_model_is_unknown_and_says_so(workspace: Workspace) -> None:
    _, predicted = forecast(workspace, "1-2", "claude-nonesuch-9", phases=("dev",))
    assert predicted.phases[0].dollars is None
    assert predicted.phases[0].unknown == "price unknown for claude-nonesuch-9"


def test_a_project_table_adds_a_model(workspace: Workspace) -> None:
    (workspace.root / "prices.toml").write_text(
        '[[model]]\nid = "house-model"\ninput = 2.0\noutput = 8.0\ncache_write_5m = 2.5\n'
        "cache_write_1h = 4.0\ncache_read = 0.2\nmin_cacheable_tokens = 10\n"
        'checked = "2026-11-01"\n'
        'source = "our contract"\n',
        encoding="utf-8",
    )
    own = replace(workspace, config=Config(pricing_file="prices.toml"))
    price = load_prices(own).find("house-model")
    assert price is not None and price.source == "our contract" and price.input == 2.0


def test_malformed_toml_is_one_line_and_the_bundled_prices_stay(workspace: Workspace) -> None:
    (workspace.root / "prices.toml").write_text("[[model]\nid = ", encoding="utf-8")
    own = replace(workspace, config=Config(pricing_file="prices.toml"))
    table = load_prices(own)
    assert len(table.problems) == 1 and "not valid TOML" in table.problems[0]
    assert table.find(SONNET) is not None


def test_pricing_a_prompt_by_hand() -> None:
    price = load_prices().find(SONNET)
    assert price is not None
    cost = price_prompt(
        "review",
        SONNET,
        price,
        ttl="5m",
        system_tokens=50_000,
        user_tokens=1_000,
        shared_tokens=48_000,
        output=(2_000, "default"),
    )
    assert (cost.cache_read_tokens, cost.cache_write_tokens, cost.input_tokens) == (
        48_000,
        2_000,
        1_000,
    )
    expected = (1_000 * 3.0 + 2_000 * 3.75 + 48_000 * 0.30 + 2_000 * 15.0) / 1e6
    assert cost.dollars == pytest.approx(expected)
    hour = price_prompt(
        "dev",
        SONNET,
        price,
        ttl="1h",
        system_tokens=50_000,
        user_tokens=0,
        shared_tokens=0,
        output=(0, "default"),
    )
    assert hour.dollars == pytest.approx(50_000 * 6.0 / 1e6)


def test_below_the_minimum_nothing_is_cached() -> None:
    price = load_prices().find("claude-opus-4-6")
    assert price is not None and price.min_cacheable_tokens == 4096
    cost = price_prompt(
        "dev",
        price.model,
        price,
        ttl="5m",
        system_tokens=3_000,
        user_tokens=10,
        shared_tokens=3_000,
        output=(0, "default"),
    )
    assert (cost.cache_write_tokens, cost.cache_read_tokens, cost.input_tokens) == (0, 0, 3_010)


def test_cache_aware_delivery_predicts_reads_after_the_first_phase(workspace: Workspace) -> None:
    big = "\n".join(f"Background line {n} for the cache." for n in range(900))
    # A file no phase writes (the story file is written, so it is not in the shared block).
    (workspace.root / "_bmad-output/planning-artifacts/sprint-project-context.md").open(
        "a", encoding="utf-8"
    ).write("\n" + big + "\n")
    _, layered = forecast(workspace, "1-2", SONNET, phases=("dev", "review"), delivery="layered")
    meter, aware = forecast(
        workspace, "1-2", SONNET, phases=("dev", "review"), delivery="cache-aware"
    )
    assert aware.phases[1].cache_read_tokens == meter.pairs[0].shared_prefix_tokens > 4096
    assert aware.phases[1].cache_write_tokens == 0
    assert layered.phases[1].cache_read_tokens < aware.phases[1].cache_read_tokens
    assert aware.total is not None and layered.total is not None and aware.total < layered.total
    assert aware.phases[0].output_tokens == DEFAULT_OUTPUT_TOKENS
    assert aware.phases[0].output_source == "stated default 4,000 (no real run yet)"


def test_the_configured_output_size_wins(workspace: Workspace) -> None:
    own = replace(workspace, config=Config(pricing_output_tokens=123))
    _, predicted = forecast(own, "1-2", SONNET, phases=("dev",))
    assert predicted.phases[0].output_tokens == 123
    assert predicted.phases[0].output_source == "[pricing] output_tokens"
