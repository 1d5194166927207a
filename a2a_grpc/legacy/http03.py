"""The HTTP statuses of A2A errors on 0.3's HTTP+JSON binding, both ways.

Where 0.3's servers (the official SDK's 0.3 line) answered with another
status than 1.0's §5.4 table has, `HTTP_03` says which; other errors take
1.0's. Our 0.3 edge answers with these (bridge/legacy/rest03.py), and our
client reads a 0.3 server's error by its status (client/v03.py): those
servers send `{"message"}` alone, no code.
"""

from __future__ import annotations

from a2a_grpc.core.errors import (
    WIRE,
    A2AError,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

HTTP_03: dict[type[A2AError], int] = {
    InvalidParamsError: 422, TaskNotCancelableError: 409, PushNotificationNotSupportedError: 501,
    UnsupportedOperationError: 501, ContentTypeNotSupportedError: 415,
    InvalidAgentResponseError: 502, ExtendedAgentCardNotConfiguredError: 404,
}

# Read back: a status names the error 0.3 servers answer with it (404 is a
# missing task far more often than a missing extended card; 400 is 1.0's
# invalid params, which some 0.3 servers answer).
_BY_STATUS: dict[int, type[A2AError]] = {
    404: TaskNotFoundError, 409: TaskNotCancelableError, 501: UnsupportedOperationError,
    405: UnsupportedOperationError,  # a route the server has not (the 0.3 SDK's DELETE)
    415: ContentTypeNotSupportedError, 422: InvalidParamsError, 400: InvalidParamsError,
    502: InvalidAgentResponseError, 500: InternalError,
}


def status_of(error: A2AError) -> int:
    return HTTP_03.get(type(error)) or WIRE.get(type(error), WIRE[InternalError]).http


def error_of(status: int, message: str) -> A2AError | None:
    """The error a 0.3 server meant by `status`, if it is one of theirs."""
    cls = _BY_STATUS.get(status)
    return None if cls is None else cls(message or None)
