"""`register_server` on PostgreSQL: a session advisory lock on the schema,
exclusive for a server alone on it, shared among replicas, held on a
connection of its own, and kept.

The lock goes when its connection does. A server killed on this machine
closes it at once; one whose host died is found gone by PostgreSQL's
keep-alive probes on that connection (about 30 s). When the connection is
lost under a running server (PostgreSQL restarted, the backend was
terminated), the lock is taken again as soon as PostgreSQL answers, so the
check still holds for a server started after that; if another server took
the store meanwhile, it is logged as an error, and tried again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import asyncpg

from a2a_grpc.stores.errors import StoreInUseError

log = logging.getLogger("a2a_grpc.store")

# The lock's key: (this, hashtext(the schema)), one lock per schema.
SERVING_LOCK = 0x0A2A
# On its connection: a dead peer is found after 10 s idle + 3 probes 5 s apart.
KEEPALIVES = {"tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5",
              "tcp_keepalives_count": "3"}
RETAKE_MAX_S = 30.0


class ServingLock:
    def __init__(self, dsn: str, alone: bool) -> None:
        self.dsn, self.alone = dsn, alone
        self.conn: asyncpg.Connection | None = None
        self._again: asyncio.Task[None] | None = None
        self._released = False

    async def take(self, tries: int = 30) -> None:
        """Take the lock, trying `tries` times 0.1 s apart (a killed server's
        backend may not have gone yet when its replacement starts). Raises
        StoreInUseError, or OSError when PostgreSQL cannot be reached."""
        try:
            conn = await asyncpg.connect(self.dsn, timeout=10, server_settings=KEEPALIVES)
        except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError) as exc:
            raise OSError(f"cannot connect to the PostgreSQL store: {exc}") from exc
        take = "pg_try_advisory_lock" if self.alone else "pg_try_advisory_lock_shared"
        try:
            schema = await conn.fetchval("SELECT coalesce(current_schema(), '')")
            for attempt in range(tries):
                if await conn.fetchval(f"SELECT {take}($1, hashtext($2))", SERVING_LOCK,
                                       schema):
                    self.conn = conn
                    conn.add_termination_listener(self._lost)
                    return
                if attempt + 1 < tries:
                    await asyncio.sleep(0.1)
        except BaseException:
            await conn.close()
            raise
        await conn.close()
        raise StoreInUseError(f"the PostgreSQL store (schema {schema})", self.alone)

    def _lost(self, _: object) -> None:
        """The lock's connection ended under a running server."""
        if not self._released and self._again is None:
            self.conn = None
            self._again = asyncio.get_running_loop().create_task(self._take_again(),
                                                                 name="a2a-serving-lock")

    async def _take_again(self) -> None:
        log.warning("the PostgreSQL store's connection holding this server's place on it "
                    "was lost (PostgreSQL restarted?): taking it again")
        delay = 0.5
        while not self._released:
            try:
                await self.take(tries=1)
            except StoreInUseError as exc:
                log.error("%s; it took the store while this server's connection was lost: "
                          "stop one of them", exc)
            except OSError:
                pass  # PostgreSQL is not back yet
            else:
                log.info("this server's place on the PostgreSQL store is held again")
                break
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETAKE_MAX_S)
        self._again = None

    async def release(self) -> None:
        self._released = True
        if self._again is not None:
            self._again.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._again
        if self.conn is not None:
            self.conn.remove_termination_listener(self._lost)
            await self.conn.close()
            self.conn = None
