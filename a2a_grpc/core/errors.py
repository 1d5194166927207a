"""The A2A error types and the one table that says how each goes on the wire.

Spec §3.3.2 names the errors; §5.4 maps each to a JSON-RPC code, a gRPC status
and an HTTP status; §9.5/§10.6/§11.6 add a `google.rpc.ErrorInfo` whose
`reason` is the error's UPPER_SNAKE name and whose domain is
`a2a-protocol.org`. Every edge (gRPC servicer, JSON-RPC, REST) renders the
same `Wire` row its own way; nothing else in the code base picks a status.

Lookup walks the exception's MRO, so a subclass (say, an illegal-transition
error raised by the agent helper) maps like its parent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from google.rpc import code_pb2

DOMAIN = "a2a-protocol.org"


class FieldViolation(NamedTuple):
    """One bad request field, named by its JSON path (e.g. `message.parts[0]`)."""

    field: str
    description: str


class A2AError(Exception):
    """Base of every error a client may see. `message` is safe to show."""

    default_message = "A2A error"

    def __init__(
        self,
        message: str | None = None,
        *,
        metadata: Mapping[str, str] | None = None,
        violations: Sequence[FieldViolation | tuple[str, str]] = (),
    ) -> None:
        self.message = message or self.default_message
        self.metadata: dict[str, str] = dict(metadata or {})
        self.violations = tuple(FieldViolation(*v) for v in violations)
        super().__init__(self.message)


# Standard JSON-RPC errors (spec §5.4 / §9.5), also used by gRPC and REST.
class ParseError(A2AError):
    default_message = "Invalid JSON payload"


class InvalidRequestError(A2AError):
    default_message = "Request payload validation error"


class MethodNotFoundError(A2AError):
    default_message = "Method not found"


class InvalidParamsError(A2AError):
    default_message = "Invalid parameters"


class InternalError(A2AError):
    # The message is fixed: an internal error never carries its cause.
    default_message = "Internal error"


# A2A errors (spec §3.3.2).
class TaskNotFoundError(A2AError):
    default_message = "Task not found"


class TaskNotCancelableError(A2AError):
    default_message = "Task cannot be canceled"


class PushNotificationNotSupportedError(A2AError):
    default_message = "Push notifications are not supported"


class UnsupportedOperationError(A2AError):
    default_message = "This operation is not supported"


class ContentTypeNotSupportedError(A2AError):
    default_message = "Incompatible content types"


class InvalidAgentResponseError(A2AError):
    default_message = "Invalid agent response"


class ExtendedAgentCardNotConfiguredError(A2AError):
    default_message = "Extended agent card is not configured"


class ExtensionSupportRequiredError(A2AError):
    default_message = "A required extension was not declared"


class VersionNotSupportedError(A2AError):
    default_message = "A2A protocol version not supported"


class TaskGenerationMismatchError(A2AError):
    """A2A 1.1 draft: `ifGenerationMatch` named another generation than the
    task's (served only to A2A-Version 1.1 calls; see handler/generations.py)."""

    default_message = "Task generation mismatch"


# Authentication and authorization (spec §3.3.2: HTTP 401/403, gRPC
# UNAUTHENTICATED/PERMISSION_DENIED, "JSON-RPC custom error"). `challenge` is
# the WWW-Authenticate value that names what the server accepts.
class UnauthenticatedError(A2AError):
    default_message = "Authentication is required"

    def __init__(self, message: str | None = None, *, challenge: str = "",
                 **kw: Any) -> None:
        super().__init__(message, **kw)
        self.challenge = challenge


class PermissionDeniedError(A2AError):
    default_message = "The caller is not allowed to do this"


class ResourceExhaustedError(A2AError):
    """A per-caller limit bit (requests per second, open streams, tasks in
    flight): HTTP 429 with Retry-After, gRPC RESOURCE_EXHAUSTED with RetryInfo.
    `retry_after`: seconds until trying again can succeed (also in the
    ErrorInfo metadata, `retryAfterSeconds`)."""

    default_message = "Too many requests"

    def __init__(self, message: str | None = None, *, retry_after: int = 1,
                 **kw: Any) -> None:
        given = (kw.get("metadata") or {}).get("retryAfterSeconds", "")
        if given.isdigit():  # rebuilt from a peer's error
            retry_after = int(given)
        kw["metadata"] = {**(kw.get("metadata") or {}), "retryAfterSeconds": str(retry_after)}
        super().__init__(message, **kw)
        self.retry_after = retry_after


# Not an A2A error: a gateway's upstream server could not be reached.
class UnavailableError(A2AError):
    default_message = "The A2A server is unavailable; try again later"


class Wire(NamedTuple):
    jsonrpc: int
    grpc: int  # google.rpc.Code
    http: int
    reason: str


# §5.4, checked against the official SDK's table by tests/unit/core/test_errors.py.
WIRE: dict[type[A2AError], Wire] = {
    ParseError: Wire(-32700, code_pb2.INVALID_ARGUMENT, 400, "PARSE_ERROR"),
    InvalidRequestError: Wire(-32600, code_pb2.INVALID_ARGUMENT, 400, "INVALID_REQUEST"),
    MethodNotFoundError: Wire(-32601, code_pb2.NOT_FOUND, 404, "METHOD_NOT_FOUND"),
    InvalidParamsError: Wire(-32602, code_pb2.INVALID_ARGUMENT, 400, "INVALID_PARAMS"),
    InternalError: Wire(-32603, code_pb2.INTERNAL, 500, "INTERNAL_ERROR"),
    TaskNotFoundError: Wire(-32001, code_pb2.NOT_FOUND, 404, "TASK_NOT_FOUND"),
    TaskNotCancelableError: Wire(
        -32002, code_pb2.FAILED_PRECONDITION, 400, "TASK_NOT_CANCELABLE"
    ),
    PushNotificationNotSupportedError: Wire(
        -32003, code_pb2.FAILED_PRECONDITION, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"
    ),
    UnsupportedOperationError: Wire(
        -32004, code_pb2.FAILED_PRECONDITION, 400, "UNSUPPORTED_OPERATION"
    ),
    ContentTypeNotSupportedError: Wire(
        -32005, code_pb2.INVALID_ARGUMENT, 400, "CONTENT_TYPE_NOT_SUPPORTED"
    ),
    InvalidAgentResponseError: Wire(-32006, code_pb2.INTERNAL, 500, "INVALID_AGENT_RESPONSE"),
    ExtendedAgentCardNotConfiguredError: Wire(
        -32007, code_pb2.FAILED_PRECONDITION, 400, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
    ),
    ExtensionSupportRequiredError: Wire(
        -32008, code_pb2.FAILED_PRECONDITION, 400, "EXTENSION_SUPPORT_REQUIRED"
    ),
    VersionNotSupportedError: Wire(
        -32009, code_pb2.FAILED_PRECONDITION, 400, "VERSION_NOT_SUPPORTED"
    ),
    # The A2A 1.1 draft's row (dev-1.1 §5.4; its commit message says HTTP 412,
    # its tables and example 409: the tables are the spec).
    TaskGenerationMismatchError: Wire(
        -32010, code_pb2.ABORTED, 409, "TASK_GENERATION_MISMATCH"
    ),
    # JSON-RPC "custom errors" (§3.3.2) from the implementation-defined range,
    # clear of the -32001.. codes A2A assigns.
    UnauthenticatedError: Wire(-32040, code_pb2.UNAUTHENTICATED, 401, "UNAUTHENTICATED"),
    PermissionDeniedError: Wire(-32041, code_pb2.PERMISSION_DENIED, 403, "PERMISSION_DENIED"),
    ResourceExhaustedError: Wire(-32042, code_pb2.RESOURCE_EXHAUSTED, 429, "RESOURCE_EXHAUSTED"),
    # -32000 is the first of JSON-RPC's implementation-defined server errors.
    UnavailableError: Wire(-32000, code_pb2.UNAVAILABLE, 503, "UNAVAILABLE"),
}

_BY_REASON = {w.reason: cls for cls, w in WIRE.items()}


def error_for(
    reason: str,
    message: str,
    metadata: Mapping[str, str] | None = None,
    violations: Sequence[FieldViolation] = (),
) -> A2AError:
    """Rebuild the error a peer sent, from its ErrorInfo reason (see WIRE)."""
    cls = _BY_REASON.get(reason, InternalError)
    if cls is InternalError:
        return InternalError()
    return cls(message, metadata=metadata, violations=violations)


def wire_of(exc: BaseException) -> Wire:
    """The wire row for `exc`; anything that is not an A2AError is internal."""
    for cls in type(exc).__mro__:
        row = WIRE.get(cls)
        if row is not None:
            return row
    return WIRE[InternalError]


def public(exc: BaseException) -> A2AError:
    """What a client may be told about `exc`: itself, or a bare InternalError."""
    if isinstance(exc, A2AError) and wire_of(exc) is not WIRE[InternalError]:
        return exc
    return InternalError()
