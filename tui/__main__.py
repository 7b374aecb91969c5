"""``python -m recall_tui [GLOBAL OPTIONS]`` (installed name): the same as ``recall-admin [GLOBAL OPTIONS] tui`` (one entry point)."""

import sys

from recall_admin.cli import main

sys.argv = ["recall-admin", *sys.argv[1:], "tui"]
main()
