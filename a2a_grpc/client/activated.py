"""Which extensions the server activated for the last call of this task
(asyncio's: the caller's), from the response's `A2A-Extensions` header or
gRPC initial metadata. A context variable, so concurrent calls in other
tasks do not overwrite what this one was told."""

from __future__ import annotations

from contextvars import ContextVar

_last: ContextVar[tuple[str, ...]] = ContextVar("a2a_grpc_activated", default=())


def seen(raw: str | None) -> None:
    """A response named these extensions (a comma-separated header), or none."""
    _last.set(tuple(u.strip() for u in raw.split(",") if u.strip()) if raw else ())


def activated() -> tuple[str, ...]:
    return _last.get()
