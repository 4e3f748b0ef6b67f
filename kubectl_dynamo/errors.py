"""Exit codes and the errors that carry them to the command line boundary."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1  # findings at or above the threshold, or invalid input content
    USAGE = 2  # bad flags, unreadable input
    UNREACHABLE = 3  # cluster unreachable, unauthorized, or an answer that is not the API's
    INTERNAL = 70  # a bug in kubectl-dynamo (sysexits' EX_SOFTWARE): never mistaken for findings
    INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT (128 + 2)


class DynamoError(Exception):
    """An expected failure: printed as one ``error: ...`` line, never a traceback."""

    exit_code = ExitCode.FINDINGS

    def __init__(self, message: str, *, detail: str | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail  # shown with -v


class ApiError(DynamoError):
    """An API server error no narrower class names (e.g. 409 Conflict, 422 Invalid): its HTTP
    ``status`` and decoded ``body`` (a Status object, or None) tell callers what was refused."""

    def __init__(self, message: str, status: int, body: object):
        super().__init__(message)
        self.status = status
        self.body = body


class UsageError(DynamoError):
    exit_code = ExitCode.USAGE


class InputError(DynamoError):
    """Input that cannot be read or parsed (a missing file, invalid YAML)."""

    exit_code = ExitCode.USAGE


class InvalidContent(DynamoError):
    """Input that parses but is not valid (schema errors)."""

    exit_code = ExitCode.FINDINGS


class ClusterUnreachable(DynamoError):
    exit_code = ExitCode.UNREACHABLE


class Unauthorized(DynamoError):
    exit_code = ExitCode.UNREACHABLE


class Forbidden(DynamoError):
    """One lookup was denied by RBAC; commands turn this into an 'unknown' field, not a failure."""

    exit_code = ExitCode.UNREACHABLE


class NotFound(DynamoError):
    exit_code = ExitCode.FINDINGS
