"""The A2A 1.1 draft's task generations, served as an opt-in preview
(a2aproject/A2A dev-1.1 §3.2.7): counted one per event, long-polling GetTask,
ifGenerationMatch, on all three bindings; and nothing of it for 1.0 calls."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from a2a_grpc.core.generation import generation_of
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.generations import PreviewOptions
from a2a_grpc.stores import open_store
from tests.bindings import Binding, CallFailed, parse_sse
from tests.conftest import Stack, StackFactory, user_message
from tests.webhook import start_webhook

BINDINGS = ["grpc", "jsonrpc", "rest"]
V11 = {"A2A-Version": "1.1"}
MISMATCH = {"grpc": grpc.StatusCode.ABORTED, "jsonrpc": -32010, "rest": 409}


def send(text: str, task_id: str = "", **config: Any) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=user_message(text, task_id=task_id),
                                 configuration=pb.SendMessageConfiguration(**config))


async def task_of(client: Binding, request: pb.SendMessageRequest) -> pb.Task:
    sent = await client.call("SendMessage", request)
    assert isinstance(sent, pb.SendMessageResponse) and sent.HasField("task")
    return sent.task


async def get(client: Binding, task_id: str, **fields: Any) -> pb.Task:
    got = await client.call("GetTask", pb.GetTaskRequest(id=task_id, **fields))
    assert isinstance(got, pb.Task)
    return got


async def subscribed(s: Stack, task_id: str, count: int) -> None:
    """Until `count` readers follow the task's events (a long poll waiting)."""
    for _ in range(2000):  # 10 s at most
        if s.handler.bus.subscriber_count(task_id) >= count:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"no long poll is waiting on task {task_id}")


@pytest.mark.parametrize("binding", BINDINGS)
async def test_one_generation_per_event_from_one(stack: StackFactory, binding: str) -> None:
    s = await stack(preview=PreviewOptions())
    client = s.binding(binding, V11)
    events = await client.stream("SendStreamingMessage", send("stream 5"))
    assert events[0].task.generation == 1
    updates = [generation_of(e) for e in events[1:]]
    assert updates == list(range(2, len(events) + 1))  # +1 per status or artifact event
    assert (await get(client, events[0].task.id)).generation == len(events)
    # a follow-up's events go on from there
    asked = await task_of(client, send("ask"))
    assert asked.generation == 2  # created, then INPUT_REQUIRED
    answered = await task_of(client, send("42", asked.id))
    assert answered.status.state == pb.TASK_STATE_COMPLETED
    assert answered.generation == 5  # WORKING, the artifact, COMPLETED


@pytest.mark.parametrize("binding", BINDINGS)
async def test_1_0_calls_see_nothing_of_it(stack: StackFactory, binding: str) -> None:
    """On a server with the preview on, a 1.0 call (or one naming no version)
    reads no generation anywhere, and what it sends of the draft is ignored."""
    s = await stack(preview=PreviewOptions())
    seen: list[Any] = []
    for headers in ({"A2A-Version": "1.0"}, {}):
        client = s.binding(binding, headers)
        seen += await client.stream("SendStreamingMessage", send("stream 3"))
        asked = await task_of(client, send("ask", if_generation_match=77))
        # a wrong ifGenerationMatch from a 1.0 call is not looked at
        seen.append(await task_of(client, send("42", asked.id, if_generation_match=77)))
        seen.append(await get(client, asked.id, current_generation=99))  # answers at once
        seen.append(await client.call("ListTasks", pb.ListTasksRequest()))
        waiting = await task_of(client, send("slow 30", return_immediately=True))
        seen.append(await client.call("CancelTask", pb.CancelTaskRequest(id=waiting.id)))
    for message in seen:
        assert "generation" not in json.dumps(json_format.MessageToDict(message)), message
    # what the same calls read in 1.1: the counts were kept all along
    task = await get(s.binding(binding, V11), asked.id)
    assert task.generation == 5


async def test_1_0_json_bytes_carry_no_generation(stack: StackFactory) -> None:
    """The raw bodies, not parsed: JSON-RPC, a REST GET, and SSE frames."""
    s = await stack(preview=PreviewOptions())
    task = await task_of(s.binding("grpc", V11), send("stream 2"))
    assert task.generation > 1
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task.id}}
    async with s.session.post(s.base_url + "/", json=rpc) as resp:
        assert "generation" not in await resp.text()
    async with s.session.get(f"{s.base_url}/tasks/{task.id}") as resp:
        assert resp.status == 200 and "generation" not in await resp.text()
    rpc = {"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage",
           "params": {"message": json_format.MessageToDict(user_message("stream 3"))}}
    async with s.session.post(s.base_url + "/", json=rpc) as resp:
        body = await resp.text()
    assert len(parse_sse(body)[0]) == 6 and "generation" not in body
    rpc["params"] = {"message": json_format.MessageToDict(user_message("stream 3"))}
    async with s.session.post(s.base_url + "/", json=rpc, headers=V11) as resp:
        body = await resp.text()
    assert body.count('"generation"') == 6  # the same stream in 1.1: on every event


@pytest.mark.parametrize("binding", BINDINGS)
async def test_without_the_preview_1_1_is_not_served(stack: StackFactory, binding: str) -> None:
    s = await stack()
    with pytest.raises(CallFailed) as info:
        await s.binding(binding, V11).call("GetTask", pb.GetTaskRequest(id="x"))
    assert info.value.reason == "VERSION_NOT_SUPPORTED"
    task = await task_of(s.binding(binding), send("hello"))
    assert task.generation == 0  # and nothing is counted


@pytest.mark.parametrize("binding", BINDINGS)
async def test_long_poll_answers_when_the_task_moves_on(stack: StackFactory,
                                                        binding: str) -> None:
    s = await stack(preview=PreviewOptions(wait=30, max_wait=60))
    client = s.binding(binding, V11)
    asked = await task_of(client, send("ask"))
    polling = asyncio.create_task(get(client, asked.id, current_generation=asked.generation))
    await subscribed(s, asked.id, 1)  # it waits: the task has not moved
    assert not polling.done()
    await task_of(s.binding("grpc", V11), send("42", asked.id))
    moved = await asyncio.wait_for(polling, 10)
    assert moved.generation > asked.generation
    assert moved.generation == (await get(client, asked.id)).generation or \
        moved.status.state != pb.TASK_STATE_COMPLETED  # the first later generation, or past


@pytest.mark.parametrize("binding", BINDINGS)
async def test_long_poll_ends_with_the_wait(stack: StackFactory, binding: str) -> None:
    s = await stack(preview=PreviewOptions(wait=30, max_wait=60))
    client = s.binding(binding, {**V11, "Prefer": "wait=0.2"})
    asked = await task_of(client, send("ask"))
    same = await asyncio.wait_for(get(client, asked.id, current_generation=asked.generation), 10)
    assert same.generation == asked.generation  # the task as it stands, at the wait's end
    # a generation already passed, a final task, a task counting none: at once
    at_once = s.binding(binding, V11)
    assert (await asyncio.wait_for(get(at_once, asked.id, current_generation=0), 10)
            ).generation == asked.generation
    done = await task_of(at_once, send("hello"))
    assert (await asyncio.wait_for(get(at_once, done.id, current_generation=done.generation),
                                   10)).status.state == pb.TASK_STATE_COMPLETED
    with pytest.raises(CallFailed) as info:
        await get(at_once, "no-such-task", current_generation=1)
    assert info.value.reason == "TASK_NOT_FOUND"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_if_generation_match(stack: StackFactory, binding: str) -> None:
    s = await stack(preview=PreviewOptions())
    client = s.binding(binding, V11)
    asked = await task_of(client, send("ask"))
    with pytest.raises(CallFailed) as info:
        await client.call("SendMessage", send("42", asked.id, if_generation_match=1))
    failed = info.value
    assert (failed.reason, failed.code) == ("TASK_GENERATION_MISMATCH", MISMATCH[binding])
    assert "expected 1" in failed.message and "generation 2" in failed.message
    unchanged = await get(client, asked.id)
    assert (unchanged.generation, len(unchanged.history)) == (2, len(asked.history))
    with pytest.raises(CallFailed):  # streams are refused before their first event
        await client.stream("SendStreamingMessage", send("42", asked.id, if_generation_match=3))
    done = await task_of(client, send("42", asked.id, if_generation_match=2))
    assert done.status.state == pb.TASK_STATE_COMPLETED
    # a new task: ignored (§3.2.2)
    new = await task_of(client, send("hello", if_generation_match=99))
    assert new.status.state == pb.TASK_STATE_COMPLETED


async def test_the_mismatch_body_on_rest_is_the_drafts(stack: StackFactory) -> None:
    s = await stack(preview=PreviewOptions())
    asked = await task_of(s.binding("grpc", V11), send("ask"))
    body = json_format.MessageToDict(send("42", asked.id, if_generation_match=7))
    async with s.session.post(s.base_url + "/message:send", json=body, headers=V11) as resp:
        assert resp.status == 409
        error = (await resp.json())["error"]
    assert (error["code"], error["status"]) == (409, "ABORTED")
    [info] = [d for d in error["details"] if d["@type"].endswith("ErrorInfo")]
    assert info["reason"] == "TASK_GENERATION_MISMATCH"
    assert info["metadata"] == {"taskId": asked.id, "expectedGeneration": "7",
                                "currentGeneration": "2"}


async def test_generations_survive_a_restart_of_the_store(stack: StackFactory, tmp_path: Any
                                                          ) -> None:
    """Stored with the task and its events: a new process reads the same count,
    and goes on from it (SQLite folds stored events into the task)."""
    url = f"sqlite:///{tmp_path}/tasks.db"
    s = await stack(preview=PreviewOptions(), store=await open_store(url))
    events = await s.binding("grpc", V11).stream("SendStreamingMessage", send("stream 40"))
    asked = await task_of(s.binding("grpc", V11), send("ask"))
    await s.handler.close()
    await s.handler.store.close()
    again = await stack(preview=PreviewOptions(), store=await open_store(url))
    client = again.binding("jsonrpc", V11)
    assert (await get(client, events[0].task.id)).generation == len(events)
    assert (await task_of(client, send("42", asked.id, if_generation_match=2))).generation == 5


async def test_push_carries_generations_for_configs_set_in_1_1(stack: StackFactory) -> None:
    hook = await start_webhook()
    try:
        s = await stack(preview=PreviewOptions(), sender=True)
        for path, headers in (("/v11", V11), ("/v10", {"A2A-Version": "1.0"})):
            client = s.binding("jsonrpc", headers)
            config = pb.TaskPushNotificationConfig(url=hook.url(path), id="c")
            await task_of(client, send("hello", task_push_notification_config=config))
        v11, v10 = await hook.wait_for("/v11", 3), await hook.wait_for("/v10", 3)
        assert [generation_of(h.event) for h in v11[:3]] == [2, 3, 4]
        assert all(b'generation' not in h.body for h in v10)
    finally:
        await hook.server.close()
