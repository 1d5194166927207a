"""The group commit (stores/writes.py) when a commit fails with an error its
driver was not known to raise (seen in `make chaos`: asyncpg's
InternalClientError on a connection PostgreSQL had cut): the batch fails as
if the store had, the later writes of its tasks fail with it (a hole in a
log would follow), the writer going back to the failed one is let in, and
writes queued meanwhile are not left waiting."""

from __future__ import annotations

import asyncio

import pytest

from a2a_grpc.stores import Scope, StoreUnavailableError
from a2a_grpc.stores.writes import GroupCommit, Refused, Write

SCOPE = Scope("", "")


def write(task: str, seq: int) -> Write:
    return Write(SCOPE, task, "c", seq, b"e", 2, 0, True, None, None, False, 0)


async def test_an_unknown_error_fails_the_batch_and_what_was_built_on_it() -> None:
    committed: list[tuple[str, int]] = []
    crash = asyncio.Event()
    crash.set()

    async def commit(batch: list[Write], riders: list[object]) -> Refused:
        if crash.is_set():
            crash.clear()
            raise RuntimeError("cannot switch to state 15; another operation is in progress")
        committed.extend((w.task_id, w.seq) for w in batch)
        return []

    writer = GroupCommit(commit, lambda exc, w: StoreUnavailableError(),  # type: ignore[arg-type]
                         driver_errors=(OSError,))
    first = [writer.submit(write("t", seq)) for seq in (3, 4)]
    other = writer.submit(write("u", 7))  # same batch, another task: fails too
    results = await asyncio.gather(*first, other, return_exceptions=True)
    assert all(isinstance(r, StoreUnavailableError) for r in results)
    with pytest.raises(StoreUnavailableError):
        await writer.submit(write("t", 5))  # built on the failed 3 and 4
    await writer.submit(write("t", 3))  # the writer starts again from the failed one
    await writer.submit(write("u", 7))
    await writer.drain()
    assert committed == [("t", 3), ("u", 7)]


async def test_a_write_of_several_events_fails_and_restarts_from_its_first() -> None:
    """A burst (`append_many`) is one write of events seq - n + 1 to seq: what
    follows it fails with it, and the writer going back to its first event
    (whatever the new write's length) is let in."""
    committed: list[tuple[str, int, int]] = []
    crash = asyncio.Event()
    crash.set()

    async def commit(batch: list[Write], riders: list[object]) -> Refused:
        if crash.is_set():
            crash.clear()
            raise RuntimeError("server closed the connection unexpectedly")
        committed.extend((w.task_id, w.first, w.seq) for w in batch)
        return []

    writer = GroupCommit(commit, lambda exc, w: StoreUnavailableError(),  # type: ignore[arg-type]
                         driver_errors=(OSError,))
    with pytest.raises(StoreUnavailableError):
        await writer.submit(write("t", 6)._replace(size=4))  # events 3 to 6
    with pytest.raises(StoreUnavailableError):
        await writer.submit(write("t", 8)._replace(size=2))  # 7 and 8: built on them
    await writer.submit(write("t", 7)._replace(size=5))  # from 3 again, past 6: let in
    await writer.drain()
    assert committed == [("t", 3, 7)]
