"""Run every benchmark in this folder, one after another, and print their figures; exit 1 when
one fails (``budgets.py`` fails when a speed budget is missed).

Run: .venv/bin/python bench/run_all.py   (or `make bench`)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHES = (
    "budgets",
    "versus",
    "discovery",
    "hostile",
    "injection",
    "compose",
    "stream",
    "run_memory",
    "scope_check",
    "app",
    "overlap",
    "turns",
    "worktrees",
)


def main() -> int:
    here = Path(__file__).parent
    failed = 0
    for name in BENCHES:
        script = here / f"{name}.py"
        if not script.exists():
            print(f"== {name}: no {script.name}", flush=True)
            failed += 1
            continue
        print(f"== {name}", flush=True)
        failed += subprocess.run([sys.executable, str(script)], check=False).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
