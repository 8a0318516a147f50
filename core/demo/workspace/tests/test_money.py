from decimal import Decimal

import pytest

from ledgerline.money import AmountError, parse_amount


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12.5", Decimal("12.50")),
        ("-7.2", Decimal("-7.20")),
        ("1,234.50", Decimal("1234.50")),
        ("(12.00)", Decimal("-12.00")),
        ("£3.99", Decimal("3.99")),
    ],
)
def test_parse_amount_accepts_every_export_style(text, expected):
    assert parse_amount(text) == expected


@pytest.mark.parametrize("text", ["", "12,50 EUR", "abc"])
def test_parse_amount_rejects_what_no_export_writes(text):
    with pytest.raises(AmountError):
        parse_amount(text)
