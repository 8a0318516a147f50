"""``python -m promptdeck.cli``: the same CLI as the ``promptdeck`` script."""

from __future__ import annotations

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
