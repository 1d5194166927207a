"""Event buses: fan a task's events out, in order, to every subscriber."""

from a2a_grpc.bus.base import EventBus, Subscription
from a2a_grpc.bus.local import Backlog, LocalEventBus
from a2a_grpc.core.extras import missing

__all__ = ["Backlog", "EventBus", "LocalEventBus", "Subscription", "open_bus"]


async def open_bus(url: str | None, backlog: Backlog | None = None) -> EventBus:
    """The in-process bus (no URL), or Redis Streams (redis://HOST:PORT/DB,
    `?prefix=P` for the keys' prefix, default `a2a`), or the hub of `serve
    --workers` (hub://PATH, set by its supervisor), reachable or an OSError."""
    if not url:
        return LocalEventBus(backlog)
    if url.startswith("hub://"):
        from a2a_grpc.bus.hub_client import HubEventBus

        hub = HubEventBus(url.removeprefix("hub://"), backlog)
        await hub.open()
        return hub
    if url.startswith(("redis://", "rediss://", "unix://")):
        try:
            from a2a_grpc.bus.redis import RedisEventBus
        except ImportError as exc:
            raise missing(exc, "--bus redis://", "redis") from None

        bus = RedisEventBus(url, backlog)
        await bus.open()
        return bus
    raise ValueError(f"unknown event bus {url!r}: use redis://HOST:PORT/DB")
