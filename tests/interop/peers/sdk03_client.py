"""Run by the official a2a-sdk 0.3.x's own virtualenv (never imported by our tests).

Usage: python sdk03_client.py BASE_URL
Resolves our card with the 0.3 client (its card validator wants the 0.3
fields), then drives our server over JSON-RPC in A2A 0.3 and prints one JSON
object with what it saw; the pytest side checks it. The 0.3 client has no
calls for listing or deleting push configs: those two go as raw 0.3 JSON-RPC.
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.errors import A2AClientJSONRPCError
from a2a.types import (
    GetTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationConfig,
    Role,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TextPart,
)


def msg(text, task_id=None):
    return Message(role=Role.user, parts=[Part(root=TextPart(text=text))],
                   message_id=str(uuid.uuid4()), task_id=task_id)


def kind(event):
    """What the event was: the client hands (task so far, update) pairs, and the
    task object goes on changing, so only the update says what arrived."""
    if isinstance(event, Message):
        return "message"
    _, update = event
    if update is None:
        return "task"
    if update.kind == "status-update":
        return f"status-update:{update.status.state.value}:final={update.final}"
    return f"artifact-update:{update.artifact.parts[0].root.text}"


async def error_of(call):
    try:
        await call
    except A2AClientJSONRPCError as exc:
        return exc.error.code
    except Exception as exc:
        return type(exc).__name__
    return "no error"


async def main(base):
    seen = {}
    async with httpx.AsyncClient(timeout=30) as http:
        unary = await ClientFactory.connect(base, ClientConfig(
            streaming=False, supported_transports=["JSONRPC"], httpx_client=http))
        streaming = await ClientFactory.connect(base, ClientConfig(
            streaming=True, supported_transports=["JSONRPC"], httpx_client=http))
        card = await unary.get_card()
        seen["card"] = {"url": card.url, "preferred": card.preferred_transport,
                        "version": card.protocol_version}
        [(task, _)] = [e async for e in unary.send_message(msg("hello 0.3"))]
        seen["send"] = {"state": task.status.state.value, "kind": task.kind,
                        "artifact": task.artifacts[0].parts[0].root.text}
        [reply] = [e async for e in unary.send_message(msg("reply hey"))]
        seen["reply"] = {"kind": reply.kind, "text": reply.parts[0].root.text}
        events = [e async for e in streaming.send_message(msg("stream 2"))]
        seen["stream"] = [kind(e) for e in events]
        got = await unary.get_task(TaskQueryParams(id=task.id, history_length=0))
        seen["get"] = {"same_id": got.id == task.id, "history": len(got.history or [])}

        later = [e async for e in unary.send_message(
            msg("slow 60"), configuration=MessageSendConfiguration(blocking=False))]
        slow = later[0][0]
        watching = streaming.resubscribe(TaskIdParams(id=slow.id))
        first = await watching.__anext__()
        canceled = await unary.cancel_task(TaskIdParams(id=slow.id))
        rest = [e async for e in watching]
        seen["cancel"] = {"state": canceled.status.state.value, "first": kind(first),
                          "last": kind(rest[-1]) if rest else None}

        config = await unary.set_task_callback(TaskPushNotificationConfig(
            task_id=task.id, push_notification_config=PushNotificationConfig(
                url="https://hooks.example.com/a2a03", token="tok")))
        again = await unary.get_task_callback(GetTaskPushNotificationConfigParams(id=task.id))
        listed = (await http.post(base + "/", json={
            "jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/list",
            "params": {"id": task.id}})).json()
        deleted = (await http.post(base + "/", json={
            "jsonrpc": "2.0", "id": 2, "method": "tasks/pushNotificationConfig/delete",
            "params": {"id": task.id,
                       "pushNotificationConfigId": config.push_notification_config.id}})).json()
        seen["push"] = {"url": again.push_notification_config.url,
                        "token": again.push_notification_config.token,
                        "listed": [c["pushNotificationConfig"]["url"] for c in listed["result"]],
                        "deleted": deleted.get("result", "error")}
        seen["errors"] = {
            "get_unknown": await error_of(unary.get_task(TaskQueryParams(id="no-such-task"))),
            "cancel_done": await error_of(unary.cancel_task(TaskIdParams(id=task.id))),
        }
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
