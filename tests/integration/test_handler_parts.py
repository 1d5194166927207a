"""The handler's parts, each alone, without a RequestHandler around it: the
push config operations, the streaming operations and the housekeeping. Each
is given what it uses (the checks, a store, a bus...) and nothing else; the
real SQLite store on a file, the in-process bus."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2a_grpc.bus import LocalEventBus
from a2a_grpc.core import states
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import (
    PushNotificationNotSupportedError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_grpc.demos.demo import DemoAgent, demo_card
from a2a_grpc.execution.actors import ActorRegistry
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.access import Access
from a2a_grpc.handler.housekeeping import RESTARTED, Housekeeping
from a2a_grpc.handler.intake import Intake
from a2a_grpc.handler.push_configs import PushConfigCalls
from a2a_grpc.handler.streaming import StreamCalls
from a2a_grpc.push.configs import PushConfigs
from a2a_grpc.push.policy import PushPolicy
from a2a_grpc.stores import Scope
from a2a_grpc.stores.sqlite import SqliteTaskStore

ALICE = CallContext(user="alice", version="1.0")
SCOPE = Scope("", "alice")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteTaskStore]:
    made = SqliteTaskStore(tmp_path / "tasks.db")
    await made.open()
    yield made
    await made.close()


async def stored_task(store: SqliteTaskStore, task_id: str, state: int) -> pb.Task:
    task = pb.Task(id=task_id, context_id="c", status=pb.TaskStatus(state=state))  # type: ignore[arg-type]
    task.status.timestamp.GetCurrentTime()
    await store.append(SCOPE, task, 1, pb.StreamResponse(task=task))
    return task


async def test_push_config_calls_alone(store: SqliteTaskStore) -> None:
    card = demo_card()
    calls = PushConfigCalls(Access(lambda _: card, store), PushConfigs(store),
                            PushPolicy())
    await stored_task(store, "t1", states.WORKING)
    made = await calls.create_task_push_notification_config(pb.TaskPushNotificationConfig(
        task_id="t1", url="https://hooks.example.com/a2a"), ALICE)
    assert made.id and made.task_id == "t1"
    got = await calls.get_task_push_notification_config(
        pb.GetTaskPushNotificationConfigRequest(task_id="t1", id=made.id), ALICE)
    assert got.url == "https://hooks.example.com/a2a"
    listed = await calls.list_task_push_notification_configs(
        pb.ListTaskPushNotificationConfigsRequest(task_id="t1"), ALICE)
    assert [c.id for c in listed.configs] == [made.id]
    with pytest.raises(TaskNotFoundError):  # another caller sees no such task
        await calls.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id="t1"),
            CallContext(user="bob", version="1.0"))
    await calls.delete_task_push_notification_config(
        pb.DeleteTaskPushNotificationConfigRequest(task_id="t1", id=made.id), ALICE)
    assert await store.list_push_configs(SCOPE, "t1") == []
    card.capabilities.push_notifications = False
    with pytest.raises(PushNotificationNotSupportedError):
        await calls.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id="t1"), ALICE)


async def test_stream_calls_alone(store: SqliteTaskStore) -> None:
    async def no_sends(*_: object) -> None:
        raise AssertionError("SubscribeToTask starts nothing")

    card = demo_card()
    calls = StreamCalls(Access(lambda _: card, store), LocalEventBus(), store, no_sends)  # type: ignore[arg-type]
    task = await stored_task(store, "t2", states.COMPLETED)
    with pytest.raises(UnsupportedOperationError):  # final, and no last event id
        await calls.subscribe_to_task(pb.SubscribeToTaskRequest(id="t2"), ALICE)
    resumed = await calls.subscribe_to_task(pb.SubscribeToTaskRequest(id="t2"), CallContext(
        user="alice", version="1.0", metadata={"last-event-id": "0"}))
    assert [event async for event in resumed] == [pb.StreamResponse(task=task)]
    card.capabilities.streaming = False
    with pytest.raises(UnsupportedOperationError):
        await calls.subscribe_to_task(pb.SubscribeToTaskRequest(id="t2"), ALICE)


async def test_housekeeping_alone(store: SqliteTaskStore) -> None:
    agent = DemoAgent()
    bus = LocalEventBus()
    actors = ActorRegistry(store, bus)
    intake = Intake(agent, actors, store, PushConfigs(store), PushPolicy(), 1000, False,
                    lambda _: agent.card)
    duties = Housekeeping(Access(lambda _: agent.card, store), agent, bus, actors, intake)
    await stored_task(store, "left", states.WORKING)  # a run's, when the process died
    await stored_task(store, "done", states.COMPLETED)
    assert await duties.recover() == 1
    got = await store.get(SCOPE, "left")
    assert got is not None and got.task.status.state == states.FAILED
    assert got.task.status.message.parts[0].text == RESTARTED
    answer = await duties.settled_elsewhere(SCOPE, "done", immediately=True)
    assert answer.task.status.state == states.COMPLETED
    assert await duties.purge(max_age_s=-60) == 2  # both final now, and "old"
    assert await store.get(SCOPE, "done") is None
