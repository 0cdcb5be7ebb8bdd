"""Run the ``streamcal`` command: ``python -m streamcal demo``."""

import sys

from streamcal.cli import main

if __name__ == "__main__":
    sys.exit(main())
