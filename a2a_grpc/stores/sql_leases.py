"""The leases of replicas sharing a SQL store, as units of work the store runs
in a transaction: renewing what a holder runs (sql.py holds the rest)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection

from a2a_grpc.core import states
from a2a_grpc.stores.sql_batch import Tx

RENEW = "UPDATE a2a_tasks SET lease_ns = ? WHERE holder = ? AND state IN (?, ?)"
CHUNK = 500  # ids per statement: under every driver's limit of parameters


def renewal(holder: str, until_ns: int, running: Collection[str] | None
            ) -> Callable[[Tx], Awaitable[None]]:
    """Extend the holder's SUBMITTED or WORKING tasks to `until_ns`; of `running`
    alone when given (LeaseStore.renew)."""
    args = (until_ns, holder, int(states.SUBMITTED), int(states.WORKING))
    ids = sorted(running) if running is not None else None

    async def work(tx: Tx) -> None:
        if ids is None:
            await tx.execute(RENEW, *args)
            return
        for at in range(0, len(ids), CHUNK):
            chunk = ids[at:at + CHUNK]
            await tx.execute(RENEW + f" AND id IN ({', '.join('?' * len(chunk))})",
                             *args, *chunk)
    return work
