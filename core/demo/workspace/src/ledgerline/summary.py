"""Monthly totals per category."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from decimal import Decimal

from ledgerline.importer import Transaction

Categorize = Callable[[Transaction], str]


def uncategorized(_: Transaction) -> str:
    """The category of every transaction until category rules (story 1-4) land."""
    return "uncategorized"


def monthly_totals(
    transactions: Iterable[Transaction], categorize: Categorize = uncategorized
) -> dict[tuple[str, str], Decimal]:
    """Sum amounts per ``(YYYY-MM, category)``; keys come back sorted."""
    totals: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for txn in transactions:
        totals[(txn.date.strftime("%Y-%m"), categorize(txn))] += txn.amount
    return dict(sorted(totals.items()))
