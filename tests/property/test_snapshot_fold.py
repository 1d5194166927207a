"""A task read from a store equals the live one, event by event, on every store.

The durable stores keep a snapshot of a task now and then and its events
after it; a read folds those events into the snapshot. Over generated event
sequences (statuses with and without messages, new and appended artifacts,
user messages that come whole, final states), with snapshot thresholds that
make the stores rewrite the snapshot at every event, now and then, or
almost never, every read must give exactly the task the runtime holds: by
GetTask's path, by ListTasks' path, and the log must hold every event.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_grpc.core import lifecycle, states
from a2a_grpc.core.errors import InvalidAgentResponseError
from a2a_grpc.core.listing import TaskQuery
from a2a_grpc.generated.a2a_pb2 import Message, Part, Role, StreamResponse, Task
from a2a_grpc.stores import MemoryTaskStore, Scope, TaskStore
from a2a_grpc.stores.postgres import PostgresTaskStore
from a2a_grpc.stores.shards import ShardedSqliteStore
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.property.test_lifecycle_undo import events, words
from tests.stores import KINDS, drop_schema, postgres_schema, postgres_url

SCOPE = Scope("t", "owner")
THRESHOLDS = (0, 300, 1 << 30)  # bytes logged since the snapshot before a new one

# Each step: an event or a user message, and whether to wait for the appends
# made so far and read (else the next appends go with it: one batch, one row).
steps = st.lists(st.tuples(st.one_of(events(), words.map(lambda w: Message(
    message_id=f"u-{uuid.uuid4()}", role=Role.ROLE_USER, parts=[Part(text=w)]))),
    st.booleans()), min_size=1, max_size=12)


async def _stores(kind: str, tmp: Path) -> tuple[list[TaskStore], str]:
    if kind == "memory":
        return [MemoryTaskStore()], ""
    if kind == "sqlite":
        return [SqliteTaskStore(tmp / f"fold-{n}.db", snapshot_bytes=n) for n in THRESHOLDS], ""
    if kind == "shards":
        return [ShardedSqliteStore(tmp / "fold.db", own=1, count=2)], ""
    schema = await postgres_schema()
    return [PostgresTaskStore(postgres_url(schema), snapshot_bytes=n) for n in THRESHOLDS], schema


async def _check(store: TaskStore, plan: list[tuple[StreamResponse | Message, bool]]) -> None:
    live = Task(id=f"task-{uuid.uuid4()}", context_id=f"ctx-{uuid.uuid4()}")
    live.status.state = states.SUBMITTED
    live.status.timestamp.FromNanoseconds(1_700_000_000_000_000_000)
    live.history.add(message_id=f"m-{live.id}", role=Role.ROLE_USER, parts=[Part(text="go")])
    await store.append(SCOPE, live, 1, StreamResponse(task=live), f"m-{live.id}")
    logged = [StreamResponse(task=live)]
    pending = []
    for step, read in plan:
        if isinstance(step, Message):  # a follow-up: the task comes whole, as the runtime does
            if live.status.state in states.TERMINAL:
                continue
            whole = Task()
            whole.CopyFrom(live)
            whole.history.append(step)
            event = StreamResponse(task=whole)
            pending.append(store.append(SCOPE, whole, len(logged) + 1, event, step.message_id))
            live = whole
        else:
            event = StreamResponse()
            event.CopyFrom(step)
            if event.HasField("status_update"):
                update = event.status_update
                update.task_id, update.context_id = live.id, live.context_id
                update.status.timestamp.FromNanoseconds(1_700_000_000_000_000_000 + len(logged))
            else:
                event.artifact_update.task_id = live.id
                event.artifact_update.context_id = live.context_id
            try:
                lifecycle.apply(live, event)
            except InvalidAgentResponseError:
                continue  # refused before it changed anything: never stored
            pending.append(store.append(SCOPE, live, len(logged) + 1, event, derived=True))
        logged.append(event)
        if read:
            await asyncio.gather(*pending)
            pending.clear()
            got = await store.get(SCOPE, live.id)
            assert got is not None and got.seq == len(logged)
            assert got.task == live
    await asyncio.gather(*pending)
    query = TaskQuery(SCOPE.tenant, SCOPE.owner, live.context_id, states.UNSPECIFIED, None, 10,
                      None, None, True)
    listed = {t.id: t for t in (await store.list_tasks(query))[0]}
    assert listed[live.id] == live
    assert [e for _, e in await store.events(SCOPE, live.id, 0, len(logged))] == logged
    for after in range(len(logged)):  # any stretch of the log, rows of several events or not
        upto = min(len(logged), after + 3)
        assert await store.events(SCOPE, live.id, after, upto) == list(
            enumerate(logged[after:upto], start=after + 1))


@pytest.mark.parametrize("kind", KINDS)
def test_a_task_read_back_equals_the_live_one(kind: str, tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()
    stores, schema = loop.run_until_complete(_stores(kind, tmp_path))
    for store in stores:
        loop.run_until_complete(store.open())
    try:
        @settings(max_examples=60, deadline=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(plan=steps, which=st.integers(0, len(stores) - 1))
        def check(plan: list[tuple[StreamResponse | Message, bool]], which: int) -> None:
            loop.run_until_complete(_check(stores[which], plan))

        check()
    finally:
        for store in stores:
            loop.run_until_complete(store.close())
        if schema:
            loop.run_until_complete(drop_schema(schema))
        loop.close()
