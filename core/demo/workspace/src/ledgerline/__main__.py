"""``python -m ledgerline summary FILE...``"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ledgerline.importer import StatementError, read_statement
from ledgerline.summary import monthly_totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ledgerline")
    sub = parser.add_subparsers(dest="command", required=True)
    summary = sub.add_parser("summary", help="monthly totals per category")
    summary.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    try:
        transactions = [txn for path in args.files for txn in read_statement(path)]
    except (OSError, StatementError) as exc:
        print(f"ledgerline: {exc}", file=sys.stderr)
        return 2
    for (month, category), total in monthly_totals(transactions).items():
        print(f"{month}  {category:<14} {total:>10} GBP")
    return 0


if __name__ == "__main__":
    sys.exit(main())
