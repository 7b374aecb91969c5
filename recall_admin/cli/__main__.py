"""`python -m recall_admin.cli`."""

from .root import main

main()
