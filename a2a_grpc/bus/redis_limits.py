"""Per-caller rate limits counted across replicas (`--rate-limit` with
`--bus redis://...`): each caller's token bucket is a hash in Redis,
`{prefix}:rate:{caller}`, taken from by one script (atomic, on Redis's
clock), so N requests a second are N across all replicas, not N each.

When Redis does not answer within TIMEOUT the caller's request is counted
by this process alone (LimitedService keeps its local buckets for that), a
WARNING says so once, and Redis is asked again after COOLDOWN: a lost Redis
costs each call one short timeout at most once per COOLDOWN, not each call.
"""

from __future__ import annotations

import logging
import time
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.exceptions import RedisError

log = logging.getLogger("a2a_grpc.limits")
TIMEOUT = 0.25  # seconds for Redis to answer one take
COOLDOWN = 2.0  # seconds counted locally after Redis did not answer

# KEYS[1]: the caller's bucket; ARGV: rate per second, burst. Returns the
# seconds until a token is there ("0": one was taken).
TAKE = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(held[1]), tonumber(held[2])
if tokens == nil or at == nil then tokens, at = burst, now end
tokens = math.min(burst, tokens + math.max(now - at, 0) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return tostring(wait)
"""


class SharedRate:
    def __init__(self, url: str, rate: float, burst: float) -> None:
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
        self.prefix = query.pop("prefix", "a2a")
        self.rate, self.burst = rate, burst
        self._redis = aioredis.Redis.from_url(
            urlunsplit(parts._replace(query=urlencode(query))),
            socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT)
        self._take = self._redis.register_script(TAKE)
        self._away_until = 0.0

    async def take(self, key: str) -> float | None:
        """Seconds to wait (0: a token was taken) across replicas, or None when
        Redis is away (the caller counts locally)."""
        if self._away_until and time.monotonic() < self._away_until:
            return None
        try:
            wait = float(await self._take(keys=[f"{self.prefix}:rate:{key}"],
                                          args=[self.rate, self.burst]))
        except (RedisError, OSError, TimeoutError) as exc:
            if not self._away_until:
                log.warning("rate limits are counted by this process alone while Redis does "
                            "not answer (%s): each replica lets a caller its whole rate", exc)
            self._away_until = time.monotonic() + COOLDOWN
            return None
        if self._away_until:
            log.info("rate limits are counted across replicas again")
            self._away_until = 0.0
        return wait

    async def close(self) -> None:
        await self._redis.aclose()
