"""Read one bank's CSV export into Transaction records."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

from ledgerline.money import parse_amount

# Column names differ per bank; each tuple lists the names we accept, in priority order.
_COLUMNS = {
    "date": ("date", "transaction date", "posted"),
    "payee": ("name", "description", "counter party", "payee"),
    "amount": ("amount", "amount (gbp)", "value"),
    "reference": ("transaction id", "reference", "ref"),
}
_DATE_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%d %b %Y")


class StatementError(ValueError):
    """A statement file we cannot read, with the file and row that failed."""


@dataclass(frozen=True)
class Transaction:
    """One line of a statement."""

    date: date
    payee: str
    amount: Decimal
    currency: str
    reference: str
    source: str
    row: int


def _parse_date(text: str) -> date:
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt).date()
        except ValueError:
            continue
    raise ValueError(f"unknown date format: {text!r}")


def _column(header: list[str], field: str, path: Path) -> int:
    lowered = [name.strip().lower() for name in header]
    for name in _COLUMNS[field]:
        if name in lowered:
            return lowered.index(name)
    raise StatementError(f"{path}: no {field} column (found: {', '.join(header)})")


def read_statement(path: Path, currency: str = "GBP") -> Iterator[Transaction]:
    """Yield the transactions of one CSV export, in file order."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            return
        columns = {field: _column(header, field, path) for field in ("date", "payee", "amount")}
        try:
            ref_column: int | None = _column(header, "reference", path)
        except StatementError:
            ref_column = None
        for row_number, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue
            try:
                yield Transaction(
                    date=_parse_date(row[columns["date"]]),
                    payee=" ".join(row[columns["payee"]].split()),
                    amount=parse_amount(row[columns["amount"]]),
                    currency=currency,
                    reference=row[ref_column].strip() if ref_column is not None else "",
                    source=path.name,
                    row=row_number,
                )
            except (IndexError, ValueError) as exc:
                raise StatementError(f"{path}:{row_number}: {exc}") from None
