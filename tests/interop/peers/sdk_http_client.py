"""Run by the official a2a-sdk's own virtualenv (never imported by our tests).

Usage: python sdk_http_client.py BASE_URL BINDING   (BINDING: JSONRPC or HTTP+JSON)
Resolves our agent card from BASE_URL, lets the SDK pick BINDING from it, runs
every operation and prints one JSON object with what it saw.
"""

import asyncio
import json
import sys

from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from sdk_common import error_of, kinds, msg, state


async def main(base, binding):
    def factory(streaming):
        return ClientFactory(ClientConfig(streaming=streaming,
                                          supported_protocol_bindings=[binding]))

    unary = await factory(False).create_from_url(base)
    streaming = await factory(True).create_from_url(base)
    seen = {"transport": type(unary._transport).__name__}

    [ev] = [e async for e in unary.send_message(pb.SendMessageRequest(message=msg("hello")))]
    task = ev.task
    seen["send"] = {"state": state(task), "artifact": task.artifacts[0].parts[0].text}
    [ev] = [e async for e in unary.send_message(pb.SendMessageRequest(message=msg("reply hey")))]
    seen["reply"] = ev.message.parts[0].text
    got = await unary.get_task(pb.GetTaskRequest(id=task.id, history_length=0))
    seen["get"] = {"same_id": got.id == task.id, "history": len(got.history)}
    request = pb.SendMessageRequest(message=msg("stream 3"))
    events = [e async for e in streaming.send_message(request)]
    seen["stream"] = kinds(events)
    listed = await unary.list_tasks(pb.ListTasksRequest(page_size=1, include_artifacts=True,
                                                        status=pb.TASK_STATE_COMPLETED))
    seen["list"] = {"count": len(listed.tasks), "total": listed.total_size,
                    "has_next": bool(listed.next_page_token),
                    "artifacts": len(listed.tasks[0].artifacts)}
    slow = pb.SendMessageRequest(message=msg("slow 60"),
                                 configuration=pb.SendMessageConfiguration(return_immediately=True))
    [ev] = [e async for e in unary.send_message(slow)]
    sub = streaming.subscribe(pb.SubscribeToTaskRequest(id=ev.task.id))
    first = await sub.__anext__()
    canceled = await unary.cancel_task(pb.CancelTaskRequest(id=ev.task.id))
    rest = [e async for e in sub]
    seen["cancel"] = {"state": state(canceled), "first": kinds([first])[0],
                      "last": kinds(rest)[-1]}
    # A task waiting for input is silent: the stream lives on keep-alives only.
    [ev] = [e async for e in unary.send_message(pb.SendMessageRequest(message=msg("ask")))]
    sub = streaming.subscribe(pb.SubscribeToTaskRequest(id=ev.task.id))
    first = await sub.__anext__()

    async def read_rest():
        return [e async for e in sub]

    reading = asyncio.ensure_future(read_rest())  # the client waits on the socket...
    await asyncio.sleep(6)  # ...longer than the SDK's 5 s read timeout
    await unary.send_message(pb.SendMessageRequest(message=msg("42", ev.task.id))).__anext__()
    rest = await reading
    seen["quiet_subscribe"] = kinds([first]) + kinds(rest)
    made = await unary.create_task_push_notification_config(pb.TaskPushNotificationConfig(
        task_id=task.id, url="https://hooks.example.com/a2a", token="tok"))
    got_cfg = await unary.get_task_push_notification_config(
        pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=made.id))
    listed_cfg = await unary.list_task_push_notification_configs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id))
    await unary.delete_task_push_notification_config(
        pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=made.id))
    after = await unary.list_task_push_notification_configs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id))
    seen["push"] = {"id_assigned": bool(made.id), "got": got_cfg.url,
                    "listed": len(listed_cfg.configs), "after_delete": len(after.configs)}
    seen["errors"] = {
        "get_unknown": await error_of(unary.get_task(pb.GetTaskRequest(id="no-such-task"))),
        "cancel_done": await error_of(unary.cancel_task(pb.CancelTaskRequest(id=task.id))),
        "follow_up_done": await error_of(
            unary.send_message(pb.SendMessageRequest(message=msg("x", task.id))).__anext__()),
        "subscribe_done": await error_of(
            streaming.subscribe(pb.SubscribeToTaskRequest(id=task.id)).__anext__()),
        "subscribe_unknown": await error_of(
            streaming.subscribe(pb.SubscribeToTaskRequest(id="no-such-task")).__anext__()),
    }
    await unary.close()
    await streaming.close()
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1], sys.argv[2]))
