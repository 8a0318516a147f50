"""A project's price table and its run records cannot make a cost infinite: a price that is
not a finite number from 0 to the ceiling is one line and left out, a recorded cost that is not
finite reads as unknown, and ``--json`` never prints ``Infinity`` or ``NaN`` (not JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile._read_helpers import assert_clean, make_cloned, run_cli
from promptdeck.core.cost.prediction import money
from promptdeck.core.records.usage import token_count
from promptdeck.core.tokens.pricing import PRICE_CEILING, parse_prices

ROW = (
    '[[model]]\nid = "claude-sonnet-4-6"\ninput = {input}\noutput = 15.0\n'
    "cache_write_5m = 3.75\ncache_write_1h = 6.0\ncache_read = 0.3\n"
)


def _strict(text: str) -> object:
    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("value", ["1e308", "inf", "nan", "-1.0", "10000.5", "1e400"])
def test_a_price_out_of_bounds_is_one_line_and_left_out(value: str) -> None:
    prices, problems = parse_prices(ROW.format(input=value), "prices.toml")
    assert prices == []
    assert len(problems) == 1 and "claude-sonnet-4-6: input" in problems[0]


def test_a_price_at_the_ceiling_is_kept() -> None:
    prices, problems = parse_prices(ROW.format(input=PRICE_CEILING), "prices.toml")
    assert problems == [] and prices[0].input == PRICE_CEILING


def test_a_figure_that_is_not_finite_reads_as_unknown() -> None:
    assert money(float("inf")) == money(float("nan")) == "unknown"
    assert token_count(10**400) is None


def test_inspect_cost_json_is_finite_with_a_huge_price(tmp_path: Path) -> None:
    hostile = make_cloned(
        tmp_path,
        {
            "prices.toml": ROW.format(input="1e308").replace("output = 15.0", "output = 1e308"),
            ".promptdeck/config.toml": '[pricing]\nfile = "prices.toml"\n',
        },
    )
    done = run_cli(hostile, ["inspect", "1-1", "--cost", "--json"])
    assert_clean(done, hostile, (0,))
    assert "Infinity" not in done.stdout and "NaN" not in done.stdout
    _strict(done.stdout)
    table = run_cli(hostile, ["inspect", "1-1", "--cost"])
    assert_clean(table, hostile, (0,))
    assert "$inf" not in table.stdout + table.stderr
    assert "prices.toml" in table.stderr  # the row's problem is said, in one line


def test_runs_json_is_finite_with_a_hostile_record(tmp_path: Path) -> None:
    run = ".promptdeck/runs/20250102-030405-123456-dev-1-1-a1b2c3"
    meta = {"story": "1-1", "phase": "dev", "attempt": 1, "mode": "fresh", "agent": "command"}
    hostile = make_cloned(
        tmp_path,
        {
            f"{run}/meta.json": json.dumps(meta),
            f"{run}/result.json": (
                '{"exit_code": 0, "duration_s": Infinity, "cost_usd": 1e999, "outcome": "success"}'
            ),
            f"{run}/cost.json": '{"model": "x", "predicted": {"dollars": NaN}, "actual": {}}',
        },
    )
    done = run_cli(hostile, ["runs", "--json"])
    assert_clean(done, hostile, (0,))
    assert "Infinity" not in done.stdout and "NaN" not in done.stdout
    _strict(done.stdout)


def test_a_record_never_holds_infinity(tmp_path: Path) -> None:
    # Strict JSON, keeping as text what the agent reported: `show` says `invalid (inf)`.
    from promptdeck.core.records.schema import RunResult
    from promptdeck.core.records.writer import RunRecord

    record = RunRecord.dry_run()
    result = {"exit_code": 0, "outcome": "success", "cost_usd": float("inf")}
    record.write_result({**result, "usage": [float("nan")]})
    written = _strict((record.dir / "result.json").read_text(encoding="utf-8"))
    assert written == {**result, "cost_usd": "Infinity", "usage": ["NaN"]}
    assert RunResult.from_dict(written, record.dir).cost_usd == float("inf")
