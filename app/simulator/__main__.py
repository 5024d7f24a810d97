"""`python -m app.simulator`: see app/simulator/cli.py."""

import sys

from app.simulator.cli import main

if __name__ == "__main__":
    sys.exit(main())
