"""Client-side failures that are not errors the agent sent (those are the A2A
error types of a2a_grpc.core.errors, rebuilt from each binding's error form).
They never go over a wire, so they have no row in the error table."""

from __future__ import annotations

from typing import Any

from a2a_grpc.core.errors import (
    WIRE,
    A2AError,
    FieldViolation,
    InternalError,
    UnavailableError,
    error_for,
)


class AgentUnreachableError(UnavailableError):
    """The connection failed or dropped; idempotent calls were retried first."""

    default_message = "The agent could not be reached"


class AgentDownError(AgentUnreachableError):
    """A retry found no server to connect to: not retried again."""


class BadResponseError(A2AError):
    """The agent answered something that is not A2A (wrong format or status)."""

    default_message = "The agent's answer is not a valid A2A response"


def not_http(url: str, exc: Exception) -> BadResponseError:
    """Something listens at `url` and answered, but not in HTTP (aiohttp's
    ClientResponseError for a bad status line): a gRPC port, another protocol."""
    said = str(getattr(exc, "message", exc)).strip().splitlines()
    return BadResponseError(
        f"{url} did not answer in HTTP ({said[0].rstrip(':') if said else 'no status line'}): "
        "is it an A2A agent's URL? (a gRPC agent's begins with grpc://)")


class NoUsableInterfaceError(A2AError):
    """The agent card offers no interface this client can use."""

    default_message = "The agent card offers no interface this client speaks"


_BY_JSONRPC = {w.jsonrpc: w.reason for w in WIRE.values()}


def from_details(message: str, details: list[dict[str, Any]], fallback_reason: str) -> A2AError:
    """An error from google.rpc details as JSON (JSON-RPC `data`, REST `details`)."""
    reason, metadata, violations = fallback_reason, {}, []
    for d in details if isinstance(details, list) else []:
        kind = str(d.get("@type", "")) if isinstance(d, dict) else ""
        if kind.endswith("google.rpc.ErrorInfo"):
            reason, metadata = str(d.get("reason", reason)), dict(d.get("metadata", {}))
        elif kind.endswith("google.rpc.BadRequest"):
            violations = [FieldViolation(v.get("field", ""), v.get("description", ""))
                          for v in d.get("fieldViolations", [])]
    error = error_for(reason, message, metadata, violations)
    if isinstance(error, InternalError) and reason != "INTERNAL_ERROR":
        return BadResponseError(f"unknown error from the agent: {message}")
    return error


def from_jsonrpc(error: dict[str, Any]) -> A2AError:
    code = error.get("code")
    fallback = _BY_JSONRPC.get(code, "") if isinstance(code, int) else ""
    return from_details(str(error.get("message", "")), error.get("data", []), fallback)
