"""What the adapters' tests share: a message to send, what came back, and two
turns of one conversation with the server restarted between them."""

from __future__ import annotations

import uuid
from typing import Any

import aiohttp

from a2a_grpc.generated import a2a_pb2 as pb
from tests.processes import reap, start_server

BINDINGS = ["grpc", "jsonrpc", "rest"]


def message(text: str, context_id: str = "", task_id: str = "",
            parts: list[pb.Part] | None = None) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
        parts=parts or [pb.Part(text=text)], context_id=context_id, task_id=task_id))


def answer_of(task: pb.Task) -> str:
    """The task's artifacts' text: one streamed in chunks holds a part per chunk."""
    return "".join(p.text for a in task.artifacts for p in a.parts)


async def sent(client: Any, request: pb.SendMessageRequest) -> pb.Task:
    answer = await client.call("SendMessage", request)
    assert isinstance(answer, pb.SendMessageResponse)
    return answer.task


async def across_a_restart(agent: str, store: str, first: str, second: str,
                           ) -> tuple[dict[str, Any], dict[str, Any]]:
    """`serve --agent AGENT --store STORE`: `first` sent, the server killed,
    started again, and `second` sent in the same conversation; both tasks,
    as JSON, with their artifacts' text under "text"."""
    args = ("serve", "--store", store, "--agent", agent)
    tasks: list[dict[str, Any]] = []
    for text in (first, second):
        server = await start_server(*args)
        try:
            tasks.append(await _send(server.url, text, tasks[0]["contextId"] if tasks else ""))
            tasks[-1]["output"] = server.output
        finally:
            reap(server.proc)
    return tasks[0], tasks[1]


async def _send(base: str, text: str, context_id: str) -> dict[str, Any]:
    body = {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": text}], "contextId": context_id}}
    async with aiohttp.ClientSession() as http, http.post(
            base + "/message:send", json=body, headers={"A2A-Version": "1.0"}) as resp:
        task: dict[str, Any] = (await resp.json())["task"]
    task["text"] = "".join(p["text"] for a in task["artifacts"] for p in a["parts"])
    return task
