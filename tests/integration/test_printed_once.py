"""A task answered again unchanged is printed once (bridge/codec.py `rendered`):
on a real server over JSON-RPC and HTTP+JSON, the answers are the ones a
fresh printing gives, a task that changed is never answered as it was, and
a kept printing goes where JSON must be written by the standard json module
(an id orjson cannot write) or inside a batch."""

from __future__ import annotations

import json
import uuid
from typing import Any

import orjson
from google.protobuf import json_format

from a2a_grpc.bridge import codec
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import Stack, StackFactory

HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}


async def rpc(s: Stack, body: Any) -> Any:
    async with s.session.post(s.base_url + "/", data=json.dumps(body),
                              headers=HEADERS) as resp:
        assert resp.status == 200
        return json.loads(await resp.text())


def call(method: str, params: dict[str, Any], rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def message(text: str, task_id: str = "") -> dict[str, Any]:
    out = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    return {**out, "taskId": task_id} if task_id else out


def printed_afresh(task: dict[str, Any]) -> dict[str, Any]:
    """The task through protobuf and json_format: what any printing must give."""
    parsed = json_format.ParseDict(task, pb.Task())
    return json_format.MessageToDict(parsed)


async def test_a_task_read_again_is_the_task_as_it_stands(stack: StackFactory) -> None:
    s = await stack()
    asked = (await rpc(s, call("SendMessage", {"message": message("ask")})))["result"]["task"]
    first = (await rpc(s, call("GetTask", {"id": asked["id"]})))["result"]
    again = (await rpc(s, call("GetTask", {"id": asked["id"]})))["result"]
    assert first == again == printed_afresh(first)
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    # The answer changes the task: the next read shows it, not the kept printing.
    await rpc(s, call("SendMessage", {"message": message("blue", asked["id"])}))
    now = (await rpc(s, call("GetTask", {"id": asked["id"]})))["result"]
    assert now["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [m["parts"][0]["text"] for m in now["history"] if m["role"] == "ROLE_USER"] == [
        "ask", "blue"]
    # Fewer history entries asked for: another task, printed as such.
    short = (await rpc(s, call("GetTask", {"id": asked["id"], "historyLength": 1})))["result"]
    assert len(short["history"]) == 1 and short != now
    async with s.session.get(f"{s.base_url}/tasks/{asked['id']}",
                             headers={"A2A-Version": "1.0"}) as resp:
        assert resp.status == 200
        assert json.loads(await resp.text()) == now


async def test_kept_printings_in_a_batch_and_under_an_id_only_json_writes(
        stack: StackFactory) -> None:
    s = await stack()
    task = (await rpc(s, call("SendMessage", {"message": message("hi")})))["result"]["task"]
    read = call("GetTask", {"id": task["id"]})
    expected = (await rpc(s, read))["result"]
    answers = await rpc(s, [read, {**read, "id": 2}])
    assert [a["result"] for a in answers] == [expected, expected]
    assert [a["id"] for a in answers] == [1, 2]
    huge = 2**70  # beyond 64 bits: orjson refuses to write it, json does
    answer = await rpc(s, {**read, "id": huge})
    assert answer["id"] == huge and answer["result"] == expected


def test_a_kept_printing_is_the_printing() -> None:
    task = pb.Task(id="t", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
    task.history.add(message_id="m", role=pb.ROLE_USER).parts.add(text="x")
    for _ in range(2):  # printed, then kept
        out = codec.dumps({"id": 1, "result": codec.rendered(task)})
        assert orjson.loads(out) == {"id": 1, "result": codec.to_dict(task)}
    other = pb.SendMessageResponse(task=task)
    assert codec.rendered(other) == codec.to_dict(other)  # only a Task is kept


def test_what_is_kept_stays_within_its_budget() -> None:
    printed = codec._PrintedTasks(budget=4096, largest=1024)
    tasks = [pb.Task(id=f"task-{i}", context_id="c") for i in range(200)]
    for t in tasks:
        assert orjson.loads(printed(t).json) == codec.to_dict(t)
    assert 0 < printed._size <= 4096
    assert sum(len(k) + len(v.json) for k, v in printed._kept.items()) == printed._size
    big = pb.Task(id="big", context_id="c")
    big.history.add(message_id="m").parts.add(text="x" * 2048)
    assert orjson.loads(printed(big).json) == codec.to_dict(big)
    assert big.SerializeToString() not in printed._kept  # over `largest`: printed, not kept
