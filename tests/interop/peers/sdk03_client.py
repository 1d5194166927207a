"""Run by the official a2a-sdk 0.3.x's own virtualenv (never imported by our tests).

Usage: python sdk03_client.py BASE_URL TRANSPORT   (JSONRPC, HTTP+JSON or GRPC)
Resolves our card with the 0.3 client (its card validator wants the 0.3
fields), picks the card's interface for TRANSPORT, drives our server in A2A
0.3 over it and prints one JSON object with what it saw; the pytest side
checks it. The 0.3 client has no calls for listing or deleting push configs:
those go as raw 0.3 calls on the same binding (JSON-RPC, /v1 REST, or the 0.3
gRPC stub the SDK ships). A push notification is received here, on a socket
of this process, and read with the SDK's own 0.3 Task model.
"""

import asyncio
import json
import sys

import grpc
import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.grpc import a2a_pb2, a2a_pb2_grpc
from a2a.types import (
    GetTaskPushNotificationConfigParams,
    MessageSendConfiguration,
    PushNotificationConfig,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
)
from sdk03_common import kind, msg


async def error_of(call):
    try:
        await call
    except A2AClientJSONRPCError as exc:
        return exc.error.code
    except A2AClientHTTPError as exc:
        return f"http:{exc.status_code}"
    except grpc.aio.AioRpcError as exc:
        return f"grpc:{exc.code().name}"
    except Exception as exc:
        return type(exc).__name__
    return "no error"


class Receiver:
    """A webhook on 127.0.0.1: keeps each POST's JSON body."""

    def __init__(self):
        self.bodies = []
        self.arrived = asyncio.Condition()

    async def start(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/hook"

    async def _serve(self, reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        body = json.loads(await reader.readexactly(length))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()
        async with self.arrived:
            self.bodies.append(body)
            self.arrived.notify_all()

    async def until(self, done):
        async with asyncio.timeout(20), self.arrived:
            await self.arrived.wait_for(lambda: any(done(b) for b in self.bodies))


class RawConfigs:
    """List and delete push configs with raw 0.3 calls on one binding."""

    def __init__(self, transport, http, base, card):
        self.transport, self.http, self.base = transport, http, base
        if transport == "GRPC":
            url = next(i.url for i in card.additional_interfaces if i.transport == "GRPC")
            self.stub = a2a_pb2_grpc.A2AServiceStub(grpc.aio.insecure_channel(url))

    async def list_urls(self, task_id):
        if self.transport == "JSONRPC":
            listed = (await self.http.post(self.base + "/", json={
                "jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/list",
                "params": {"id": task_id}})).json()["result"]
            return [c["pushNotificationConfig"]["url"] for c in listed]
        if self.transport == "HTTP+JSON":
            listed = (await self.http.get(
                f"{self.base}/v1/tasks/{task_id}/pushNotificationConfigs")).json()
            return [c["pushNotificationConfig"]["url"] for c in listed]
        listed = await self.stub.ListTaskPushNotificationConfig(
            a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task_id}"))
        return [c.push_notification_config.url for c in listed.configs]

    async def delete(self, task_id, config_id):
        if self.transport == "JSONRPC":
            return (await self.http.post(self.base + "/", json={
                "jsonrpc": "2.0", "id": 2, "method": "tasks/pushNotificationConfig/delete",
                "params": {"id": task_id, "pushNotificationConfigId": config_id}})).json()
        if self.transport == "HTTP+JSON":
            return (await self.http.delete(
                f"{self.base}/v1/tasks/{task_id}/pushNotificationConfigs/{config_id}")).json()
        await self.stub.DeleteTaskPushNotificationConfig(
            a2a_pb2.DeleteTaskPushNotificationConfigRequest(
                name=f"tasks/{task_id}/pushNotificationConfigs/{config_id}"))
        return {}


async def main(base, transport):
    seen = {}
    receiver = Receiver()
    hook = await receiver.start()
    async with httpx.AsyncClient(timeout=30) as http:
        def config(streaming):
            return ClientConfig(streaming=streaming, supported_transports=[transport],
                                httpx_client=http, grpc_channel_factory=grpc.aio.insecure_channel)

        unary = await ClientFactory.connect(base, config(False))
        streaming = await ClientFactory.connect(base, config(True))
        card = await unary.get_card()
        seen["card"] = {"url": card.url, "preferred": card.preferred_transport,
                        "version": card.protocol_version,
                        "transports": sorted(i.transport for i in card.additional_interfaces)}
        [(task, _)] = [e async for e in unary.send_message(msg("hello 0.3"))]
        seen["send"] = {"state": task.status.state.value, "kind": task.kind,
                        "artifact": task.artifacts[0].parts[0].root.text}
        [reply] = [e async for e in unary.send_message(msg("reply hey"))]
        seen["reply"] = {"kind": reply.kind, "text": reply.parts[0].root.text}
        events = [e async for e in streaming.send_message(msg("stream 2"))]
        seen["stream"] = [kind(e) for e in events]
        got = await unary.get_task(TaskQueryParams(id=task.id, history_length=1))
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

        [(asking, _)] = [e async for e in unary.send_message(msg("ask"))]
        made = await unary.set_task_callback(TaskPushNotificationConfig(
            task_id=asking.id, push_notification_config=PushNotificationConfig(
                id="hook-1", url=hook, token="tok")))
        again = await unary.get_task_callback(GetTaskPushNotificationConfigParams(
            id=asking.id, push_notification_config_id="hook-1"))
        raw = RawConfigs(transport, http, base, card)
        listed = await raw.list_urls(asking.id)
        [(answered, _)] = [e async for e in unary.send_message(msg("yes", task_id=asking.id))]
        await receiver.until(lambda b: b.get("status", {}).get("state") == "completed")
        pushed = [Task.model_validate(b) for b in receiver.bodies]  # the SDK's own 0.3 model
        deleted = await raw.delete(asking.id, made.push_notification_config.id)
        seen["push"] = {"url": again.push_notification_config.url == hook,
                        "token": again.push_notification_config.token,
                        "listed": [u == hook for u in listed],
                        "deleted": deleted.get("result", "error") if transport == "JSONRPC"
                        else deleted,
                        "answered": answered.status.state.value,
                        "delivered": {"kind": pushed[-1].kind, "id": pushed[-1].id == asking.id,
                                      "state": pushed[-1].status.state.value}}
        seen["errors"] = {
            "get_unknown": await error_of(unary.get_task(TaskQueryParams(id="no-such-task"))),
            "cancel_done": await error_of(unary.cancel_task(TaskIdParams(id=task.id))),
        }
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1], sys.argv[2]))
