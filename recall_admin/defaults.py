"""Defaults shared by the CLI, the TUI and the session, in a module that imports nothing,
so the CLI can read them at startup without loading the engine."""

DEFAULT_COLLECTION = "memories"
