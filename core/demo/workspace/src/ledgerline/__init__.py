"""ledgerline: import bank statement exports into one clean ledger."""

from ledgerline.importer import Transaction, read_statement
from ledgerline.money import parse_amount
from ledgerline.summary import monthly_totals

__all__ = ["Transaction", "monthly_totals", "parse_amount", "read_statement"]
__version__ = "0.3.0"
