"""Governance services over the memory engine, and the `recall-admin` command line
(`recall_admin.cli`); see docs/architecture.md. Importing this package is cheap: the
engine loads only with the services that use it."""
