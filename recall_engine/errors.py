"""The engine's error types. Every message is meant to be read by a person."""

from __future__ import annotations


class RecallError(Exception):
    """Base of every error the engine raises on purpose.

    ``code`` is a stable machine-readable name (the CLI's JSON error code);
    the message says what went wrong and, where it can, what to do.
    """

    code = "recall_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class InvalidInput(RecallError):
    """A value given by a caller does not fit (subject, value type, confidence...)."""

    code = "invalid_input"


class UnknownPredicate(InvalidInput):
    code = "unknown_predicate"


class InvalidEvent(RecallError):
    """A stored or imported event does not decode; names the event and field."""

    code = "invalid_event"
    event_id: object = None  # a stored event: its id and log position, when known
    position: int | None = None


class IncompleteHistory(RecallError):
    """A read could not see everything it needed, so it answers nothing."""

    code = "incomplete_history"


class LimitExceeded(RecallError):
    code = "limit_exceeded"


class RegistryError(RecallError):
    """A registry definition or registry log record is not valid."""

    code = "invalid_registry"


class RegistryFileError(RegistryError):
    """A registry file is malformed; the message starts with ``file:line``."""

    code = "invalid_registry_file"

    def __init__(self, path: str, line: int | None, field: str | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        what = f" field {field!r}:" if field else ""
        super().__init__(f"{where}:{what} {problem}")
        self.path = path
        self.line = line
        self.field = field
        self.problem = problem


class RegistryMismatch(RegistryError):
    code = "registry_mismatch"


class NotFound(RecallError):
    code = "not_found"


class StorageError(RecallError):
    code = "storage_error"


class ReadOnlyStore(StorageError):
    code = "read_only"


class StalePlan(RecallError):
    code = "stale_plan"


class PlanError(RecallError):
    code = "invalid_plan"


class AuditError(RecallError):
    code = "invalid_audit"


class DigestMismatch(AuditError):
    code = "digest_mismatch"
