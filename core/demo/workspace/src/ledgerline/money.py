"""Amounts as bank exports write them, turned into exact Decimal values."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

_CURRENCY_SIGNS = "£$€"


class AmountError(ValueError):
    """An amount string that no export we support would write."""


def parse_amount(text: str) -> Decimal:
    """Parse ``"1,234.50"``, ``"-7.2"``, ``"(12.00)"`` or ``"£3.99"`` into a Decimal.

    Parentheses mean a debit (accounting style, used by Nationwide exports).
    The result always has two decimal places.
    """
    raw = text.strip()
    if not raw:
        raise AmountError("empty amount")
    negative = raw.startswith("(") and raw.endswith(")")
    if negative:
        raw = raw[1:-1].strip()
    raw = raw.lstrip(_CURRENCY_SIGNS).replace(",", "").replace(" ", "")
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise AmountError(f"not an amount: {text!r}") from None
    if negative:
        value = -value
    return value.quantize(Decimal("0.01"))
