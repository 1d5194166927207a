"""One transaction for a batch of writes (group commit), in the shared SQL.

A batch holds the writes of many tasks, several of one task in order. Each
statement runs once for the whole batch (`executemany`): a task's events in
the batch are one row of the log (`frames`: a burst is one row, not one per
event); a task's listed columns and its snapshot are written once, as of
its last write in the batch that changes them; the per-state counters move
by the batch's net change, from each task's state before the batch.

First of all, the fence (fence.py): the batch's writes that do not extend
their task's log where the store has it end are refused, and nothing of
them is written; the rest of the batch goes on.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from a2a_grpc.stores.fence import Fence, refusal
from a2a_grpc.stores.writes import FRAME, Refused, Write

Row = Sequence[Any]


class Tx(Protocol):
    async def execute(self, sql: str, *args: Any) -> None: ...

    async def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None: ...

    async def fetch(self, sql: str, *args: Any) -> list[Row]: ...


UPSERT_TASK = """
    INSERT INTO a2a_tasks (tenant, owner, id, context_id, state, status_ns, seq, body, holder,
        lease_ns)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant, id) DO UPDATE SET context_id = excluded.context_id,
        state = excluded.state, status_ns = excluded.status_ns, seq = excluded.seq,
        holder = excluded.holder, lease_ns = excluded.lease_ns"""
# A task's first write makes its row: a plain insert, so that a second "first
# write" of one task id (two servers creating it at once) fails on the key
# instead of overwriting the row (the log's key would not catch it: a row of
# the log is keyed by its last event).
INSERT_TASK = UPSERT_TASK[:UPSERT_TASK.index("ON CONFLICT")]
UPSERT_SNAPSHOT = """
    INSERT INTO a2a_snapshots (tenant, task_id, seq, body) VALUES (?, ?, ?, ?)
    ON CONFLICT (tenant, task_id) DO UPDATE SET seq = excluded.seq, body = excluded.body"""
COUNT = """
    INSERT INTO a2a_counts (tenant, owner, state, n) VALUES (?, ?, ?, ?)
    ON CONFLICT (tenant, owner, state) DO UPDATE SET n = a2a_counts.n + excluded.n"""
_EVENTS = "INSERT INTO a2a_events (tenant, task_id, seq, n, body) VALUES (?, ?, ?, ?, ?)"
_MESSAGE = "INSERT INTO a2a_messages (tenant, owner, message_id, task_id) VALUES (?, ?, ?, ?)"
_NOTIFY = """
    INSERT INTO a2a_outbox (tenant, owner, task_id, config_id, seq, attempts, next_ns, dead,
        last_error)
    SELECT ?, ?, ?, id, ?, 0, ?, 0, '' FROM a2a_push_configs WHERE tenant = ? AND task_id = ?"""
EMPTY = b""  # a2a_tasks.body: unused since the snapshots have their own table


class Fences(Protocol):
    async def __call__(self, tx: Tx, keys: list[tuple[str, str]]) -> dict[tuple[str, str], Fence]:
        """What the fence reads of each (tenant, task id) that has a row, the rows
        held (locked) until the transaction ends where other writers run
        beside this one."""


def fence(batch: list[Write], found: dict[tuple[str, str], Fence]
          ) -> tuple[dict[tuple[str, str], list[Write]], Refused]:
    """The batch's writes by task, those the fence lets in, and those it refuses.
    A task's writes in a batch follow each other: the first is checked against
    the store, the others against the one before (nothing after a final one)."""
    runs: dict[tuple[str, str], list[Write]] = {}
    for w in batch:
        runs.setdefault((w.scope.tenant, w.task_id), []).append(w)
    refused: Refused = []
    for key, run in list(runs.items()):
        error = refusal(run[0].task_id, run[0].first, run[0].epoch, found.get(key))
        if error is not None:
            refused += [(w, error) for w in run]
            del runs[key]
            continue
        for i in range(1, len(run)):
            error = refusal(run[i].task_id, run[i].first, run[i].epoch,
                            Fence(run[i - 1].seq, run[i - 1].state, run[i].epoch))
            if error is not None:
                refused += [(w, error) for w in run[i:]]
                runs[key] = run[:i]
                break
    return runs, refused


async def write_batch(tx: Tx, batch: list[Write], fences_of: Fences,
                      lease: tuple[str, int] = ("", 0)) -> tuple[bool, Refused]:
    """`lease`: (holder, ns): the writer holds the tasks it writes for that long.
    Returns whether the batch may have queued push deliveries, and the writes
    the fence refused (nothing of those is written)."""
    # A task's first event makes its row: nothing to look up for a batch that
    # starts a task (had the row been there, its event 1 would be too, and the
    # insert of the log below would fail).
    starts = {(w.scope.tenant, w.task_id): w.first for w in reversed(batch)}
    found = await fences_of(tx, [k for k, seq in starts.items() if seq > 1])
    runs, refused = fence(batch, found)
    if refused:
        batch = [w for run in runs.values() for w in run]
    listed: dict[tuple[str, str], Write] = {}  # the last write of each task that changes its row
    snapshots: dict[tuple[str, str], Write] = {}
    for w in batch:
        key = (w.scope.tenant, w.task_id)
        if w.listed:
            listed[key] = w
        if w.snapshot is not None:
            snapshots[key] = w
    if listed:
        holder, until = lease[0], time.time_ns() + lease[1]
        for sql, new in ((INSERT_TASK, True), (UPSERT_TASK, False)):
            rows = [(w.scope.tenant, w.scope.owner, w.task_id, w.context_id, w.state,
                     w.status_ns, w.seq, EMPTY, holder, until)
                    for key, w in listed.items() if (starts[key] == 1) == new]
            if rows:
                await tx.executemany(sql, rows)
        counts: dict[tuple[str, str, int], int] = {}
        for key, w in listed.items():
            old = found[key].state if key in found else None
            if old == w.state:
                continue
            if old is not None:
                counts[(w.scope.tenant, w.scope.owner, old)] = counts.get(
                    (w.scope.tenant, w.scope.owner, old), 0) - 1
            here = (w.scope.tenant, w.scope.owner, w.state)
            counts[here] = counts.get(here, 0) + 1
        if any(counts.values()):
            await tx.executemany(COUNT, [(*k, n) for k, n in sorted(counts.items()) if n])
    if snapshots:
        await tx.executemany(UPSERT_SNAPSHOT, [
            (w.scope.tenant, w.task_id, w.seq, w.snapshot) for w in snapshots.values()])
    if runs:
        await tx.executemany(_EVENTS, [
            (tenant, task_id, run[-1].seq, run[-1].seq - run[0].first + 1,
             run[0].event if len(run) == 1 else b"".join(framed(w) for w in run))
            for (tenant, task_id), run in runs.items()])
    messages = [(w.scope.tenant, w.scope.owner, w.message_id, w.task_id)
                for w in batch if w.message_id]
    if messages:
        await tx.executemany(_MESSAGE, messages)
    notified = [w for w in batch if w.notify]
    # Most tasks have no webhook: a probe spares a statement per event, and says
    # whether the sender has anything new to send.
    if notified and await tx.fetch("SELECT 1 FROM a2a_push_configs LIMIT 1"):
        hooked = await _with_configs(tx, {(w.scope.tenant, w.task_id) for w in notified})
        notified = [w for w in notified if (w.scope.tenant, w.task_id) in hooked]
        if notified:
            now = time.time_ns()
            await tx.executemany(_NOTIFY, [
                (w.scope.tenant, w.scope.owner, w.task_id, seq, now, w.scope.tenant, w.task_id)
                for w in notified for seq in range(w.first, w.seq + 1)])
            return True, refused
    return False, refused


async def _with_configs(tx: Tx, keys: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which of these (tenant, task id) have push configs."""
    found: set[tuple[str, str]] = set()
    listed = sorted(keys)
    for at in range(0, len(listed), 50):
        chunk = listed[at:at + 50]
        rows = await tx.fetch(
            "SELECT DISTINCT tenant, task_id FROM a2a_push_configs WHERE "
            + " OR ".join(["(tenant = ? AND task_id = ?)"] * len(chunk)),
            *(v for key in chunk for v in key))
        found.update((r[0], r[1]) for r in rows)
    return found


def framed(write: Write) -> bytes:
    """A write's events as part of a row of several: each after its frame."""
    if write.size > 1:
        return write.event  # framed by `append_many` already
    return FRAME.pack(write.seq, len(write.event)) + write.event


def frames(seq: int, n: int, body: bytes) -> Iterator[tuple[int, bytes]]:
    """The (seq, event) of a row of the log."""
    if n == 1:
        yield seq, body
        return
    at = 0
    while at < len(body):
        one, size = FRAME.unpack_from(body, at)
        at += FRAME.size
        yield one, body[at:at + size]
        at += size
