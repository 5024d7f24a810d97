"""The frozen app's entry point: the same `pairwise` command line (no command = the tray app)."""

import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
