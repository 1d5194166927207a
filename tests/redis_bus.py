"""The Redis that runs on loopback (A2A_TEST_REDIS, default redis://127.0.0.1:6379/0),
with a key prefix of each test's own. Without a reachable server the Redis
cases skip, except under CI (CI=true), where that is a failure."""

from __future__ import annotations

import os
import uuid
from urllib.parse import urlsplit

import pytest

REDIS = os.environ.get("A2A_TEST_REDIS", "redis://127.0.0.1:6379/0")


async def redis_prefix() -> str:
    """A fresh key prefix on the test server (skip, or fail under CI, without one)."""
    import redis.asyncio as aioredis
    from redis.exceptions import RedisError

    client = aioredis.Redis.from_url(REDIS)
    try:
        await client.ping()
    except (RedisError, OSError) as exc:
        message = f"Redis at {REDIS} is unreachable ({exc}); set A2A_TEST_REDIS"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    finally:
        await client.aclose()
    return f"t{uuid.uuid4().hex[:12]}"


async def drop_prefix(prefix: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(REDIS)
    try:
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


def bus_url(prefix: str, port: int | None = None) -> str:
    """The bus URL for `prefix`; `port`: through a proxy on loopback instead."""
    parts = urlsplit(REDIS)
    if port is not None:
        parts = parts._replace(netloc=f"127.0.0.1:{port}")
    sep = "&" if parts.query else "?"
    return f"{parts.geturl()}{sep}prefix={prefix}"


def redis_port() -> int:
    return urlsplit(REDIS).port or 6379
