from datetime import date
from decimal import Decimal

import pytest

from ledgerline.importer import StatementError, read_statement
from ledgerline.summary import monthly_totals

MONZO = """Transaction ID,Date,Name,Amount
tx_0001,2024-03-01,TFL TRAVEL CH,-7.20
tx_0002,2024-03-02,TESCO STORES 2231,-23.41

tx_0003,2024-03-28,SALARY ACME LTD,2450.00
"""


def test_reads_rows_in_order_and_skips_blank_lines(tmp_path):
    path = tmp_path / "monzo.csv"
    path.write_text(MONZO, encoding="utf-8")
    rows = list(read_statement(path))
    assert [t.reference for t in rows] == ["tx_0001", "tx_0002", "tx_0003"]
    assert rows[0].date == date(2024, 3, 1)
    assert rows[1].amount == Decimal("-23.41")
    assert rows[2].row == 5


def test_missing_amount_column_names_the_file(tmp_path):
    path = tmp_path / "odd.csv"
    path.write_text("Date,Name\n2024-03-01,X\n", encoding="utf-8")
    with pytest.raises(StatementError, match="no amount column"):
        list(read_statement(path))


def test_monthly_totals_groups_by_month(tmp_path):
    path = tmp_path / "monzo.csv"
    path.write_text(MONZO, encoding="utf-8")
    totals = monthly_totals(read_statement(path))
    assert totals == {("2024-03", "uncategorized"): Decimal("2419.39")}
